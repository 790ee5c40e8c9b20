"""A team over real HTTP (``fp serve`` on SQLite and PostgreSQL, the real ``fp``): invitations from
the API and from ``fp user invite``, the invitee's page, viewers refused on ops, proposal accepts and
typed writes with the role named, removal answered with 401 on the removed person's next request by
their session cookie, CLI token and delegated agent token, roles, sessions — and, on servers of their
own, open and closed sign-up, mail through a real local SMTP server, and the sign-in and
invitation-acceptance rate limits per address and per account.

Accepting an invitation and signing in are limited per client address, and the shared server serves
every test of the session: each test here speaks from a loopback address of its own (127.0.0.N)."""

from __future__ import annotations

import base64
import json
import threading
import uuid
from contextlib import closing
from pathlib import Path
from typing import Iterator

import httpx
import pytest
from aiosmtpd.controller import Controller

from .conftest import Server, free_port, own_server, run_fp, start_server, stop
from .helpers import assert_problem as assert_problem_at

SESSION_HEADER = "x-fastpad-session"


def assert_problem(response: httpx.Response, status: int, slug: str) -> dict:
    """``helpers.assert_problem`` against the server that answered."""
    url = response.request.url
    return assert_problem_at(response, status, slug, f"{url.scheme}://{url.host}:{url.port}")


def client_from(server: Server, address: str, **headers: str) -> httpx.Client:
    """A client whose requests come from ``address`` (any 127.0.0.0/8 address reaches the server)."""
    return httpx.Client(base_url=server.base_url, headers=headers, timeout=30.0,
                        transport=httpx.HTTPTransport(local_address=address))


def sign_in(client: httpx.Client, email: str, password: str) -> httpx.Client:
    answer = client.post("/v1/session", json={"email": email, "password": password})
    assert answer.status_code == 201, answer.text
    client.headers["x-csrf-token"] = answer.json()["csrf_token"]
    return client


def invite(owner: httpx.Client, email: str, role: str = "member") -> dict:
    answer = owner.post("/v1/invitations", json={"email": email, "role": role, "idempotencyKey": str(uuid.uuid4())})
    assert answer.status_code == 201, answer.text
    return answer.json()


def accept(client: httpx.Client, link: str, name: str, password: str = "a long enough pass") -> httpx.Response:
    return client.post("/v1/invitations:accept",
                       json={"token": link.rsplit("/", 1)[1], "display_name": name, "password": password})


def join(server: Server, owner: httpx.Client, address: str, role: str = "member") -> tuple[httpx.Client, str]:
    """A new person invited and signed in through the link: (their session client, their email)."""
    email = f"{role}-{uuid.uuid4().hex[:8]}@example.com"
    client = client_from(server, address)
    answer = accept(client, invite(owner, email, role)["link"], role.title())
    assert answer.status_code == 201, answer.text
    client.headers["x-csrf-token"] = answer.json()["csrf_token"]
    return client, email


@pytest.fixture(scope="module")
def owner_session(server: Server) -> Iterator[httpx.Client]:
    with client_from(server, "127.0.0.20") as client:
        yield sign_in(client, server.owner_email, server.owner_password)


def test_an_invitation_link_signs_the_invitee_in_once(server: Server, owner_session: httpx.Client) -> None:
    issued = invite(owner_session, "Bea.Invited@example.com")
    assert issued["link"].startswith(f"{server.base_url}/invite/fpi_") and issued["mailed"] is False
    assert issued["email"] == "bea.invited@example.com" and issued["status"] == "pending"
    with client_from(server, "127.0.0.21") as bea:
        page = bea.get(issued["link"].removeprefix(server.base_url))
        assert page.status_code == 200 and "bea.invited@example.com" in page.text
        joined = accept(bea, issued["link"], "Bea")
        assert joined.status_code == 201 and "fastpad_session" in joined.cookies
        assert bea.get("/v1/account").json()["role"] == "member"
        assert bea.get("/v1/account").json()["display_name"] == "Bea"
        assert bea.get("/v1/notes").status_code == 200
        again = accept(bea, issued["link"], "Bea")
        assert_problem(again, 404, "not-found")
        used_page = bea.get(issued["link"].removeprefix(server.base_url))
    # A revoked link and a made-up one show the very same page as the used one.
    revoked = invite(owner_session, "revoked@example.com")
    gone = owner_session.delete(f"/v1/invitations/{revoked['id']}", headers={"idempotency-key": str(uuid.uuid4())})
    assert gone.status_code == 200 and gone.json()["status"] == "revoked"
    with client_from(server, "127.0.0.21") as anyone:
        assert_problem(accept(anyone, revoked["link"], "R"), 404, "not-found")
        pages = {anyone.get(f"/invite/{secret}").text for secret in (
            revoked["link"].rsplit("/", 1)[1], "fpi_" + "A" * 43)}
    assert used_page.status_code == 404 and pages == {used_page.text}
    listed = {i["email"]: i["status"] for i in owner_session.get("/v1/invitations").json()["items"]}
    assert listed["bea.invited@example.com"] == "accepted" and listed["revoked@example.com"] == "revoked"
    # An existing member: 409.
    assert_problem(owner_session.post("/v1/invitations", json={"email": server.owner_email}), 409, "conflict")


def test_fp_user_invite_prints_a_working_link(server: Server) -> None:
    printed = json.loads(run_fp("user", "invite", "cli-invited@example.com", "--role", "viewer", "--data-dir",
                                str(server.data_dir), "--base-url", server.base_url, "--json").stdout)
    assert printed["role"] == "viewer" and printed["link"].startswith(f"{server.base_url}/invite/fpi_")
    text = run_fp("user", "invite", "cli-text@example.com", "--data-dir", str(server.data_dir),
                  "--base-url", server.base_url).stdout
    assert f"{server.base_url}/invite/fpi_" in text
    # The invitee's page, as a browser posts it: the form signs them in and goes to the app.
    with client_from(server, "127.0.0.22") as client:
        path = printed["link"].removeprefix(server.base_url)
        short = client.post(path, data={"display_name": "Cli", "password": "short"})
        assert short.status_code == 422 and "8 to 1024 characters" in short.text
        cross_site = client.post(path, data={"display_name": "Cli", "password": "a long enough pass"},
                                 headers={"sec-fetch-site": "cross-site"})
        assert cross_site.status_code == 403
        joined = client.post(path, data={"display_name": "Cli", "password": "a long enough pass"})
        assert joined.status_code == 303 and joined.headers["location"] == "/"
        assert client.get("/v1/account").json()["role"] == "viewer"
        assert client.get(path).status_code == 404


def test_a_viewer_is_refused_ops_accepts_and_typed_writes_with_the_role_named(
        server: Server, owner_session: httpx.Client, owner: httpx.Client) -> None:
    note = owner.post("/v1/notes", json={"title": "Shared plan", "blocks": [{"text": "one"}]}).json()
    agent = server.client(server.mint("notes:read,notes:propose")["token"])
    session = agent.post("/v1/agent-sessions").json()["session"]
    handles = agent.get(f"/v1/notes/{note['id']}/handles", headers={SESSION_HEADER: session}).json()
    proposed = agent.post(f"/v1/notes/{note['id']}/proposals", headers={SESSION_HEADER: session}, json={
        "ops": [{"op": "replace_block", "handle": handles["blocks"][0]["handle"], "text": "from the agent"}],
        "expected_frontier": handles["frontier"], "idempotency_key": str(uuid.uuid4())})
    assert proposed.status_code == 201, proposed.text
    turn_id = proposed.json()["id"]
    viewer, _ = join(server, owner_session, "127.0.0.23", role="viewer")
    with closing(viewer):
        assert viewer.get(f"/v1/notes/{note['id']}").status_code == 200
        refusals = {
            "ops": viewer.post(f"/v1/notes/{note['id']}/ops", json={
                "ops": base64.b64encode(b"\x00" * 8).decode(), "expectedFrontier": note["frontier"]}),
            "accept": viewer.post(f"/v1/turns/{turn_id}/accept", json={}),
            "typed": viewer.post("/v1/types", json={"name": "Meeting"}),
            "create": viewer.post("/v1/notes", json={"title": "mine"}),
        }
        for what, answer in refusals.items():
            problem = assert_problem(answer, 403, "policy-denied")
            assert problem["required_role"] == "member" and problem["role"] == "viewer", what
    agent.close()


def test_removal_answers_401_to_their_cookie_cli_token_and_delegated_agent_token(
        server: Server, owner_session: httpx.Client, owner: httpx.Client) -> None:
    member, email = join(server, owner_session, "127.0.0.24")
    with closing(member):
        mine = member.post("/v1/notes", json={"title": "Written by the member"})
        assert mine.status_code == 201, mine.text
        cli = server.mint("notes:read,notes:propose", "--person", email)["token"]
        with server.client(cli) as cli_client:
            delegated = cli_client.post("/v1/tokens/delegate", json={"label": "fp mcp"})
            assert delegated.status_code == 201, delegated.text
        person_id = member.get("/v1/account").json()["id"]
        credentials = {"session": member, "cli": server.client(cli), "agent": server.client(delegated.json()["token"])}
        for name, client in credentials.items():
            assert client.get("/v1/notes").status_code == 200, name
        # Only a signed-in owner or admin removes: not the member, not the owner's CLI token.
        assert_problem(member.delete(f"/v1/members/{person_id}"), 403, "policy-denied")
        assert_problem(owner.delete(f"/v1/members/{person_id}"), 403, "policy-denied")
        removed = owner_session.delete(f"/v1/members/{person_id}", headers={"idempotency-key": str(uuid.uuid4())})
        assert removed.status_code == 200, removed.text
        assert removed.json()["sessions_ended"] == 1 and len(removed.json()["tokens_revoked"]) == 2
        for name, client in credentials.items():
            assert_problem(client.get("/v1/notes"), 401, "unauthenticated")
        for client in list(credentials.values())[1:]:
            client.close()
    # Their note stays, attributed to them.
    kept = owner.get(f"/v1/notes/{mine.json()['id']}")
    assert kept.status_code == 200 and kept.json()["title"] == "Written by the member"
    assert person_id not in {m["id"] for m in owner_session.get("/v1/members").json()["items"]}


def test_roles_change_only_by_a_signed_in_owner_or_admin(server: Server, owner_session: httpx.Client,
                                                        owner: httpx.Client) -> None:
    member, _ = join(server, owner_session, "127.0.0.25")
    with closing(member):
        me = member.get("/v1/account").json()["id"]
        owner_id = owner_session.get("/v1/account").json()["id"]
        refused = assert_problem(member.patch(f"/v1/members/{owner_id}", json={"role": "viewer"}), 403, "policy-denied")
        assert refused["required_role"] == ["owner", "admin"]
        assert_problem(owner.patch(f"/v1/members/{me}", json={"role": "admin"}), 403, "policy-denied")
        key = str(uuid.uuid4())
        changed = owner_session.patch(f"/v1/members/{me}", json={"role": "admin", "idempotencyKey": key})
        assert changed.status_code == 200 and changed.json()["role"] == "admin"
        replay = owner_session.patch(f"/v1/members/{me}", json={"role": "admin", "idempotencyKey": key})
        assert replay.json() == changed.json()
        assert_problem(owner_session.patch(f"/v1/members/{me}", json={"role": "viewer", "idempotencyKey": key}),
                       409, "idempotency-conflict")
        listed = {m["id"]: m for m in owner_session.get("/v1/members").json()["items"]}
        assert listed[me]["role"] == "admin" and listed[me]["last_active_at"] is not None
        # An admin manages members, never an owner.
        only_owner = assert_problem(member.patch(f"/v1/members/{owner_id}", json={"role": "member"}),
                                    403, "policy-denied")
        assert only_owner["required_role"] == ["owner"]
        assert_problem(owner_session.patch(f"/v1/members/{owner_id}", json={"role": "member"}), 409, "conflict")


def test_your_account_password_name_and_sessions(server: Server, owner_session: httpx.Client) -> None:
    member, email = join(server, owner_session, "127.0.0.26")
    with closing(member), client_from(server, "127.0.0.26", **{"user-agent": "Elsewhere/1.0"}) as laptop:
        sign_in(laptop, email, "a long enough pass")
        sessions = member.get("/v1/sessions").json()["items"]
        assert {s["user_agent"] for s in sessions} >= {"Elsewhere/1.0"} and sum(s["current"] for s in sessions) == 1
        other = next(s for s in sessions if s["user_agent"] == "Elsewhere/1.0")
        assert member.delete(f"/v1/sessions/{other['id']}").status_code == 204
        assert_problem(laptop.get("/v1/notes"), 401, "unauthenticated")
        assert member.patch("/v1/account", json={"display_name": "Renamed"}).json()["display_name"] == "Renamed"
        wrong = member.post("/v1/account/password", json={"current_password": "nope", "new_password": "x" * 12})
        assert assert_problem(wrong, 422, "validation-failed")["field_errors"][0]["field"] == "current_password"
        weak = member.post("/v1/account/password", json={"current_password": "a long enough pass",
                                                          "new_password": email.upper()})
        assert_problem(weak, 422, "validation-failed")
        changed = member.post("/v1/account/password", json={"current_password": "a long enough pass",
                                                             "new_password": "a brand new password"})
        assert changed.status_code == 200 and member.get("/v1/notes").status_code == 200
        sign_in(laptop, email, "a brand new password")


# ---------------------------------------------------------------------- servers of their own


class Inbox:
    """What a real SMTP server (aiosmtpd) received; ``wait`` returns once a message arrives."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], str]] = []
        self._arrived = threading.Condition()

    async def handle_DATA(self, server, session, envelope) -> str:  # noqa: N802 (aiosmtpd's hook name)
        with self._arrived:
            self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content.decode()))
            self._arrived.notify_all()
        return "250 OK"

    def wait(self, count: int, timeout: float = 20.0) -> list[tuple[str, list[str], str]]:
        with self._arrived:
            assert self._arrived.wait_for(lambda: len(self.messages) >= count, timeout), "no mail arrived"
            return list(self.messages)


@pytest.fixture(scope="module")
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield inbox, port
    controller.stop()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def open_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                smtp: tuple[Inbox, int]) -> Iterator[Server]:
    """Sign-up open, and invitations mailed through the test's SMTP server."""
    with own_server(request, tmp_path_factory, "open", config={
            "signup": "open", "mail": {"host": "127.0.0.1", "port": smtp[1], "from": "fastpad@example.com"}}) as server:
        yield server


def test_an_invitation_is_mailed_through_the_configured_smtp_server(open_server: Server,
                                                                    smtp: tuple[Inbox, int]) -> None:
    inbox, _ = smtp
    before = len(inbox.messages)
    with client_from(open_server, "127.0.0.30") as owner:
        sign_in(owner, open_server.owner_email, open_server.owner_password)
        issued = invite(owner, f"mailed-{open_server.backend}@example.com")
    assert issued["mailed"] is True and issued["mail_error"] is None
    sender, recipients, content = inbox.wait(before + 1)[before]
    assert sender == "fastpad@example.com" and recipients == [f"mailed-{open_server.backend}@example.com"]
    assert issued["link"] in content
    with client_from(open_server, "127.0.0.31") as invitee:
        assert accept(invitee, issued["link"], "Mailed").status_code == 201


def test_open_sign_up_creates_an_account_and_a_workspace_of_its_own(open_server: Server) -> None:
    with client_from(open_server, "127.0.0.32") as page_user:
        assert 'href="/signup"' in page_user.get("/signin").text
        form = page_user.get("/signup")
        csrf = form.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        made = page_user.post("/signup", data={"email": f"page-{open_server.backend}@example.com", "csrf_token": csrf,
                                               "password": "a long enough pass", "display_name": "Page"})
        assert made.status_code == 303 and page_user.get("/v1/account").json()["role"] == "owner"
    with client_from(open_server, "127.0.0.32") as newcomer:
        answer = newcomer.post("/v1/signup", json={"email": "new@example.com", "password": "a long enough pass",
                                                   "display_name": "New", "workspace_name": "New's pad"})
        assert answer.status_code == 201, answer.text
        assert answer.json()["workspace_id"] != open_server.workspace_id
        assert newcomer.get("/v1/account").json()["role"] == "owner"
        assert newcomer.get("/v1/notes").json()["items"] == []
        assert_problem(newcomer.post("/v1/signup", json={"email": "new@example.com", "password": "another long one",
                                                         "display_name": "Again"}), 409, "conflict")
        assert_problem(newcomer.post("/v1/signup", json={"email": "weak@example.com", "password": "weak@example.com",
                                                         "display_name": "Weak"}), 422, "validation-failed")


def test_invite_only_and_closed_sign_up(server: Server, tmp_path: Path, owner_session: httpx.Client) -> None:
    with client_from(server, "127.0.0.33") as stranger:
        refused = stranger.post("/v1/signup", json={"email": "s@example.com", "password": "a long enough pass",
                                                    "display_name": "S"})
        assert assert_problem(refused, 403, "policy-denied")["reason"] == "signup_by_invitation"
        assert stranger.get("/signup").status_code == 403
    if server.backend != "sqlite":
        return  # a closed server is a setting of the surface; its storage is the invite test's
    closed = start_server(tmp_path, "sqlite", config={"signup": "closed"})
    try:
        refused = run_fp("user", "invite", "late@example.com", "--data-dir", str(closed.data_dir), "--json",
                         check=False)
        assert refused.returncode == 8 and json.loads(refused.stderr)["reason"] == "signup_closed"
        with client_from(closed, "127.0.0.34") as invitee:
            sign_in(invitee, closed.owner_email, closed.owner_password)
            problem = assert_problem(invitee.post("/v1/invitations", json={"email": "late@example.com"}),
                                     403, "policy-denied")
            assert problem["reason"] == "signup_closed"
            assert invitee.get("/invite/fpi_" + "C" * 43).status_code == 403
            assert_problem(invitee.post("/v1/signup", json={"email": "s@example.com", "password": "a long enough pass",
                                                            "display_name": "S"}), 403, "policy-denied")
    finally:
        stop(closed.process)


def test_sign_in_and_acceptance_are_limited_per_address_and_per_account(tmp_path: Path) -> None:
    limited = start_server(tmp_path, "sqlite", limits={"sign_in_per_window": 3, "join_per_window": 3})
    try:
        wrong = {"email": limited.owner_email, "password": "not the password"}
        with client_from(limited, "127.0.0.40") as first, client_from(limited, "127.0.0.41") as second:
            for _ in range(3):
                assert_problem(first.post("/v1/session", json=wrong), 401, "unauthenticated")
            per_address = assert_problem(first.post("/v1/session", json={**wrong, "email": "other@example.com"}),
                                         429, "rate-limited")
            assert per_address["retry_after_ms"] > 0
            # Another address, the same account: the account's own limit holds.
            per_account = assert_problem(second.post("/v1/session", json=wrong), 429, "rate-limited")
            assert 0 < per_account["retry_after_ms"] <= 60_000
            secret = {"token": "fpi_" + "B" * 43, "display_name": "G", "password": "a long enough pass"}
            for _ in range(3):
                assert_problem(second.post("/v1/invitations:accept", json=secret), 404, "not-found")
            assert_problem(second.post("/v1/invitations:accept", json=secret), 429, "rate-limited")
    finally:
        stop(limited.process)
