"""An agent's REST writes go through review exactly as its MCP writes do (issue 15, item 2), over
real HTTP (``fp serve`` on SQLite and PostgreSQL): a token whose principal is an agent cannot
create, rename or edit a note's prose directly; with auto-apply its new note lands unreviewed and
is listed on Agent activity; typed properties stay direct writes under ``notes:write``; a person's
token still writes directly."""

from __future__ import annotations

import base64
import secrets

import httpx

from fastpad.notes import NoteDocument

from .conftest import OWNER_EMAIL, Server
from .helpers import assert_problem
from .test_turns import SESSION, browser, csrf_of, new_note, note_blocks  # noqa: F401  (browser: a fixture)

WRITER = "notes:read,notes:write,notes:delete"


def agent_client(server: Server, *extra: str) -> httpx.Client:
    return server.client(server.mint(WRITER, *extra)["token"])


def a_save(owner: httpx.Client, note_id: str, text: str) -> dict:
    """An editor's save of one changed block, as ``POST /v1/notes/{id}/ops`` takes it."""
    updates = owner.get(f"/v1/notes/{note_id}/updates")
    frontier = updates.headers["x-fastpad-frontier"]
    note = NoteDocument.load(updates.content)
    note.replace_text(note.blocks()[0].id, text)
    return {"ops": base64.b64encode(note.export_updates(frontier)).decode(), "expectedFrontier": frontier}


def test_an_agents_new_note_is_a_proposal_and_it_cannot_rename_or_edit_prose(
        server: Server, owner: httpx.Client, browser: httpx.Client) -> None:  # noqa: F811
    with agent_client(server, "--label", "tests: rest writer") as agent:
        before = {n["id"] for n in owner.get("/v1/notes", params={"limit": 200}).json()["items"]}
        proposed = agent.post("/v1/notes", json={"title": "By the agent", "markdown": "Hello."})
        assert proposed.status_code == 202, proposed.text
        turn = proposed.json()
        assert proposed.headers["location"] == f"/v1/turns/{turn['id']}"
        assert (turn["status"], turn["new_note"]["title"], turn["authority"]) == ("pending", "By the agent", None)
        markdown = agent.post("/v1/notes", content=b"---\ntitle: Hi\n---\n\nBy the agent.\n",
                              headers={"content-type": "text/markdown"})
        assert markdown.status_code == 202 and markdown.json()["new_note"]["title"] == "Hi"
        batch = agent.post("/v1/notes:batch", json={"items": [{"title": "One"}, {"title": "Two"}]}).json()
        assert (batch["created"], batch["proposed"], batch["refused"]) == (0, 2, 0)
        assert {n["id"] for n in owner.get("/v1/notes", params={"limit": 200}).json()["items"]} == before
        assert assert_problem(owner.get(f"/v1/notes/{turn['note_id']}"), 404, "not-found", server.base_url)

        note = new_note(owner, "The person's words.")
        renamed = assert_problem(agent.post(f"/v1/notes/{note}/rename", json={"title": "Agent's title"}),
                                 403, "policy-denied", server.base_url)
        assert renamed["reason"] == "agents_propose"
        edited = assert_problem(agent.post(f"/v1/notes/{note}/ops", json=a_save(owner, note, "The agent's words.")),
                                403, "policy-denied", server.base_url)
        assert edited["next"] == f"POST /v1/notes/{note}/proposals"
        assert owner.get(f"/v1/notes/{note}").json()["title"] == "Trip"
        assert note_blocks(owner, note) == [("The person's words.", "human_typed", "human_accepted")]

    # The person finds it waiting, reads it on the review page, and accepts it: now the note exists.
    waiting = owner.get("/v1/turns", params={"status": "waiting"}).json()["items"]
    assert turn["id"] in {t["id"] for t in waiting}
    page = browser.get(f"/review/{turn['id']}")
    assert page.status_code == 200 and "as a new note, <strong>By the agent</strong>" in page.text
    assert "Hello." in page.text
    accepted = browser.post(f"/review/{turn['id']}/accept", data={"csrf_token": csrf_of(page)})
    assert accepted.status_code == 303, accepted.text
    created = owner.get(f"/v1/notes/{turn['note_id']}").json()
    assert created["title"] == "By the agent"
    assert note_blocks(owner, turn["note_id"]) == [("Hello.", "agent_written", "human_accepted")]


def test_an_auto_apply_agents_note_lands_unreviewed_on_agent_activity_and_reverts_to_the_trash(
        server: Server, owner: httpx.Client, browser: httpx.Client) -> None:  # noqa: F811
    with agent_client(server, "--auto-apply", "--label", "tests: rest auto-apply") as agent:
        created = agent.post("/v1/notes", json={"title": "Agent's digest", "markdown": "First.\n\nSecond.\n"})
        assert created.status_code == 201, created.text
        note = created.json()["id"]
        assert note_blocks(owner, note) == [("First.", "agent_written", "unreviewed"),
                                            ("Second.", "agent_written", "unreviewed")]
        # Still no direct prose edits or renames: those go through proposals even under auto-apply.
        assert_problem(agent.post(f"/v1/notes/{note}/rename", json={"title": "Renamed"}), 403, "policy-denied",
                       server.base_url)
        # And the copy guard a proposal passes: no pasting what it read from another note into a new one.
        secret_plan = "The board meets on the third Thursday to decide the merger terms with the northern firm."
        source = new_note(owner, secret_plan)
        session = agent.post("/v1/agent-sessions").json()["session"]
        assert agent.get(f"/v1/notes/{source}/handles", headers={SESSION: session},
                         params={"floor": "all"}).status_code == 200
        copied = agent.post("/v1/notes", json={"title": "Copy", "blocks": [{"text": secret_plan}]})
        assert assert_problem(copied, 422, "cross-note-copy-denied", server.base_url)["field_errors"][0]["field"] \
            == "blocks[0].text"

    queue = owner.get("/v1/turns", params={"activity": "true"}).json()["items"]
    turn = next(t for t in queue if t["note_id"] == note)
    assert turn["auto_applied"] and turn["status"] == "accepted" and turn["author"]["kind"] == "agent"
    assert [(d["kind"], d["after"]["text"]) for d in turn["diffs"]] == [("inserted", "First."),
                                                                        ("inserted", "Second.")]
    page = browser.get("/agent-activity")
    assert f"/review/{turn['id']}" in page.text and "tests: rest auto-apply" in page.text
    assert browser.get(f"/review/{turn['id']}").status_code == 200

    reverted = browser.post(f"/review/{turn['id']}/revert",
                            data={"csrf_token": csrf_of(page), "next": "/agent-activity"})
    assert reverted.status_code == 303
    assert owner.get(f"/v1/notes/{note}").json()["trashed"] is True
    assert turn["id"] not in browser.get("/agent-activity").text


def test_typed_properties_stay_direct_writes_and_a_persons_token_writes_prose(
        server: Server, owner: httpx.Client) -> None:
    kind = f"Task_{secrets.token_hex(3)}"  # type names are per workspace, and the server lives all session
    schema = server.mint("notes:read,schema:write", "--person", OWNER_EMAIL, "--label", "tests: schema")["token"]
    with server.client(schema) as schemer:
        defined = schemer.post("/v1/types", json={"name": kind, "properties": [{"name": "status", "kind": "text"}]})
        assert defined.status_code == 201, defined.text
    note = new_note(owner, "Plain.")
    since = owner.get("/v1/changes", params={"start": "latest"}).json()["next_cursor"]
    minted = server.mint(WRITER, "--label", "tests: typed writer")
    with server.client(minted["token"]) as agent:
        typed = agent.patch(f"/v1/notes/{note}/types", json={"add": [kind], "properties": {f"{kind}.status": "draft"}})
        assert typed.status_code == 200, typed.text
    written = owner.get(f"/v1/notes/{note}").json()
    assert written["types"] == [kind] and written["properties"] == {f"{kind}.status": "draft"}
    # Recorded like every write: the change feed names the agent and the token that made it.
    [change] = [c for c in owner.get("/v1/changes", params={"cursor": since}).json()["items"] if c["note_id"] == note]
    assert change["kind"] == "meta" and change["actor"]["kind"] == "agent"
    assert change["actor"]["token_id"] == minted["id"]

    saved = owner.post(f"/v1/notes/{note}/ops", json=a_save(owner, note, "Plain, edited by the person."))
    assert saved.status_code == 200, saved.text
    assert owner.post(f"/v1/notes/{note}/rename", json={"title": "Renamed by the person"}).status_code == 200
    assert note_blocks(owner, note) == [("Plain, edited by the person.", "human_typed", "human_accepted")]
