"""``fp push`` is a person's save like the browser's: a typo fixed in a mirrored file leaves an
auto-applied agent paragraph the agent's, and rewriting it in the file makes it the person's."""

from __future__ import annotations

import uuid
from pathlib import Path

from tests.cli.conftest import CliServer, Fp

AGENT_TEXT = "The launch moves to June; book the venue in Portto."


def _auto_applied_note(server: CliServer, person_token: str, text: str = AGENT_TEXT) -> tuple[str, str]:
    """A person's note with one paragraph an auto-apply agent added: (note id, that block's id)."""
    with server.client(person_token) as person:
        note = person.post("/v1/notes", json={"title": "Launch", "blocks": [{"text": "Launch notes."}]}).json()
    with server.client(server.mint("notes:read,notes:propose", "--auto-apply", "--label", "tests: bot")) as agent:
        session = {"x-fastpad-session": agent.post("/v1/agent-sessions").json()["session"]}
        read = agent.get(f"/v1/notes/{note['id']}/handles", headers=session).json()
        turn = agent.post(f"/v1/notes/{note['id']}/proposals", headers=session, json={
            "ops": [{"op": "insert_after", "handle": read["blocks"][0]["handle"], "text": text}],
            "expected_frontier": read["frontier"], "idempotency_key": str(uuid.uuid4())}).json()
    assert turn["authority"] == "auto_apply"
    with server.client(person_token) as person:
        return note["id"], person.get(f"/v1/notes/{note['id']}").json()["blocks"][1]["id"]


def _provenance(server: CliServer, token: str, note_id: str, block_id: str) -> tuple[str, str, str]:
    with server.client(token) as person:
        block = next(b for b in person.get(f"/v1/notes/{note_id}").json()["blocks"] if b["id"] == block_id)
    return block["text"], block["origin"], block["review_state"]


def _edit_and_push(fp: Fp, person: dict[str, str], mirror: Path, note_id: str, old: str, new: str) -> None:
    (path,) = mirror.glob(f"*-{note_id}.md")
    path.write_text(path.read_text().replace(old, new))
    assert len(fp.json("push", str(mirror), env=person)["pushed"]) == 1


def test_fp_push_keeps_agent_text_the_agents_through_a_typo_fix_but_not_a_rewrite(fp: Fp, cli_server, person_env,
                                                                                   tmp_path) -> None:
    note_id, block_id = _auto_applied_note(cli_server, person_env["FASTPAD_TOKEN"])
    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person_env)

    _edit_and_push(fp, person_env, mirror, note_id, "Portto", "Porto")
    assert _provenance(cli_server, person_env["FASTPAD_TOKEN"], note_id, block_id) == (
        "The launch moves to June; book the venue in Porto.", "agent_written", "unreviewed")

    rewrite = "We keep May and Lisbon, as the team agreed today."
    _edit_and_push(fp, person_env, mirror, note_id, "The launch moves to June; book the venue in Porto.", rewrite)
    assert _provenance(cli_server, person_env["FASTPAD_TOKEN"], note_id, block_id) == (
        rewrite, "human_typed", "human_accepted")


def _block_with(server: CliServer, token: str, note_id: str, text: str) -> tuple[str, str]:
    with server.client(token) as person:
        block = next(b for b in person.get(f"/v1/notes/{note_id}").json()["blocks"] if b["text"] == text)
    return block["origin"], block["review_state"]


def test_agent_text_copied_moved_or_duplicated_by_fp_push_keeps_its_provenance(fp: Fp, cli_server, person_env,
                                                                               tmp_path) -> None:
    token = person_env["FASTPAD_TOKEN"]
    source_id, _ = _auto_applied_note(cli_server, token)
    with cli_server.client(token) as person:
        copy_to = person.post("/v1/notes", json={"title": "Copied into", "blocks": [{"text": "Venue list."}]}).json()
        move_to = person.post("/v1/notes", json={"title": "Moved into", "blocks": [{"text": "Travel list."}]}).json()
    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person_env)

    def file_of(note_id: str) -> Path:
        (path,) = mirror.glob(f"*-{note_id}.md")
        return path

    # Copy: the agent's paragraph pasted (without its anchor) into a person's note.
    copied = file_of(copy_to["id"])
    copied.write_text(copied.read_text() + f"\n{AGENT_TEXT}\n")
    # Duplicate: the whole file saved under a new name, a new note on push.
    (mirror / "Launch copy.md").write_text(file_of(source_id).read_text())
    pushed = fp.json("push", str(mirror), env=person_env)["pushed"]
    assert len(pushed) == 2
    assert _block_with(cli_server, token, copy_to["id"], AGENT_TEXT) == ("agent_written", "unreviewed")
    assert _block_with(cli_server, token, copy_to["id"], "Venue list.") == ("human_typed", "human_accepted")
    (duplicate,) = [p["note_id"] for p in pushed if p["kind"] == "create"]
    assert _block_with(cli_server, token, duplicate, AGENT_TEXT) == ("agent_written", "unreviewed")
    assert _block_with(cli_server, token, duplicate, "Launch notes.") == ("human_typed", "human_accepted")

    # Move: an agent's paragraph no other note holds, cut from its note's file and pasted into
    # another's, in one push (the file losing it sorts first by name, so it is sent last).
    moving = f"Wire the deposit {uuid.uuid4().hex} to the venue by Friday, the agent says."
    source_id, _ = _auto_applied_note(cli_server, token, moving)
    fp.json("pull", str(mirror), env=person_env)
    source = file_of(source_id)
    assert source.name < file_of(move_to["id"]).name
    lines = source.read_text().splitlines(keepends=True)
    (cut,) = [line for line in lines if line.startswith(moving)]
    source.write_text("".join(line for line in lines if line is not cut))
    moved = file_of(move_to["id"])
    moved.write_text(moved.read_text() + "\n" + cut.split(" {#")[0] + "\n")
    assert len(fp.json("push", str(mirror), env=person_env)["pushed"]) == 2
    assert _block_with(cli_server, token, move_to["id"], moving) == ("agent_written", "unreviewed")
    with cli_server.client(token) as person:
        assert moving not in [b["text"] for b in person.get(f"/v1/notes/{source_id}").json()["blocks"]]
