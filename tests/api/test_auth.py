"""Credentials over HTTP: the 401 challenge, scopes, the workspace header, and web sign-in with CSRF."""

from __future__ import annotations

import httpx

from tests.api.helpers import assert_problem
from fastpad.notes import new_id


def test_no_credential_is_a_401_challenge_pointing_at_the_metadata(server):
    response = httpx.get(f"{server.base_url}/v1/notes")
    body = assert_problem(response, 401, "unauthenticated", server.base_url)
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{server.base_url}/.well-known/oauth-protected-resource"' in challenge
    assert httpx.get(body["type"]).status_code == 200, "the type URI resolves"


def test_a_rejected_token_is_a_401_invalid_token(server):
    response = httpx.get(f"{server.base_url}/v1/notes", headers={"authorization": "Bearer fpk_live_notreal"})
    assert_problem(response, 401, "unauthenticated", server.base_url)
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_revoked_token_stops_working(server):
    minted = server.mint("notes:read", "--label", "tests: to revoke")
    with server.client(minted["token"]) as client:
        assert client.get("/v1/notes").status_code == 200
        server.fp("token", "revoke", "--data-dir", str(server.data_dir), minted["id"])
        assert_problem(client.get("/v1/notes"), 401, "unauthenticated", server.base_url)


def test_missing_scope_is_403_naming_it(server, owner):
    with server.client(server.token("reader")) as reader:
        response = reader.post("/v1/notes", json={"title": "no"})
    body = assert_problem(response, 403, "insufficient-scope", server.base_url)
    assert "notes:write" in body["missing"]
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]


def test_the_agent_directory_is_refused_to_a_note_scoped_credential_rather_than_shown_in_part(server, owner):
    inside = owner.post("/v1/notes", json={"title": "the scoped tokens' note"}).json()["id"]
    scoped_agent = server.mint("notes:read", "--notes", inside, "--label", "tests: directory scoped agent")
    scoped_person = server.mint("notes:read", "--person", server.owner_email, "--notes", inside,
                                "--label", "tests: directory scoped person")
    with server.client(scoped_person["token"]) as scoped:
        body = assert_problem(scoped.get("/v1/agents"), 403, "out-of-scope", server.base_url)
    assert "set of notes" in body["detail"]
    listed = {t["id"]: t for a in owner.get("/v1/agents").json()["items"] for t in a["tokens"]}
    assert listed[scoped_agent["id"]]["note_ids"] == [inside]


def test_workspace_header_naming_another_workspace_returns_nothing(server, owner):
    note = owner.post("/v1/notes", json={"title": "mine"}).json()
    other = {"x-fastpad-workspace": new_id()}
    listed = owner.get("/v1/notes", headers=other)
    assert listed.status_code == 200 and listed.json() == {"items": [], "next_cursor": None}
    assert_problem(owner.get(f"/v1/notes/{note['id']}", headers=other), 404, "not-found", server.base_url)
    assert_problem(owner.post(f"/v1/notes/{note['id']}/archive", headers=other), 404, "not-found", server.base_url)
    assert_problem(owner.post("/v1/notes", json={"title": "x"}, headers=other), 404, "not-found", server.base_url)
    own = {"x-fastpad-workspace": server.workspace_id}
    assert owner.get(f"/v1/notes/{note['id']}", headers=own).status_code == 200
    bad = owner.get("/v1/notes", headers={"x-fastpad-workspace": "not-a-ulid"})
    assert assert_problem(bad, 422, "validation-failed", server.base_url)["field_errors"][0]["code"] == "ulid"


def test_session_sign_in_sets_a_safe_cookie_and_enforces_csrf(server):
    with server.client() as client:
        wrong = client.post("/v1/session", json={"email": server.owner_email, "password": "wrong"})
        assert_problem(wrong, 401, "unauthenticated", server.base_url)

        signed_in = client.post("/v1/session", json={"email": server.owner_email, "password": server.owner_password})
        assert signed_in.status_code == 201, signed_in.text
        csrf = signed_in.json()["csrf_token"]
        assert signed_in.json()["workspace_id"] == server.workspace_id
        cookie = signed_in.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie
        assert "secure" not in cookie, "plain-http base URL: not Secure"
        assert csrf not in signed_in.headers["set-cookie"], "the CSRF token is never in the cookie"

        assert client.get("/v1/notes").status_code == 200, "the cookie authenticates reads"
        refused = client.post("/v1/notes", json={"title": "from the web"})
        assert_problem(refused, 403, "policy-denied", server.base_url)
        forged = client.post("/v1/notes", json={"title": "from the web"}, headers={"x-csrf-token": "forged"})
        assert_problem(forged, 403, "policy-denied", server.base_url)
        created = client.post("/v1/notes", json={"title": "from the web"}, headers={"x-csrf-token": csrf})
        assert created.status_code == 201, created.text
        assert all(b["origin"] == "human_typed" for b in created.json()["blocks"])

        assert_problem(client.delete("/v1/session"), 403, "policy-denied", server.base_url)
        assert client.delete("/v1/session", headers={"x-csrf-token": csrf}).status_code == 204
        cookie_jar_after = dict(client.cookies)
        assert not cookie_jar_after.get("fastpad_session")
        stale = httpx.get(f"{server.base_url}/v1/notes",
                          cookies={"fastpad_session": signed_in.cookies["fastpad_session"]})
        assert_problem(stale, 401, "unauthenticated", server.base_url)


def test_the_session_cookie_is_secure_behind_an_https_base_url(server):
    """In-process (same deployment, other base URL): the one rule a plain-http server cannot show."""
    from starlette.testclient import TestClient

    from fastpad.api import create_app
    from fastpad.deployment import open_deployment

    deployment = open_deployment(server.data_dir, pool_size=1)
    try:
        app = create_app(deployment, base_url="https://notes.example")
        with TestClient(app, base_url="https://notes.example") as client:
            response = client.post("/v1/session", json={"email": server.owner_email, "password": server.owner_password})
            assert response.status_code == 201
            cookie = response.headers["set-cookie"].lower()
            assert "secure" in cookie and "httponly" in cookie and "samesite=lax" in cookie
            assert client.get("/v1/notes/01ARZ3NDEKTSV4RRFFQ69G5FAV").json()["type"] == (
                "https://notes.example/errors/not-found"
            )
    finally:
        deployment.close()
