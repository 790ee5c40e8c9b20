"""Settings → Agents & tokens over real HTTP (``fp serve`` on SQLite and PostgreSQL), driven like a
browser without JavaScript: the page lists the live tokens a signed-in person may manage (never a
secret), and its Revoke form — CSRF-checked — stops a token at once and refuses any token the person
may not manage exactly like an unknown one.

Tokens are minted with ``fp token create``; what HTTP cannot set up — a second member, another
workspace, a delegated token — is made in-process on the server's own database."""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Iterator

import httpx
import pytest

from fastpad.deployment import Deployment, open_deployment
from fastpad.notes.ids import new_id
from fastpad.store import utcnow

from .conftest import Server
from .test_turns import csrf_of

COLLEAGUE_EMAIL = "colleague@example.com"
COLLEAGUE_PASSWORD = "colleague's long password"


@dataclass
class Others:
    """What only the server's database can set up: a second member and another workspace's token."""

    deployment: Deployment
    other_workspace_token: dict  # {"id", "token"}


@pytest.fixture(scope="module")
def others(server: Server) -> Iterator[Others]:
    deployment = open_deployment(server.data_dir, pool_size=1)
    try:
        deployment.people.create_person(server.workspace_id, COLLEAGUE_EMAIL, password=COLLEAGUE_PASSWORD)
        other_workspace = new_id()
        with deployment.store.write(other_workspace) as tx:
            tx.insert_workspace("elsewhere", utcnow())
        plaintext, info = deployment.tokens.create(other_workspace, scopes="notes:read", label="settings: elsewhere")
        yield Others(deployment, {"id": info.id, "token": plaintext})
    finally:
        deployment.close()


@contextmanager
def sign_in(server: Server, email: str, password: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=10.0) as client:
        form = client.get("/signin", params={"next": "/settings/tokens"})
        done = client.post("/signin", data={"email": email, "password": password, "csrf_token": csrf_of(form),
                                            "next": "/settings/tokens"})
        assert done.status_code == 303 and done.headers["location"] == "/settings/tokens", done.text
        yield client


@pytest.fixture(scope="module")
def person(server: Server) -> Iterator[httpx.Client]:
    """The owner, signed in through /signin (sign-ins are rate limited: one per server)."""
    with sign_in(server, server.owner_email, server.owner_password) as client:
        yield client


def works(server: Server, token: str) -> int:
    with server.client(token) as client:
        return client.get("/v1/notes").status_code


def row_of(page: httpx.Response, label: str) -> str:
    """The page's table row for the token labelled ``label``."""
    rows = [row for row in re.findall(r"<tr>.*?</tr>", page.text) if f"<td>{label}" in row]
    assert len(rows) == 1, page.text
    return rows[0]


def revoke(browser: httpx.Client, token_id: str, **form: str) -> httpx.Response:
    return browser.post(f"/settings/tokens/{token_id}/revoke", data=form)


# ---------------------------------------------------------------------- the list


def test_the_page_lists_every_live_token_the_person_manages_and_never_a_secret(
        server: Server, owner: httpx.Client, person: httpx.Client, others: Others) -> None:
    note = owner.post("/v1/notes", json={"title": "Scoped", "blocks": [{"text": "x"}]}).json()["id"]
    agent = server.mint("notes:read,notes:propose", "--label", "settings: scoped agent", "--notes", note,
                        "--auto-apply")
    accepting = server.mint("notes:read,notes:propose,turns:accept", "--label", "settings: accepting agent")
    cli = server.mint("notes:read", "--person", server.owner_email, "--label", "settings: my cli")
    colleague = server.mint("notes:read", "--person", COLLEAGUE_EMAIL, "--label", "settings: colleague cli")
    revoked = server.mint("notes:read", "--label", "settings: revoked before")
    server.fp("token", "revoke", "--data-dir", str(server.data_dir), revoked["id"])
    assert works(server, agent["token"]) == 200  # now it has a last use

    page = person.get("/settings/tokens")
    assert page.status_code == 200 and page.headers["x-frame-options"] == "DENY"
    assert page.headers["cache-control"] == "no-store"
    scoped = row_of(page, "settings: scoped agent")
    assert f"<code>{agent['prefix']}…</code>" in scoped and agent["prefix"].startswith("fpk_live_")
    assert "notes:read, notes:propose" in scoped and "1 note(s)" in scoped and "auto_apply" in scoped
    assert "never" not in scoped and utcnow().strftime("%Y-%m-%d") in scoped  # last used today
    assert f'action="/settings/tokens/{agent["id"]}/revoke"' in scoped
    assert "turns:accept" in row_of(page, "settings: accepting agent").split("</td>")[4]
    own = row_of(page, "settings: my cli")
    assert "the whole workspace" in own and "never" in own
    assert page.text.index("Your CLI tokens") < page.text.index("settings: my cli")
    for absent in ("settings: colleague cli", "settings: revoked before", "settings: elsewhere"):
        assert absent not in page.text
    for secret in (agent, accepting, cli, colleague, revoked):
        assert secret["token"] not in page.text and secret["token"][len(secret["prefix"]):] not in page.text
    assert 'href="/agent-activity"' in page.text
    assert 'href="/settings/tokens"' in person.get("/agent-activity").text


def test_a_member_sees_the_agents_and_their_own_cli_tokens_not_anothers(
        server: Server, person: httpx.Client, others: Others) -> None:
    mine = server.mint("notes:read", "--person", server.owner_email, "--label", "settings: owner only")
    theirs = server.mint("notes:read", "--person", COLLEAGUE_EMAIL, "--label", "settings: colleague only")
    agent = server.mint("notes:read", "--label", "settings: shared agent")
    with sign_in(server, COLLEAGUE_EMAIL, COLLEAGUE_PASSWORD) as colleague:
        page = colleague.get("/settings/tokens")
        assert "settings: colleague only" in page.text and "settings: shared agent" in page.text
        assert "settings: owner only" not in page.text
        refused = revoke(colleague, mine["id"], csrf_token=csrf_of(page))
        assert refused.status_code == 404 and "Revoked" not in refused.text
        assert works(server, mine["token"]) == 200
        done = revoke(colleague, theirs["id"], csrf_token=csrf_of(page))
        assert done.status_code == 303
        assert works(server, theirs["token"]) == 401
    assert works(server, agent["token"]) == 200


# ---------------------------------------------------------------------- revoking


def test_revoking_stops_the_token_and_its_delegates_at_once_and_the_session_keeps_working(
        server: Server, person: httpx.Client, others: Others) -> None:
    agent = server.mint("notes:read,notes:propose", "--label", "settings: to revoke")
    delegate_secret, delegate = others.deployment.tokens.create(
        server.workspace_id, scopes="notes:read", parent_token_id=agent["id"], label="settings: its delegate")
    assert works(server, agent["token"]) == 200 and works(server, delegate_secret) == 200

    page = person.get("/settings/tokens")
    done = revoke(person, agent["id"], csrf_token=csrf_of(page))
    assert done.status_code == 303 and done.headers["location"] == f"/settings/tokens?revoked={agent['id']}"
    assert works(server, agent["token"]) == 401 and works(server, delegate_secret) == 401

    confirmed = person.get(done.headers["location"])
    assert confirmed.status_code == 200
    notice = re.search(r'<p class="notice" role="status">(.*?)</p>', confirmed.text).group(1)
    assert "Revoked settings: to revoke" in notice and f"{agent['prefix']}…" in notice
    assert "1 token(s) delegated from it: settings: its delegate" in notice and f"{delegate.prefix}…" in notice
    rows = re.findall(r"<tr>.*?</tr>", confirmed.text)
    assert not any("settings: to revoke" in row or "settings: its delegate" in row for row in rows)

    own = server.mint("notes:read", "--person", server.owner_email, "--label", "settings: my own cli")
    assert revoke(person, own["id"], csrf_token=csrf_of(confirmed)).status_code == 303
    assert works(server, own["token"]) == 401
    assert person.get("/settings/tokens").status_code == 200  # a session is not a token
    assert person.get("/v1/notes").status_code == 200


def test_a_revoke_without_the_right_csrf_token_or_from_another_site_changes_nothing(
        server: Server, person: httpx.Client) -> None:
    agent = server.mint("notes:read", "--label", "settings: csrf target")
    csrf = csrf_of(person.get("/settings/tokens"))
    assert revoke(person, agent["id"], note="no csrf token").status_code == 403
    assert revoke(person, agent["id"], csrf_token="forged").status_code == 403
    elsewhere = person.post(f"/settings/tokens/{agent['id']}/revoke", data={"csrf_token": csrf},
                            headers={"origin": "https://evil.example"})
    assert elsewhere.status_code == 403
    as_json = person.post(f"/settings/tokens/{agent['id']}/revoke", json={"csrf_token": csrf})
    assert as_json.status_code == 422
    assert works(server, agent["token"]) == 200
    assert "settings: csrf target" in person.get("/settings/tokens").text


def test_tokens_the_person_may_not_manage_are_refused_like_unknown_ones(
        server: Server, person: httpx.Client, others: Others) -> None:
    theirs = server.mint("notes:read", "--person", COLLEAGUE_EMAIL, "--label", "settings: not the owners")
    csrf = csrf_of(person.get("/settings/tokens"))
    for token_id in (theirs["id"], others.other_workspace_token["id"], new_id(), "not-a-token-id"):
        refused = revoke(person, token_id, csrf_token=csrf)
        assert refused.status_code == 404, token_id
        assert f"token {token_id} not found" in refused.text and 'href="/settings/tokens"' in refused.text
    assert works(server, theirs["token"]) == 200
    assert works(server, others.other_workspace_token["token"]) == 200
    # A hand-made confirmation link names nothing it may not: the page lists, and confirms nothing.
    page = person.get("/settings/tokens", params={"revoked": theirs["id"]})
    assert page.status_code == 200 and "Revoked" not in page.text and "settings: not the owners" not in page.text


# ---------------------------------------------------------------------- who reaches the page


def test_signed_out_requests_go_to_sign_in_and_revoke_nothing(server: Server) -> None:
    agent = server.mint("notes:read", "--label", "settings: signed out")
    with httpx.Client(base_url=server.base_url, timeout=10.0) as anonymous:
        page = anonymous.get("/settings/tokens")
        assert page.status_code == 303 and page.headers["location"] == "/signin?next=/settings/tokens"
        attempt = anonymous.post(f"/settings/tokens/{agent['id']}/revoke", data={"csrf_token": "x"})
        assert attempt.status_code == 303 and attempt.headers["location"].startswith("/signin?next=")
    assert works(server, agent["token"]) == 200


def test_an_agent_token_cannot_reach_the_page_it_is_for_a_signed_in_person(server: Server) -> None:
    agent = server.mint("notes:read,notes:propose", "--label", "settings: bearer")
    victim = server.mint("notes:read", "--label", "settings: bearer's target")
    with server.client(agent["token"]) as bearer:
        page = bearer.get("/settings/tokens")
        assert page.status_code == 303 and page.headers["location"] == "/signin?next=/settings/tokens"
        assert bearer.post(f"/settings/tokens/{victim['id']}/revoke", data={"csrf_token": "x"}).status_code == 303
    assert works(server, victim["token"]) == 200


# ---------------------------------------------------------------------- minting


def test_minting_shows_the_secret_once_and_grants_only_what_was_ticked(server: Server, person: httpx.Client) -> None:
    page = person.get("/settings/tokens")
    form = re.search(r'<form method="post" action="/settings/tokens">.*?</form>', page.text).group(0)
    ticked = set(re.findall(r'name="scope" value="([^"]+)" checked', form))
    assert ticked == {"notes:read", "notes:propose", "search:read", "graph:read"}
    assert 'value="turns:accept">' in form and 'name="auto_apply" value="on">' in form  # neither pre-ticked

    minted = person.post("/settings/tokens", data={
        "csrf_token": csrf_of(page), "label": "settings: minted <here>", "scope": ["notes:read", "turns:accept"],
        "expires": "7d", "auto_apply": "on",
    })
    assert minted.status_code == 200 and minted.headers["cache-control"] == "no-store"
    secret = re.search(r'<code class="secret">(fpk_live_[0-9A-Za-z]{43})</code>', minted.text).group(1)
    assert "shown once" in minted.text and minted.text.count(secret) == 1
    row = row_of(minted, "settings: minted &lt;here&gt;")
    assert "notes:read, turns:accept" in row and "auto_apply, turns:accept" in row and "never" in row
    assert works(server, secret) == 200

    agents = {a["name"]: a for a in person.get("/v1/agents").json()["items"]}
    token = agents["settings: minted <here>"]["tokens"][0]
    assert token["scopes"] == ["notes:read", "turns:accept"] and token["auto_apply"] is True
    assert token["note_ids"] is None and token["person_id"] is None
    lifetime = datetime.fromisoformat(token["expires_at"]) - utcnow()
    assert timedelta(days=6, hours=23) < lifetime <= timedelta(days=7)

    listed = person.get("/settings/tokens")
    assert secret not in listed.text and secret[len(token["prefix"]):] not in listed.text
    assert "settings: minted &lt;here&gt;" in listed.text


def test_a_mint_without_csrf_or_scopes_or_a_valid_expiry_mints_nothing(server: Server, person: httpx.Client) -> None:
    csrf = csrf_of(person.get("/settings/tokens"))
    before = len(person.get("/v1/agents").json()["items"])
    forged = person.post("/settings/tokens", data={"csrf_token": "forged", "label": "settings: forged",
                                                   "scope": "notes:read", "expires": "7d"})
    assert forged.status_code == 403
    no_scope = person.post("/settings/tokens", data={"csrf_token": csrf, "label": "settings: none", "expires": "7d"})
    assert no_scope.status_code == 422 and "at least one scope" in no_scope.text
    too_long = person.post("/settings/tokens", data={"csrf_token": csrf, "label": "settings: forever",
                                                     "scope": "notes:read", "expires": "400d"})
    assert too_long.status_code == 422 and "365 days" in too_long.text
    unknown = person.post("/settings/tokens", data={"csrf_token": csrf, "label": "settings: unknown",
                                                    "scope": "admin", "expires": "7d"})
    assert unknown.status_code == 422 and "admin" in unknown.text
    assert not any('class="secret"' in refused.text for refused in (forged, no_scope, too_long, unknown))
    assert len(person.get("/v1/agents").json()["items"]) == before
