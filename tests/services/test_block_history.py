"""HistoryService: one block as it stands, with who last wrote it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fastpad.errors import InsufficientScope, NotFound, OutOfScope
from fastpad.knowledge.history import HistoryService
from fastpad.notes import Block, new_id
from fastpad.store import Actor, NoteWrite
from tests.helpers_store import agent_propose, edit_ops


@pytest.fixture
def history(svc) -> HistoryService:
    return HistoryService(svc.store)


def token(svc, ws, scopes, **kwargs):
    plaintext, _ = svc.tokens.create(ws.id, scopes=list(scopes), **kwargs)
    return svc.tokens.authenticate(plaintext)


def test_a_person_edit_is_the_person_s_block(svc, ws, history) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "draft")])
    block_id = note.blocks[0]["id"]
    svc.clock.advance(minutes=5)
    cli = token(svc, ws, ["notes:read", "notes:write"], person_email=ws.owner_email, label="laptop")
    ops, frontier = edit_ops(svc.store, ws.id, note.id, lambda d: d.replace_text(block_id, "final words"))
    svc.notes.apply_ops(cli, note.id, ops=ops, peer_id="1", expected_frontier=frontier)

    state = history.block(ws.owner, note.id, block_id)
    assert (state.note_id, state.block_id, state.type, state.text, state.position) == (
        note.id, block_id, "paragraph", "final words", 0)
    assert (state.origin, state.review_state) == ("human_typed", "human_accepted")
    assert (state.author.kind, state.author.id, state.author.token_id) == ("person", ws.owner_id, cli.token_id)
    assert state.written_at == state.updated_at == svc.clock()
    body = state.as_dict()
    assert body["author"]["kind"] == "person" and body["written_at"] == svc.clock().isoformat()


def test_an_agent_auto_apply_is_the_agent_s_unreviewed_block_and_leaves_the_rest_alone(svc, ws, history) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "kept"), Block(None, "paragraph", "mine")])
    kept, changed = (b["id"] for b in note.blocks)
    written = svc.clock()
    svc.clock.advance(hours=1)
    bot = token(svc, ws, ["notes:read", "notes:propose"], auto_apply=True, label="summariser")
    agent_propose(svc, bot, note.id, [{"op": "replace_block", "block": changed, "text": "the bot's words"}])

    state = history.block(bot, note.id, changed)
    assert (state.text, state.origin, state.review_state) == ("the bot's words", "agent_written", "unreviewed")
    assert state.author.as_dict() == {"kind": "agent", "id": bot.principal_id, "token_id": bot.token_id,
                                      "name": "summariser"}
    assert state.written_at == svc.clock()
    untouched = history.block(bot, note.id, kept)
    assert (untouched.author.kind, untouched.author.id, untouched.written_at) == ("person", ws.owner_id, written)


def test_a_review_changes_the_state_but_not_the_author(svc, ws, history) -> None:
    bot = token(svc, ws, ["notes:read", "notes:propose"], auto_apply=True, label="bot")
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "x")])
    block_id = note.blocks[0]["id"]
    agent_propose(svc, bot, note.id, [{"op": "replace_block", "block": block_id, "text": "agent text"}])
    written = svc.clock()
    svc.clock.advance(minutes=10)
    # A person marks it reviewed: same content, new review state, through the write path.
    with svc.store.write(ws.id) as tx:
        row = tx.note(note.id)
        [block] = tx.blocks(note.id)
        tx.write_note(NoteWrite(
            note_id=note.id, kind="review", at=svc.clock(), actor=Actor("person", ws.owner_id, None, "human_typed"),
            expected_frontier=row.frontier, blocks=[replace(block, review_state="human_accepted")],
        ))
    state = history.block(ws.owner, note.id, block_id)
    assert (state.origin, state.review_state) == ("agent_written", "human_accepted")
    assert (state.author.kind, state.author.id) == ("agent", bot.principal_id)
    assert (state.written_at, state.updated_at) == (written, svc.clock())


def test_unknown_or_invisible_blocks_are_not_found(svc, ws, history) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "x")])
    other = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "y")])
    scoped = token(svc, ws, ["notes:read"], note_ids=[note.id])
    for principal, note_id, block_id in [
        (ws.owner, note.id, new_id()),
        (ws.owner, new_id(), note.blocks[0]["id"]),
        (ws.owner, note.id, other.blocks[0]["id"]),  # a block of another note
        (ws.owner, "not-a-ulid", note.blocks[0]["id"]),
    ]:
        with pytest.raises(NotFound):
            history.block(principal, note_id, block_id)
    for outside in (other.id, new_id()):  # outside the token's note set, whether or not the note exists
        with pytest.raises(OutOfScope):
            history.block(scoped, outside, other.blocks[0]["id"])
    assert history.block(scoped, note.id, note.blocks[0]["id"]).text == "x"
    with pytest.raises(InsufficientScope):
        history.block(token(svc, ws, ["search:read"]), note.id, note.blocks[0]["id"])
