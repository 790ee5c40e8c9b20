"""The credential ``fp mcp`` hands upstream: an agent's, never a person's.

A person's credential (``fp login``, or a person's token in ``FASTPAD_TOKEN``) would give the
model behind the bridge a person's reach: text below the agent trust floor, edges nobody
confirmed, direct writes. So on its first run the bridge asks the server for an agent token
delegated from that credential (``POST /v1/tokens/delegate``: an agent's default scopes the
person holds, no longer-lived than the login, revoked with it), keeps it beside the login in a
0600 file of its own (``brokered.json``, one entry per login), and says so once on stderr. An agent's credential is used as it is: the
server refuses to delegate from one, and that answer is how the bridge tells the two apart.
"""

from __future__ import annotations

import json
import socket
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from fastpad.cli.client import Api, RemoteProblem
from fastpad.cli.profiles import Profiles, Target, write_private

RENEW_BEFORE = timedelta(hours=1)  # a brokered token this close to expiry is replaced, not used


def agent_target(profiles: Profiles, target: Target) -> Target:
    """``target`` with the agent credential the bridge should act with."""
    if not target.token:
        return target
    kept = _kept(profiles).get(target.spool_key)
    if kept and datetime.fromisoformat(kept["expires_at"]) - RENEW_BEFORE > datetime.now(timezone.utc):
        return Target(target.url, kept["token"], target.profile)
    api = Api(target)
    try:
        minted = api.request("POST", "/v1/tokens/delegate", json={"label": f"fp mcp on {socket.gethostname()}"}).json()
    except RemoteProblem as problem:
        if problem.document.get("reason") == "person_only":
            return target  # already an agent's credential
        raise
    finally:
        api.close()
    _keep(profiles, target.spool_key, minted)
    print(f"fp mcp: acting as a new agent, {minted['id']} ({', '.join(minted['scopes'])}), delegated from your "
          f"login so the model behind this bridge reads at the agent trust floor and its changes wait for your "
          f"review. It expires {minted['expires_at']}; revoke it under Agents & tokens.", file=sys.stderr)
    return Target(target.url, minted["token"], target.profile)


def _path(profiles: Profiles) -> Path:
    return profiles.directory / "brokered.json"


def _kept(profiles: Profiles) -> dict[str, Any]:
    try:
        data = json.loads(_path(profiles).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _keep(profiles: Profiles, key: str, minted: dict[str, Any]) -> None:
    data = _kept(profiles)
    data[key] = {"token": minted["token"], "id": minted["id"], "expires_at": minted["expires_at"]}
    write_private(_path(profiles), json.dumps(data, indent=2) + "\n")
