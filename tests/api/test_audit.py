"""The workspace audit log over real HTTP (``fp serve`` on SQLite and PostgreSQL): each audited
act, done through the real routes and the real ``fp``, appears in ``GET /v1/audit`` exactly
once with its actor; only a signed-in owner or admin reads it (a member and every token are
refused, naming the roles); pages are keyset and the filters narrow them.

Each backend gets a server of its own, so every entry in its log is one this module caused.
What HTTP cannot set up — a second and a third member — is made in-process on the server's
database, as tests/api/test_settings_tokens.py does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from collections import Counter
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from fastpad.deployment import open_deployment
from tests.api.conftest import FP, Server, own_server
from tests.api.helpers import assert_problem
from tests.importers.fixtures import OBSIDIAN, write_tree

SESSION = "x-fastpad-session"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"
MEMBER = ("member@example.com", "a member's long password")
ADMIN = ("admin@example.com", "an admin's long password")


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def audited(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of this module's own; its trash keeps nothing, so ``fp purge`` purges at once."""
    with own_server(request, tmp_path_factory, "audit", config={"trash_retention_days": 0}) as server:
        deployment = open_deployment(server.data_dir, pool_size=1)
        try:
            deployment.people.create_person(server.workspace_id, MEMBER[0], password=MEMBER[1], role="member")
            deployment.people.create_person(server.workspace_id, ADMIN[0], password=ADMIN[1], role="admin")
        finally:
            deployment.close()
        yield server


@contextmanager
def session_of(server: Server, email: str, password: str) -> Iterator[httpx.Client]:
    """A person signed in over HTTP: the session cookie, its CSRF token, and ``person_id``."""
    with httpx.Client(base_url=server.base_url, timeout=30.0) as client:
        answer = client.post("/v1/session", json={"email": email, "password": password})
        assert answer.status_code == 201, answer.text
        client.headers["x-csrf-token"] = answer.json()["csrf_token"]
        client.person_id = answer.json()["principal_id"]  # type: ignore[attr-defined]
        yield client


def fp(*args: str, home: Path, env: dict[str, str]) -> dict[str, Any]:
    """The real ``fp`` with a home of its own and the credential in the environment; its --json answer."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FASTPAD_")}
    clean.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_STATE_HOME": str(home / ".state"),
                  **env})
    done = subprocess.run([FP, *args, "--json"], capture_output=True, text=True, timeout=120, env=clean,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}


def whole_log(client: httpx.Client, **params: str) -> list[dict]:
    """Every entry matching ``params``, page by page (three to a page, to exercise the cursor)."""
    entries: list[dict] = []
    cursor = None
    while True:
        page = client.get("/v1/audit", params={**params, "limit": 3, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        entries += page.json()["items"]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            return entries


class Agent:
    def __init__(self, server: Server, scopes: str, *extra: str) -> None:
        self.minted = server.mint(scopes, *extra)
        self.client = server.client(self.minted["token"])
        self.session = self.client.post("/v1/agent-sessions").json()["session"]

    def append(self, note_id: str, text: str) -> dict:
        read = self.client.get(f"/v1/notes/{note_id}/handles", headers={SESSION: self.session}).json()
        body = {"ops": [{"op": "insert_after", "handle": read["blocks"][-1]["handle"], "text": text}],
                "expected_frontier": read["frontier"], "idempotency_key": str(uuid.uuid4())}
        answer = self.client.post(f"/v1/notes/{note_id}/proposals", json=body, headers={SESSION: self.session})
        assert answer.status_code in (200, 201), answer.text
        return answer.json()


def test_each_act_appears_once_with_its_actor(audited: Server, tmp_path: Path) -> None:
    server = audited
    started = datetime.now(timezone.utc)
    with httpx.Client(base_url=server.base_url, timeout=30.0) as stranger:
        wrong = stranger.post("/v1/session", json={"email": server.owner_email, "password": "not the password"})
        assert wrong.status_code == 401
    with session_of(server, server.owner_email, server.owner_password) as owner:
        _every_audited_act(server, owner, tmp_path, started)


def _every_audited_act(server: Server, owner: httpx.Client, tmp_path: Path, started: datetime) -> None:
    me = owner.person_id  # type: ignore[attr-defined]

    note = owner.post("/v1/notes", json={"title": "Audited", "blocks": [{"text": "First."}]}).json()["id"]
    proposer = Agent(server, "notes:read,notes:propose", "--label", "audit: proposer")
    granted = Agent(server, "notes:read,notes:propose,turns:accept", "--label", "audit: granted")
    automatic = Agent(server, "notes:read,notes:propose", "--label", "audit: automatic", "--auto-apply")
    waiting = proposer.append(note, "Second, by a proposer.")
    assert owner.post(f"/v1/turns/{waiting['id']}/accept").status_code == 200
    own = granted.append(note, "Third, accepted by its agent.")
    assert granted.client.post(f"/v1/turns/{own['id']}/accept").status_code == 200
    landed = automatic.append(note, "Fourth, applied at once.")
    assert owner.post(f"/v1/turns/{landed['id']}/revert").status_code == 200

    keys = owner.post("/v1/notes", json={"title": "Keys", "blocks": [{"text": f"The key is {AWS_KEY}."}]}).json()
    assert owner.put(f"/v1/notes/{keys['id']}/publication").status_code == 200
    shown = httpx.get(f"{server.base_url}/n/{keys['id']}", headers={"accept": "text/markdown"}).text
    placeholder = re.search(r"\[redacted:[a-z0-9-]+:[0-9a-f]+\]", shown).group(0)
    assert owner.post(f"/v1/notes/{keys['id']}/placeholders/reveal",
                      json={"placeholder": placeholder}).json()["value"] == AWS_KEY
    assert owner.delete(f"/v1/notes/{keys['id']}/publication").status_code == 200

    delegated = owner.post("/v1/tokens/delegate", json={"label": "audit: delegated"}).json()
    csrf = owner.headers["x-csrf-token"]
    assert owner.post(f"/settings/tokens/{delegated['id']}/revoke", data={"csrf_token": csrf}).status_code == 303
    server.fp("token", "revoke", "--data-dir", str(server.data_dir), proposer.minted["id"])
    with httpx.Client(base_url=server.base_url, timeout=30.0) as terminal:  # fp login's device flow
        grant = terminal.post("/v1/device/code", data={"client_id": "fp", "client_name": "audit laptop"}).json()
        assert owner.post("/device", data={"user_code": grant["user_code"], "csrf_token": csrf,
                                           "decision": "approve"}).status_code == 200
        assert terminal.post("/v1/device/token", data={"grant_type": DEVICE_GRANT,
                                                       "device_code": grant["device_code"]}).status_code == 200

    trashed = owner.post("/v1/notes", json={"title": "Gone soon", "blocks": [{"text": "x"}]}).json()["id"]
    assert owner.post(f"/v1/notes/{trashed}/trash").status_code == 200
    server.fp("purge", "--data-dir", str(server.data_dir))

    cli = server.mint("notes:read,notes:write,export", "--person", server.owner_email, "--label", "audit: cli")
    home, env = tmp_path / "home", {"FASTPAD_URL": server.base_url, "FASTPAD_TOKEN": cli["token"]}
    home.mkdir()
    imported = fp("import", str(write_tree(tmp_path / "Vault", OBSIDIAN)), home=home, env=env)["import"]
    fp("pull", str(tmp_path / "mirror"), home=home, env=env)

    log = whole_log(owner, since=(started - timedelta(seconds=1)).isoformat())
    assert [e["seq"] for e in log] == sorted((e["seq"] for e in log), reverse=True)  # newest first, no repeats
    seen = Counter((e["action"], e["actor"]["kind"], e["actor"]["id"], e["actor"]["token_id"], e["note_id"],
                    e["target"]) for e in log)
    person, operator, system = ("person", me, None), ("operator", None, None), ("system", None, None)

    def agent(minted: dict) -> tuple[str, str, str]:
        return ("agent", minted["agent_id"], minted["id"])

    expected = [
        ("session.sign_in_failed", "anonymous", None, None, None, me),
        ("session.signed_in", *person, None, me),
        ("token.minted", *operator, None, proposer.minted["id"]),
        ("token.minted", *operator, None, automatic.minted["id"]),
        ("token.minted", *person, None, delegated["id"]),
        ("token.minted", *operator, None, cli["id"]),
        ("turn.accepted", *person, note, waiting["id"]),
        ("turn.accepted", *agent(granted.minted), note, own["id"]),
        ("turn.auto_applied", *agent(automatic.minted), note, landed["id"]),
        ("turn.reverted", *person, note, landed["id"]),
        ("note.published", *person, keys["id"], keys["id"]),
        ("placeholder.revealed", *person, keys["id"], keys["blocks"][0]["id"]),
        ("note.unpublished", *person, keys["id"], keys["id"]),
        ("token.revoked", *person, None, delegated["id"]),
        ("token.revoked", *operator, None, proposer.minted["id"]),
        ("note.purged", *system, trashed, trashed),
        ("import.started", "person", me, cli["id"], None, imported["id"]),
        ("import.finished", "person", me, cli["id"], None, imported["id"]),
        ("workspace.exported", "person", me, cli["id"], None, None),
    ]
    for entry in expected:
        assert seen[entry] == 1, (entry, log)
    by_action = Counter(e["action"] for e in log)
    assert by_action["session.signed_in"] == 1 and by_action["turn.accepted"] == 2 and by_action["note.purged"] == 1
    device = [e for e in log if e["action"] == "token.minted" and e["details"]["label"] == "fp login: audit laptop"]
    assert [(e["actor"]["kind"], e["actor"]["id"], e["details"]["kind"]) for e in device] == [("person", me, "person")]
    finish = next(e for e in log if e["action"] == "import.finished")
    assert finish["details"] == {"status": "completed"}
    assert next(e for e in log if e["action"] == "workspace.exported")["details"]["notes"] >= 3
    assert AWS_KEY not in json.dumps(log)  # a reveal is logged, never its value


def test_only_a_signed_in_owner_or_admin_reads_it(audited: Server) -> None:
    server = audited
    with session_of(server, *ADMIN) as admin:
        assert admin.get("/v1/audit").status_code == 200
    with session_of(server, *MEMBER) as member:
        refused = assert_problem(member.get("/v1/audit"), 403, "policy-denied", server.base_url)
        assert refused["required_role"] == ["owner", "admin"] and refused["role"] == "member"
        assert "owner or admin" in refused["detail"]
    tokens = [server.mint("notes:read,notes:propose,notes:write,notes:delete,search:read,export,schema:write",
                          "--label", "audit: every scope")["token"],
              server.mint("notes:read,notes:write,export", "--person", server.owner_email,
                          "--label", "audit: owner's cli")["token"]]
    for token in tokens:
        with server.client(token) as client:
            refused = assert_problem(client.get("/v1/audit"), 403, "policy-denied", server.base_url)
            assert refused["reason"] == "person_only"


def test_pages_and_filters(audited: Server) -> None:
    server = audited
    with session_of(server, server.owner_email, server.owner_password) as owner:
        _pages_and_filters(server, owner)


def _pages_and_filters(server: Server, owner: httpx.Client) -> None:
    everything = whole_log(owner)
    first = owner.get("/v1/audit", params={"limit": 200}).json()
    assert [e["seq"] for e in first["items"]] == [e["seq"] for e in everything] and first["next_cursor"] is None
    two = owner.get("/v1/audit", params={"limit": 2}).json()
    after = owner.get("/v1/audit", params={"limit": 2, "cursor": two["next_cursor"]}).json()
    assert [e["seq"] for e in two["items"] + after["items"]] == [e["seq"] for e in everything[:4]]

    mints = whole_log(owner, action="token.minted")
    assert mints and {e["action"] for e in mints} == {"token.minted"}
    assert len(mints) == sum(e["action"] == "token.minted" for e in everything)
    mine = whole_log(owner, actor=owner.person_id)  # type: ignore[attr-defined]
    assert mine and all(owner.person_id in (e["actor"]["id"], e["actor"]["token_id"])  # type: ignore[attr-defined]
                        for e in mine)
    a_note = next(e["note_id"] for e in everything if e["note_id"])
    about = whole_log(owner, note_id=a_note)
    assert about and {e["note_id"] for e in about} == {a_note}

    middle = everything[len(everything) // 2]["at"]
    since, until = whole_log(owner, since=middle), whole_log(owner, until=middle)
    assert since and until and {e["seq"] for e in since} | {e["seq"] for e in until} == {e["seq"] for e in everything}
    assert not {e["seq"] for e in since} & {e["seq"] for e in until}

    for params in ({"action": "note.nothing"}, {"cursor": "not-a-cursor"}, {"limit": 0},
                   {"since": "2026-12-07T00:00:00"}, {"since": "2026-12-07T00:00:00Z", "until": "2026-12-06T00:00:00Z"}):
        assert_problem(owner.get("/v1/audit", params=params), 422, "validation-failed", server.base_url)
