"""``fp login``: sign this terminal in with the device authorization flow (RFC 8628).

The terminal shows a code and a URL; a person signed in to Fastpad in a
browser opens it, reads what is asked for and approves. The terminal never
sees a password, and the workspace is the approving session's. The
credential is a person CLI token (90 days), stored under ``--profile``.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from typing import Any

import click

from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output
from fastpad.errors import ExpiredToken

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code"
CLIENT_ID = "fp"


@click.command(cls=FpCommand)
@click.option("--url", default=None, metavar="URL", help="The Fastpad server (default: $FASTPAD_URL, else the profile's).")
@click.option("--scope", "extra_scopes", multiple=True, metavar="SCOPE",
              help="Ask for SCOPE on top of the default grant (repeatable). turns:accept is granted only this way.")
def login(url: str | None, extra_scopes: tuple[str, ...]) -> None:
    """Sign this terminal in: approve the code it shows in a browser where you are signed in."""
    from fastpad.cli.client import Api
    from fastpad.cli.delivery import deliver
    from fastpad.cli.profiles import Profile, Profiles, Target
    from fastpad.security.device import DEFAULT_SCOPES
    from fastpad.security.scopes import ordered, parse_scopes

    out = Output()
    profiles = Profiles()
    name = settings.profile or profiles.default_name()
    existing = profiles.get(name)
    server = (url or os.environ.get("FASTPAD_URL") or (existing.url if existing else "")).rstrip("/")
    if not server:
        raise click.UsageError("which server? pass --url https://your-fastpad (or set FASTPAD_URL)")
    scopes = ordered(parse_scopes([*DEFAULT_SCOPES, *extra_scopes], field="--scope"))
    if settings.dry_run:
        out.result({"profile": name, "url": server, "scopes": scopes},
                   lambda _: out.text(f"Would ask {server} to sign in profile {name!r} with {', '.join(scopes)}"))
        return

    api = Api(Target(server, None, name))
    started = api.request("POST", "/v1/device/code", authenticated=False, data={
        "client_id": CLIENT_ID, "client_name": f"fp on {socket.gethostname()}"[:100], "scope": " ".join(scopes),
    }).json()
    _show_code(started)
    granted = _poll(api, started)
    profile = Profile(name=name, url=server, workspace_id=granted.get("workspace_id"), token_id=granted.get("token_id"),
                      scopes=str(granted.get("scope", "")).split(), expires_at=granted.get("expires_at"))
    profiles.save(profile, granted["access_token"])
    result = {"profile": name, "url": server, "workspace_id": profile.workspace_id, "token_id": profile.token_id,
              "scopes": profile.scopes, "expires_at": profile.expires_at, "stored_in": profile.credential}
    out.result(result, lambda r: out.text(
        f"Signed in to {server} as profile {name!r} (workspace {r['workspace_id']}); "
        f"scopes {', '.join(r['scopes'])}; expires {r['expires_at']}"))
    report = deliver(Api(Target(server, granted["access_token"], name)))
    if report.delivered:
        out.note(f"fp: delivered {len(report.delivered)} spooled capture(s)")


def _show_code(started: dict[str, Any]) -> None:
    """The code and where to enter it, on stderr: essential, so shown even with --quiet."""
    if settings.machine:
        keys = ("user_code", "verification_uri", "verification_uri_complete", "expires_in")
        sys.stderr.write(json.dumps({k: started.get(k) for k in keys}) + "\n")
    else:
        sys.stderr.write(
            f"To sign this terminal in, open {started['verification_uri']} in a browser where you are signed in\n"
            f"and enter the code  {started['user_code']}\n"
            f"(or open {started['verification_uri_complete']})\n"
            "Waiting for approval…\n"
        )
    sys.stderr.flush()


def _poll(api: Any, started: dict[str, Any]) -> dict[str, Any]:
    from fastpad.cli.client import RemoteProblem, ServerUnreachable

    interval = float(started.get("interval") or 5)
    deadline = time.monotonic() + float(started.get("expires_in") or 600)
    while True:
        time.sleep(interval)
        if time.monotonic() > deadline:
            raise ExpiredToken(detail="nobody approved the login in time", next_call="fp login")
        try:
            return api.request("POST", "/v1/device/token", authenticated=False, data={
                "grant_type": GRANT_TYPE, "device_code": started["device_code"], "client_id": CLIENT_ID,
            }).json()
        except ServerUnreachable:
            continue  # a blip while a person is approving: keep waiting until the code expires
        except RemoteProblem as problem:
            if problem.slug == "authorization-pending":
                continue
            if problem.slug in ("slow-down", "rate-limited"):
                interval = float(problem.extra.get("interval") or interval + 5)
                continue
            raise
