"""Migration 15 on a database that already holds turns: turns on existing notes keep
every column and their sources (SQLite rebuilds the table with foreign keys off), and
purging a note still takes its turns with it now that no foreign key cascades."""

from __future__ import annotations

from datetime import timedelta

from fastpad.knowledge.trash import TrashService
from fastpad.notes import new_id
from tests.helpers_store import make_services
from tests.store.old_schema import old_note


def test_turns_survive_the_rebuild_and_go_with_their_purged_note(make_store, fast_hasher) -> None:
    old = make_store(migrate_to=14)
    url = make_store.last_url()
    svc = make_services(old, fast_hasher)
    ws = svc.workspace()
    # version 14's columns: today's write path and TurnTables write later versions'
    note_id, (block_id,) = old_note(old, ws.id, ws.owner_id, title="Cited", texts=["cited"], at=svc.clock())
    turn_id, at = new_id(), svc.clock()
    with old.write(ws.id) as tx:
        d = tx._d
        frontier = tx.note(note_id).frontier
        tx._x(
            "INSERT INTO turns (id, workspace_id, note_id, status, author_kind, author_id, author_key, session_id,"
            " origin, idempotency_key, request_hash, base_frontier, proposal_update, ops, diffs, created_at,"
            " updated_at) VALUES (?, ?, ?, 'pending', 'person', ?, ?, 's', 'human_typed', 'k', 'h', ?, ?, ?, ?, ?, ?)",
            (turn_id, ws.id, note_id, ws.owner_id, f"person:{ws.owner_id}", frontier, b"", d.js([]), d.js([]),
             d.ts(at), d.ts(at)),
        )
        tx._x("INSERT INTO turn_sources (workspace_id, turn_id, block_id, source_note_id, source_block_id)"
              " VALUES (?, ?, ?, ?, ?)", (ws.id, turn_id, "B", note_id, block_id))
    old.close()

    store = make_store(url=url)
    with store.read(ws.id) as tx:
        turn = tx.turns.get(turn_id)
        assert turn is not None and (turn.note_id, turn.base_frontier, turn.proposed_note) == (
            note_id, frontier, None)
        assert tx.turns.sources_of(turn_id) == [("B", note_id, block_id)]

    svc = make_services(store, fast_hasher)
    svc.notes.trash(ws.owner, note_id)
    purged = TrashService(store, retention=timedelta(0), clock=svc.clock).purge_expired(ws.id, svc.clock() + timedelta(1))
    assert purged.purged == [note_id]
    with store.read(ws.id) as tx:
        assert tx.turns.get(turn_id) is None and tx.turns.sources_of(turn_id) == []
