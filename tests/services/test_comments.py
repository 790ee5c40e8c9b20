"""Comments on notes, on both backends: a comment on text follows its range through other
people's edits (Loro cursors), one on a block follows the block through split, join and move;
deleted text keeps its thread, marked on_deleted; threads, replies, edit and delete your own,
resolve and reopen; a viewer comments, an agent only with notes:write; @mentions reach the
Inbox once per comment; the note itself (its frontier, so its Markdown) is untouched."""

from __future__ import annotations

import random

import pytest

from fastpad.errors import InsufficientScope, NotFound, PolicyDenied, ValidationFailed
from fastpad.knowledge.comments import CommentService
from fastpad.knowledge.mentions import InboxService
from fastpad.notes import Block
from fastpad.notes.mentions import person_mention
from fastpad.store.purge import TrashPurge
from tests.helpers_store import edit_ops


@pytest.fixture
def comments(svc) -> CommentService:
    return CommentService(svc.store, clock=svc.clock)


@pytest.fixture
def bea(svc, ws):
    person = svc.people.create_person(ws.id, "bea@example.com", password="a long enough pass", display_name="Bea")
    return svc.people.principal_for(ws.id, person.id)


def edit(svc, ws, note_id, change) -> None:
    """Someone else's edit, made on their own copy and sent as Loro ops (a remote edit)."""
    ops, frontier = edit_ops(svc.store, ws.id, note_id, change)
    svc.notes.apply_ops(ws.owner, note_id, ops=ops, peer_id="2", expected_frontier=frontier)


def text_of(svc, ws, note_id, block_id) -> str:
    return next(b["text"] for b in svc.notes.get(ws.owner, note_id).blocks if b["id"] == block_id)


def test_a_comment_on_text_follows_its_range_through_50_remote_edits_around_it(svc, ws, bea, comments) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "alpha beta gamma delta")])
    block_id = note.blocks[0]["id"]
    thread = comments.create(bea, note.id, block_id=block_id, start=6, end=16, body="Is this right?")
    assert thread.first.quote == "beta gamma" and (thread.range.start, thread.range.end) == (6, 16)

    chance = random.Random(31)
    for step in range(50):
        def around(doc, step=step):
            text = doc.block(block_id).text
            now = comments_range(svc, ws, comments, bea, note.id)
            before, after = (0, now.start), (now.end, len(text))
            lo, hi = before if step % 2 == 0 else after
            at = chance.randint(lo, hi)
            if step % 5 == 4 and hi - lo > 2:  # every fifth edit deletes outside the range instead
                doc.delete_text(block_id, lo, 1)
            else:
                doc.insert_text(block_id, at, f"<{step}>")
        edit(svc, ws, note.id, around)

    [after] = comments.threads(bea, note.id)
    text = text_of(svc, ws, note.id, block_id)
    assert text[after.range.start:after.range.end] == "beta gamma" and not after.on_deleted
    assert len(text) > len("alpha beta gamma delta") + 40  # the edits did land around it


def comments_range(svc, ws, comments, reader, note_id):
    return comments.threads(reader, note_id)[0].range


def test_a_block_comment_follows_the_block_through_split_join_and_move(svc, ws, bea, comments) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "first half|second half"),
                                              Block(None, "paragraph", "other")])
    block_id, other_id = note.blocks[0]["id"], note.blocks[1]["id"]
    comments.create(bea, note.id, block_id=block_id, body="On the block")
    tail: list[str] = []
    edit(svc, ws, note.id, lambda d: tail.append(d.split(block_id, 10)))
    assert [t.first.block_id for t in comments.threads(bea, note.id)] == [block_id]  # the first half keeps it
    edit(svc, ws, note.id, lambda d: d.move_after(block_id, other_id))
    edit(svc, ws, note.id, lambda d: d.join(block_id, tail[0]))
    [thread] = comments.threads(bea, note.id)
    assert thread.first.block_id == block_id and not thread.on_deleted
    assert [b["id"] for b in svc.notes.get(ws.owner, note.id).blocks] == [other_id, block_id]
    assert text_of(svc, ws, note.id, block_id) == "first half|second half"


def test_deleting_the_commented_text_or_block_keeps_the_thread_marked_on_deleted(svc, ws, bea, comments) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "keep this, drop that"),
                                              Block(None, "paragraph", "a whole block")])
    first_id, second_id = note.blocks[0]["id"], note.blocks[1]["id"]
    on_text = comments.create(bea, note.id, block_id=first_id, start=11, end=20, body="drop it?")
    on_block = comments.create(bea, note.id, block_id=second_id, body="and this one")
    comments.create(ws.owner, note.id, thread_id=on_text.first.id, body="yes")
    edit(svc, ws, note.id, lambda d: d.delete_text(first_id, 9, 11))
    edit(svc, ws, note.id, lambda d: d.delete(second_id))

    threads = {t.first.id: t for t in comments.threads(bea, note.id)}
    text, block = threads[on_text.first.id], threads[on_block.first.id]
    assert (text.on_deleted, text.range, text.first.quote) == (True, None, "drop that")
    assert [c.row.body for c in text.comments] == ["drop it?", "yes"]
    assert block.on_deleted and block.comments[0].row.body == "and this one"


def test_threads_replies_edit_and_delete_your_own_resolve_and_reopen(svc, ws, bea, comments) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "text")])
    block_id = note.blocks[0]["id"]
    frontier = svc.notes.get(ws.owner, note.id).frontier
    thread = comments.create(bea, note.id, block_id=block_id, body="Question")
    reply = comments.create(ws.owner, note.id, thread_id=thread.first.id, body="Answer")
    reply_id = reply.comments[1].row.id
    with pytest.raises(PolicyDenied):
        comments.edit(bea, reply_id, body="not mine to change")
    with pytest.raises(PolicyDenied):
        comments.delete(bea, reply_id)
    assert comments.edit(ws.owner, reply_id, body="Better answer").comments[1].as_dict()["edited_at"] is not None

    resolved = comments.resolve(ws.owner, reply_id, resolved=True)  # a reply resolves its thread
    assert resolved.resolved and resolved.first.resolved_by_id == ws.owner_id
    assert comments.threads(bea, note.id, open_only=True) == []
    assert not comments.resolve(bea, thread.first.id, resolved=False).resolved

    comments.delete(bea, thread.first.id)  # has a reply: a tombstone keeps the thread
    [kept] = comments.threads(bea, note.id)
    assert [c.as_dict()["deleted"] for c in kept.comments] == [True, False]
    assert kept.comments[0].as_dict()["body"] == ""
    assert comments.resolve(ws.owner, thread.first.id, resolved=True).resolved  # the tombstone still names it
    with pytest.raises(NotFound):
        comments.edit(bea, thread.first.id, body="back again")
    comments.delete(ws.owner, reply_id)  # its last reply gone, the tombstone goes too
    assert comments.threads(bea, note.id) == []
    assert svc.notes.get(ws.owner, note.id).frontier == frontier  # comments are never note content


def test_bad_input_gets_typed_errors_and_writes_nothing(svc, ws, bea, comments) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "short")])
    block_id = note.blocks[0]["id"]
    for kwargs, error in [
        (dict(block_id=block_id, start=0, end=99, body="x"), ValidationFailed),
        (dict(block_id=block_id, start=2, end=2, body="x"), ValidationFailed),
        (dict(block_id=block_id, start=1, body="x"), ValidationFailed),
        (dict(block_id=block_id, body="   "), ValidationFailed),
        (dict(block_id=block_id, body="x" * 10_001), ValidationFailed),
        (dict(block_id="01HZZZZZZZZZZZZZZZZZZZZZZZ", body="x"), NotFound),
        (dict(thread_id="01HZZZZZZZZZZZZZZZZZZZZZZZ", body="x"), NotFound),
    ]:
        with pytest.raises(error):
            comments.create(bea, note.id, **kwargs)
    with pytest.raises(NotFound):
        comments.edit(bea, "not-a-comment", body="x")
    assert comments.threads(bea, note.id) == []


def test_a_viewer_comments_and_an_agent_needs_notes_write(svc, ws, comments) -> None:
    viewer_person = svc.people.create_person(ws.id, "vic@example.com", role="viewer", display_name="Vic")
    viewer = svc.people.principal_for(ws.id, viewer_person.id)
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "text")])
    block_id = note.blocks[0]["id"]
    assert comments.create(viewer, note.id, block_id=block_id, body="A viewer's note").comments[0].author_name == "Vic"

    reader = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:read", "notes:propose"])[0])
    with pytest.raises(InsufficientScope):
        comments.create(reader, note.id, block_id=block_id, body="may I?")
    writer = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:read", "notes:write"])[0])
    thread = comments.create(writer, note.id, block_id=block_id, body="An agent's remark")
    assert thread.comments[0].as_dict()["author"]["kind"] == "agent"
    with pytest.raises(PolicyDenied):  # an agent reads comments through fastpad_fetch only
        comments.threads(writer, note.id)


def test_a_mention_in_a_comment_reaches_the_inbox_once(svc, ws, bea, comments) -> None:
    inbox = InboxService(svc.store, clock=svc.clock)
    note = svc.notes.create(ws.owner, title="Plan", blocks=[Block(None, "paragraph", "text")])
    block_id = note.blocks[0]["id"]
    mention = person_mention(bea.principal_id, "Bea")
    thread = comments.create(ws.owner, note.id, block_id=block_id, body=f"{mention} can you check?")
    comment_id = thread.first.id
    comments.edit(ws.owner, comment_id, body=f"{mention} can you check this, {mention}?")
    [entry] = inbox.page(bea).mentions
    assert (entry.row.comment_id, entry.row.block_id, entry.row.note_id) == (comment_id, block_id, note.id)
    assert entry.as_dict()["url"] == f"/notes/{note.id}#comment-{comment_id}"
    assert entry.excerpt.startswith("[@Bea]") and "check this" in entry.excerpt
    comments.create(bea, note.id, thread_id=comment_id, body=f"{person_mention(bea.principal_id, 'me')} on it")
    assert inbox.page(bea).unread == 1  # mentioning yourself notifies no one


def test_purging_a_note_removes_its_comments_and_their_inbox_entries(svc, ws, bea, comments) -> None:
    inbox = InboxService(svc.store, clock=svc.clock)
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "text")])
    thread = comments.create(ws.owner, note.id, block_id=note.blocks[0]["id"],
                             body=f"{person_mention(bea.principal_id, 'Bea')} look")
    comments.create(bea, note.id, thread_id=thread.first.id, body="done")
    svc.notes.trash(ws.owner, note.id)
    with svc.store.write(ws.id) as tx:
        assert TrashPurge(tx).delete_trashed_before(svc.clock(), limit=10) == [note.id]
        assert tx.comments.get(thread.first.id) is None
    assert inbox.page(bea).mentions == []
