"""Several workspaces over real HTTP (``fp serve`` on SQLite and PostgreSQL): a signed-in person
creates a workspace (its owner; audited there), lists theirs, and switches the browser session into
it — a new cookie and CSRF token, the old session ended; a tab naming its workspace in
``x-fastpad-workspace`` keeps acting there. No token reaches any of it; a person's CLI token stays in
its workspace even when its person belongs to the other. An existing account invited into a second
workspace joins with its own password; inviting a member of that workspace is still a 409."""

from __future__ import annotations

import uuid

import httpx

from .conftest import Server
from .test_team import accept, assert_problem, client_from, invite, sign_in

WORKSPACE_HEADER = "x-fastpad-workspace"


def key() -> str:
    return str(uuid.uuid4())


def new_note(client: httpx.Client, title: str, **headers: str) -> str:
    answer = client.post("/v1/notes", json={"title": title, "idempotencyKey": key()}, headers=headers)
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def titles(client: httpx.Client, **headers: str) -> set[str]:
    answer = client.get("/v1/notes", params={"limit": 200}, headers=headers)
    assert answer.status_code == 200, answer.text
    return {n["title"] for n in answer.json()["items"]}


def test_a_person_creates_lists_and_switches_workspaces(server: Server) -> None:
    with client_from(server, "127.0.0.41") as browser:
        sign_in(browser, server.owner_email, server.owner_password)
        home_title = f"Home {uuid.uuid4().hex[:6]}"
        new_note(browser, home_title)
        assert_problem(browser.post("/v1/workspaces", json={"name": "  ", "idempotencyKey": key()}), 422,
                       "validation-failed")
        created = browser.post("/v1/workspaces", json={"name": "Side project", "idempotencyKey": key()})
        assert created.status_code == 201, created.text
        side = created.json()
        assert side["name"] == "Side project" and side["role"] == "owner"
        mine = browser.get("/v1/workspaces").json()["items"]
        assert {(w["id"], w["role"], w["current"]) for w in mine} >= {(server.workspace_id, "owner", True),
                                                                     (side["id"], "owner", False)}

        old_cookie = browser.cookies["fastpad_session"]
        switched = browser.post("/v1/session/workspace", json={"workspace_id": side["id"]})
        assert switched.status_code == 201, switched.text
        assert switched.json()["workspace_id"] == side["id"]
        assert browser.cookies["fastpad_session"] != old_cookie
        browser.headers["x-csrf-token"] = switched.json()["csrf_token"]
        # The old session ended with the switch.
        with client_from(server, "127.0.0.41") as stale:
            stale.cookies.set("fastpad_session", old_cookie)
            assert_problem(stale.get("/v1/notes"), 401, "unauthenticated")

        # The new workspace is empty, and its log says who made it.
        assert home_title not in titles(browser)
        side_title = f"Side {uuid.uuid4().hex[:6]}"
        new_note(browser, side_title)
        assert titles(browser) == {side_title}
        made = browser.get("/v1/audit", params={"action": "workspace.created"}).json()["items"]
        assert [(e["target"], e["actor"]["kind"]) for e in made] == [(side["id"], "person")]
        # A tab opened in the first workspace names it and keeps working there.
        assert home_title in titles(browser, **{WORKSPACE_HEADER: server.workspace_id})
        assert side_title not in titles(browser, **{WORKSPACE_HEADER: server.workspace_id})
        # Your sessions are listed whichever workspace each acts in.
        sessions = browser.get("/v1/sessions").json()["items"]
        assert any(s["current"] and s["workspace_id"] == side["id"] for s in sessions)

        # Signing in again (another browser) opens the workspace last used.
        with client_from(server, "127.0.0.46") as other_browser:
            again = other_browser.post("/v1/session", json={"email": server.owner_email,
                                                            "password": server.owner_password})
            assert again.status_code == 201 and again.json()["workspace_id"] == side["id"]

        # A workspace that is not theirs, or none at all: one 404.
        assert_problem(browser.post("/v1/session/workspace", json={"workspace_id": str(_ulid())}), 404, "not-found")
        back = browser.post("/v1/session/workspace", json={"workspace_id": server.workspace_id})
        assert back.status_code == 201 and back.json()["workspace_id"] == server.workspace_id


def test_no_token_lists_creates_or_switches_workspaces(server: Server) -> None:
    with server.client(server.token("owner")) as cli:  # the owner's own CLI token
        for answer in (cli.get("/v1/workspaces"),
                       cli.post("/v1/workspaces", json={"name": "By a token", "idempotencyKey": key()}),
                       cli.post("/v1/session/workspace", json={"workspace_id": server.workspace_id})):
            assert_problem(answer, 403, "policy-denied")


def test_a_cli_token_stays_in_its_workspace_though_its_person_is_in_another(server: Server) -> None:
    """The owner creates a second workspace and writes there; their CLI token of the first, naming the
    second (where the owner is a member), gets nothing: the credential's workspace, never the person's."""
    with client_from(server, "127.0.0.42") as browser:
        sign_in(browser, server.owner_email, server.owner_password)
        other = browser.post("/v1/workspaces", json={"name": "Private", "idempotencyKey": key()}).json()["id"]
        secret_title = f"Private {uuid.uuid4().hex[:6]}"
        note_id = new_note(browser, secret_title, **{WORKSPACE_HEADER: other})
    with server.client(server.token("owner"), **{WORKSPACE_HEADER: other}) as cli:
        assert cli.get("/v1/notes").json()["items"] == []
        assert_problem(cli.get(f"/v1/notes/{note_id}"), 404, "not-found")
        assert_problem(cli.post("/v1/notes", json={"title": "x", "idempotencyKey": key()}), 404, "not-found")
    with server.client(server.token("owner")) as cli:
        assert_problem(cli.get(f"/v1/notes/{note_id}"), 404, "not-found")


def test_an_existing_account_joins_a_second_workspace_with_its_own_password(server: Server) -> None:
    with client_from(server, "127.0.0.43") as owner:
        sign_in(owner, server.owner_email, server.owner_password)
        email = f"two-{uuid.uuid4().hex[:6]}@example.com"
        with client_from(server, "127.0.0.44") as person:
            assert accept(person, invite(owner, email)["link"], "Two", "first long password").status_code == 201
        # The owner's second workspace invites the same person: no 409, since they are no member of it.
        second = owner.post("/v1/workspaces", json={"name": "Second", "idempotencyKey": key()}).json()["id"]
        owner.headers[WORKSPACE_HEADER] = second
        link = invite(owner, email)["link"]
        # A member of *that* workspace is still a 409.
        assert_problem(owner.post("/v1/invitations", json={"email": server.owner_email, "idempotencyKey": key()}),
                       409, "conflict")
        with client_from(server, "127.0.0.45") as person:
            assert_problem(accept(person, link, "Two", "not the password"), 401, "unauthenticated")
            joined = accept(person, link, "Two", "first long password")
            assert joined.status_code == 201 and joined.json()["workspace_id"] == second
            person.headers["x-csrf-token"] = joined.json()["csrf_token"]
            assert {w["id"] for w in person.get("/v1/workspaces").json()["items"]} == {server.workspace_id, second}


def test_removal_from_one_workspace_ends_the_sessions_that_could_act_there(server: Server) -> None:
    """A person in two workspaces, their session kept in the second, a tab naming the first: removed
    from the first, the tab's next request is a 401 ("Session ended"), not the first workspace gone
    empty — every session of theirs ends, since any of them could name it. Signing in again opens the
    workspace they still belong to, and naming the first answers nothing."""
    with client_from(server, "127.0.0.46") as owner:
        sign_in(owner, server.owner_email, server.owner_password)
        kept_title = f"Shared {uuid.uuid4().hex[:6]}"
        new_note(owner, kept_title)
        email = f"leaving-{uuid.uuid4().hex[:6]}@example.com"
        club = owner.post("/v1/workspaces", json={"name": "Club", "idempotencyKey": key()}).json()["id"]
        with client_from(server, "127.0.0.47") as person:
            assert accept(person, invite(owner, email)["link"], "Leaving", "leaving long password").status_code == 201
            person_id = person.get("/v1/account").json()["id"]
            owner.headers[WORKSPACE_HEADER] = club
            joined = accept(person, invite(owner, email)["link"], "Leaving", "leaving long password")
            assert joined.status_code == 201 and joined.json()["workspace_id"] == club
            person.headers["x-csrf-token"] = joined.json()["csrf_token"]
            # The tab opened in the first workspace names it on every request, and acts there.
            assert kept_title in titles(person, **{WORKSPACE_HEADER: server.workspace_id})

            del owner.headers[WORKSPACE_HEADER]
            removed = owner.delete(f"/v1/members/{person_id}")
            assert removed.status_code == 200, removed.text
            assert removed.json()["sessions_ended"] >= 1

            assert_problem(person.get("/v1/notes", headers={WORKSPACE_HEADER: server.workspace_id}), 401,
                           "unauthenticated")
            assert_problem(person.get("/v1/notes"), 401, "unauthenticated")

        with client_from(server, "127.0.0.48") as again:
            sign_in(again, email, "leaving long password")
            assert [w["id"] for w in again.get("/v1/workspaces").json()["items"]] == [club]
            assert again.get("/v1/notes", headers={WORKSPACE_HEADER: server.workspace_id}).json()["items"] == []


def _ulid() -> str:
    from fastpad.notes.ids import new_id
    return new_id()
