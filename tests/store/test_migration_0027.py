"""Migration 27 on a database that already holds notes and Inbox entries: the comments table
arrives empty, the mentions are kept (still one per person and block), and a comment made
after it — with a mention — lands beside the note without changing it."""

from __future__ import annotations

from fastpad.knowledge.comments import CommentService
from fastpad.knowledge.mentions import InboxService
from fastpad.notes import Block, new_id
from fastpad.notes.mentions import person_mention
from tests.helpers_store import edit_ops, make_services


def test_mentions_from_before_version_27_survive_it_and_comments_start_with_it(make_store, fast_hasher) -> None:
    old = make_store(migrate_to=26)
    url = make_store.last_url()
    svc = make_services(old, fast_hasher)
    ws = svc.workspace()
    bea = svc.people.create_person(ws.id, "bea@example.com", password="a long enough pass", display_name="Bea")
    mention = person_mention(bea.id, "Bea")
    before = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "before")])
    # Today's mention step speaks version 27, so the entry version 25 made is written as it would have been.
    with old.write(ws.id) as tx:
        tx._x("INSERT INTO mentions (id, workspace_id, person_id, note_id, block_id, mentioned_by_kind,"
              " mentioned_by_id, origin, created_at) VALUES (?, ?, ?, ?, ?, 'person', ?, 'human_typed', ?)",
              (new_id(), ws.id, bea.id, before.id, before.blocks[0]["id"], ws.owner_id, tx._d.ts(svc.clock())))
    old.close()

    store = make_store(url=url)
    svc = make_services(store, fast_hasher)
    reader = svc.people.principal_for(ws.id, bea.id)
    inbox = InboxService(store)
    [kept] = inbox.page(reader).mentions
    assert (kept.excerpt, kept.row.comment_id) == ("before", None)
    block_id = before.blocks[0]["id"]
    ops, frontier = edit_ops(store, ws.id, before.id, lambda d: d.replace_text(block_id, f"again {mention}"))
    svc.notes.apply_ops(ws.owner, before.id, ops=ops, peer_id="1", expected_frontier=frontier)
    assert len(inbox.page(reader).mentions) == 1  # still one per person and block

    comments = CommentService(store)
    assert comments.threads(reader, before.id) == []
    thread = comments.create(ws.owner, before.id, block_id=block_id, start=0, end=5, body=f"{mention} see")
    assert thread.first.quote == "again"
    assert [m.row.comment_id for m in inbox.page(reader).mentions] == [thread.first.id, None]
