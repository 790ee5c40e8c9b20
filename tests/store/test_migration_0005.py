"""Migration 5 on a database that already holds notes: the feed keeps every row
and its seq, old rows say their actor was not recorded, and writing continues."""

from __future__ import annotations

from fastpad.knowledge.changes import ChangeFeedService
from fastpad.knowledge.history import HistoryService
from tests.helpers_store import make_services
from tests.store.old_schema import old_note


def test_an_old_feed_and_old_blocks_upgrade_in_place(make_store, fast_hasher) -> None:
    old = make_store(migrate_to=4)
    url = make_store.last_url()
    svc = make_services(old, fast_hasher)
    ws = svc.workspace()
    written = svc.clock()
    note_id, [block_id] = old_note(old, ws.id, ws.owner_id, title="Old", texts=["written at version 4"],
                                   at=written, archived=True)
    old.close()

    store = make_store(url=url)
    svc = make_services(store, fast_hasher)
    feed = ChangeFeedService(store)
    before = feed.changes(ws.owner).items
    assert [(c.kind, c.note_id, c.actor_kind, c.block_ids) for c in before] == [
        ("create", note_id, None, None), ("archive", note_id, None, None)]
    block = HistoryService(store).block(ws.owner, note_id, block_id)
    assert block.text == "written at version 4"
    assert block.author is None and block.written_at == block.updated_at == written

    svc.notes.unarchive(ws.owner, note_id)
    [after] = feed.changes(ws.owner, before[-1].cursor).items
    assert (after.kind, after.actor_kind, after.actor_id) == ("unarchive", "person", ws.owner_id)
