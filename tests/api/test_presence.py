"""Presence over HTTP, on both backends: a person's tab posts its Loro EphemeralStore state for a
note, everyone following the note (a long poll) receives every live tab's state, a tab that leaves
or stops posting is dropped, and nothing of it reaches the note, its op log or the change feed.
Agents are refused; bad tabs, states too large, states naming another key or not Loro at all get
a typed 422.

The module's server drops a tab ``TTL_S`` after its last post (the ``presence_ttl_s`` limit), so
expiry is seen without waiting half a minute: the long poll answering is the signal.
"""

from __future__ import annotations

import base64
import secrets
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import loro
import pytest

from tests.api.conftest import Server, own_server

TTL_S = 1.5


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def present(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with own_server(request, tmp_path_factory, "presence", limits={"presence_ttl_s": TTL_S}) as server:
        yield server


@pytest.fixture(scope="module")
def person(present: Server) -> Iterator[httpx.Client]:
    """The owner signed in: a browser session, as the app posts presence."""
    with present.client() as client:
        answer = client.post("/v1/session", json={"email": present.owner_email, "password": present.owner_password})
        assert answer.status_code == 201, answer.text
        client.headers["x-csrf-token"] = answer.json()["csrf_token"]
        client.person_id = answer.json()["principal_id"]  # type: ignore[attr-defined]
        yield client


@pytest.fixture
def note(person: httpx.Client) -> dict[str, Any]:
    created = person.post("/v1/notes", json={"title": "Together", "blocks": [{"type": "paragraph", "text": "hello"}]})
    assert created.status_code == 201, created.text
    return created.json()


def new_tab() -> str:
    return secrets.token_urlsafe(12)


def state_of(tab: str, value: dict[str, Any]) -> str:
    store = loro.EphemeralStore(30_000)
    store.set(tab, value)
    return base64.b64encode(store.encode(tab)).decode()


def follow(client: httpx.Client, note_id: str, **params: Any) -> dict[str, Any]:
    answer = client.get(f"/v1/notes/{note_id}/presence", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def post(client: httpx.Client, note_id: str, body: dict[str, Any]) -> httpx.Response:
    return client.post(f"/v1/notes/{note_id}/presence", json=body)


def test_a_posted_state_reaches_a_waiting_follower_and_applies_to_an_ephemeral_store(
        person: httpx.Client, note: dict[str, Any]) -> None:
    tab = new_tab()
    before = follow(person, note["id"])
    assert before["tabs"] == [] and before["ttl_ms"] == int(TTL_S * 1000)
    answered: dict[str, Any] = {}
    waiting = threading.Thread(target=lambda: answered.update(
        follow(person, note["id"], seen=before["generation"], wait_ms=20_000)))
    waiting.start()
    assert post(person, note["id"], {"tab": tab, "state": state_of(tab, {"block": "b1", "offset": 3})}).status_code == 204
    waiting.join()
    assert answered["generation"] != before["generation"]
    [entry] = answered["tabs"]
    assert entry["tab"] == tab and entry["person"]["id"] == person.person_id and entry["person"]["name"]
    received = loro.EphemeralStore(30_000)
    received.apply(base64.b64decode(entry["state"]))
    assert received.get(tab) == {"block": "b1", "offset": 3}


def test_a_leaving_tab_is_gone_at_once_and_a_silent_one_at_its_expiry(person: httpx.Client, note: dict[str, Any]) -> None:
    leaving, silent = new_tab(), new_tab()
    for tab in (leaving, silent):
        assert post(person, note["id"], {"tab": tab, "state": state_of(tab, {"here": True})}).status_code == 204
    now = follow(person, note["id"])
    assert {entry["tab"] for entry in now["tabs"]} == {leaving, silent}
    assert post(person, note["id"], {"tab": leaving, "leave": True}).status_code == 204
    after_leave = follow(person, note["id"])
    assert [entry["tab"] for entry in after_leave["tabs"]] == [silent]
    # Nothing posts again: the long poll answers when the silent tab expires.
    expired = follow(person, note["id"], seen=after_leave["generation"], wait_ms=20_000)
    assert expired["tabs"] == [] and expired["generation"] != after_leave["generation"]


def test_presence_is_never_stored_in_the_note_or_the_change_feed(person: httpx.Client, note: dict[str, Any]) -> None:
    latest = person.get("/v1/changes", params={"start": "latest"}).json()["next_cursor"]
    tab = new_tab()
    assert post(person, note["id"], {"tab": tab, "state": state_of(tab, {"block": "b", "offset": 1})}).status_code == 204
    assert person.get(f"/v1/notes/{note['id']}").json()["frontier"] == note["frontier"]
    assert person.get("/v1/changes", params={"cursor": latest}).json()["items"] == []


def test_an_agent_is_refused_both_ways(present: Server, note: dict[str, Any]) -> None:
    tab = new_tab()
    with present.client(present.mint("notes:read,notes:write")["token"]) as agent:
        for answer in (agent.get(f"/v1/notes/{note['id']}/presence"),
                       post(agent, note["id"], {"tab": tab, "state": state_of(tab, {})})):
            assert answer.status_code == 403, answer.text
            assert answer.json()["reason"] == "person_only"


def test_no_credential_is_unauthenticated(present: Server, note: dict[str, Any]) -> None:
    with present.client() as anonymous:
        assert anonymous.get(f"/v1/notes/{note['id']}/presence").status_code == 401


def test_an_unknown_note_is_not_found(person: httpx.Client) -> None:
    tab = new_tab()
    missing = "01" + "Z" * 24
    assert person.get(f"/v1/notes/{missing}/presence").status_code == 404
    assert post(person, missing, {"tab": tab, "state": state_of(tab, {})}).status_code == 404


@pytest.mark.parametrize("body, field, code", [
    ({"tab": "short", "state": "AA=="}, "tab", "string_pattern_mismatch"),
    ({"tab": "T" * 12, "state": "not base64!"}, "state", "base64"),
    ({"tab": "T" * 12, "state": base64.b64encode(b"\x01\x02garbage").decode()}, "state", "malformed"),
    ({"tab": "T" * 12, "state": state_of("U" * 12, {"a": 1})}, "state", "keys"),
    ({"tab": "T" * 12, "state": state_of("T" * 12, {"text": "x" * 4000})}, "state", "string_too_long"),
    ({"tab": "T" * 12, "state": state_of("T" * 12, {"text": "x" * 2018})}, "state", "too_long"),  # 2,049 bytes
    ({"tab": "T" * 12}, "state", "missing"),
])
def test_bad_input_is_a_typed_422(person: httpx.Client, note: dict[str, Any], body: dict[str, Any],
                                  field: str, code: str) -> None:
    answer = post(person, note["id"], body)
    assert answer.status_code == 422, answer.text
    assert {(error["field"], error["code"]) for error in answer.json()["field_errors"]} == {(field, code)}
    assert follow(person, note["id"])["tabs"] == []
