"""Block history and memory topics over real HTTP."""

from __future__ import annotations

import secrets

from fastpad.notes import new_id
from tests.api.helpers import assert_problem


def test_block_history_names_the_last_writer(owner, server) -> None:
    note = owner.post("/v1/notes", json={"title": "H", "blocks": [{"text": "first"}, {"text": "second"}]}).json()
    target = note["blocks"][1]["id"]
    bot = server.mint("notes:read,notes:propose", "--auto-apply", "--label", "http-bot")
    # The agent edits the second block the way agents write: a proposal, which its auto-apply token lands at once.
    with server.client(bot["token"]) as client:
        session = {"x-fastpad-session": client.post("/v1/agent-sessions").json()["session"]}
        read = client.get(f"/v1/notes/{note['id']}/handles", headers=session).json()
        handle = next(b["handle"] for b in read["blocks"] if b["id"] == target)
        proposed = client.post(f"/v1/notes/{note['id']}/proposals", headers=session, json={
            "ops": [{"op": "replace_block", "handle": handle, "text": "second, by the bot"}],
            "expected_frontier": read["frontier"], "idempotency_key": f"hist-{note['id']}"})
        assert proposed.status_code == 201, proposed.text
        assert proposed.json()["authority"] == "auto_apply"
        # Unreviewed agent text is below an agent's default floor, its own included: refused to it.
        assert_problem(client.get(f"/v1/notes/{note['id']}/blocks/{target}"), 403, "policy-denied", server.base_url)
    agent_block = owner.get(f"/v1/notes/{note['id']}/blocks/{target}").json()
    person_block = owner.get(f"/v1/notes/{note['id']}/blocks/{note['blocks'][0]['id']}").json()

    assert (person_block["text"], person_block["origin"], person_block["review_state"]) == (
        "first", "human_typed", "human_accepted")
    assert person_block["author"]["kind"] == "person" and person_block["author"]["token_id"]
    assert (agent_block["text"], agent_block["origin"], agent_block["review_state"]) == (
        "second, by the bot", "agent_written", "unreviewed")
    assert agent_block["author"] == {"kind": "agent", "id": bot["agent_id"], "token_id": bot["id"],
                                     "name": "http-bot"}
    assert agent_block["written_at"] and agent_block["updated_at"]

    missing = owner.get(f"/v1/notes/{note['id']}/blocks/{new_id()}")
    assert_problem(missing, 404, "not-found", server.base_url)
    assert_problem(owner.get(f"/v1/notes/{note['id']}/blocks/not-a-ulid"), 422, "validation-failed", server.base_url)
    scoped = server.mint("notes:read", "--notes", new_note(owner))["token"]
    with server.client(scoped) as client:  # a note outside the token's set, named by id
        assert_problem(client.get(f"/v1/notes/{note['id']}/blocks/{target}"), 403, "out-of-scope", server.base_url)


def new_note(owner, title: str = "", text: str = "") -> str:
    body = {"title": title or f"note {secrets.token_hex(3)}"}
    if text:
        body["blocks"] = [{"text": text}]
    return owner.post("/v1/notes", json=body).json()["id"]


def test_memory_topics_designate_index_read_and_remove(owner, server) -> None:
    name = f"Prefs {secrets.token_hex(3)}"
    note_id = new_note(owner, name, "Tea, never coffee.")
    designated = owner.post("/v1/memory", json={"note_id": note_id, "idempotencyKey": f"mem-{note_id}"})
    assert designated.status_code == 200, designated.text
    assert designated.json()["name"] == name
    again = owner.post("/v1/memory", json={"note_id": note_id, "idempotencyKey": f"mem-{note_id}"})
    assert again.headers.get("idempotent-replayed") == "true"

    with server.client(server.token("reader")) as reader:
        index = reader.get("/v1/memory").json()
        [listed] = [t for t in index["topics"] if t["name"] == name]
        assert (listed["note_id"], listed["summary"]) == (note_id, "Tea, never coffee.")
        assert index["floor"] == "human" and "blocks" not in listed
        topic = reader.get(f"/v1/memory/{name.upper()}").json()
        assert topic["name"] == name and topic["note"]["blocks"][0]["text"] == "Tea, never coffee."
        assert reader.get(f"/v1/memory/{note_id}").json()["note"]["id"] == note_id
        assert_problem(reader.post("/v1/memory", json={"note_id": note_id}), 403, "insufficient-scope",
                       server.base_url)

    other = new_note(owner, "Other")
    taken = owner.post("/v1/memory", json={"note_id": other, "name": name.lower()})
    assert assert_problem(taken, 409, "conflict", server.base_url)["reason"] == "name_taken"
    bad = owner.post("/v1/memory", json={"note_id": other, "name": "a/b"})
    assert assert_problem(bad, 422, "validation-failed", server.base_url)["field_errors"][0]["field"] == "name"

    removed = owner.delete(f"/v1/memory/{name}")
    assert removed.status_code == 200 and removed.json()["note_id"] == note_id
    assert_problem(owner.get(f"/v1/memory/{name}"), 404, "not-found", server.base_url)
    assert owner.get(f"/v1/notes/{note_id}").status_code == 200
