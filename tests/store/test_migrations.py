"""Numbered migrations, applied on open; an older database upgrades in place."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest

from fastpad.notes import Block
from fastpad.store import migrations
from fastpad.search.indexing import backfill_lexical_texts
from tests.helpers_store import lexical, make_services
from tests.store.old_schema import old_note


def test_both_backends_have_the_same_numbered_migrations() -> None:
    sqlite = [(v, n) for v, n, _ in migrations("sqlite")]
    postgres = [(v, n) for v, n, _ in migrations("postgres")]
    assert sqlite == postgres
    assert [v for v, _ in sqlite] == list(range(1, len(sqlite) + 1))
    assert len(sqlite) >= 2


def test_fresh_database_is_at_the_latest_version_and_records_it(store) -> None:
    assert store.schema_version() == len(migrations(store.backend))


def test_reopening_applies_nothing_twice(make_store) -> None:
    first = make_store()
    url = make_store.last_url()
    first.close()
    again = make_store(url=url)
    assert again.schema_version() == len(migrations(again.backend))


def test_an_old_database_upgrades_in_place(make_store, fast_hasher) -> None:
    """Build a version-1 database holding a note, reopen with every migration:
    the note survives, and the blocks it already had are found by no word until the
    deployment's backfill computes their lexical text (migration 21), then by theirs."""
    old = make_store(migrate_to=1)
    url = make_store.last_url()
    assert old.schema_version() == 1
    svc = make_services(old, fast_hasher)
    ws = svc.workspace()
    # Written with version 1's SQL: today's write path targets today's schema.
    note_id, _ = old_note(old, ws.id, ws.owner_id, title="Old", texts=["written before the index existed"],
                          at=svc.clock())
    old.close()

    upgraded = make_store(url=url)
    assert upgraded.schema_version() == len(migrations(upgraded.backend))
    svc = make_services(upgraded, fast_hasher)
    assert svc.notes.get(ws.owner, note_id).blocks[0]["text"] == "written before the index existed"
    with upgraded.read(ws.id) as tx:
        assert lexical(tx, "index") == []  # not indexed yet: found by no word rather than by a secret
    with upgraded.write(ws.id) as tx:
        backfill_lexical_texts(tx)
    with upgraded.read(ws.id) as tx:
        hits = lexical(tx, "index")
    assert [h.note_id for h in hits] == [note_id]
    # Its Loro snapshot moved with it (version 10): the note still takes edits.
    assert svc.notes.rename(ws.owner, note_id, "Renamed after the upgrade").title == "Renamed after the upgrade"
    assert "Renamed after the upgrade" in svc.notes.markdown(ws.owner, note_id)
    # And the upgraded database keeps indexing new writes.
    second = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "after the upgrade")])
    with upgraded.read(ws.id) as tx:
        assert [h.note_id for h in lexical(tx, "upgrade")] == [second.id]


def test_a_database_newer_than_the_code_is_refused(make_store) -> None:
    store = make_store()
    url = make_store.last_url()
    if store.backend == "sqlite":
        path = url[len("sqlite://"):]
        with sqlite3.connect(path) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES (999, 'from_the_future', '2099-01-01T00:00:00+00:00')")
    else:
        with psycopg.connect(store.owner_url, autocommit=True) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES (999, 'from_the_future', now())")
    store.close()
    with pytest.raises(RuntimeError, match="newer than this Fastpad"):
        make_store(url=url)


def test_sqlite_runs_in_wal_mode(sqlite_store) -> None:
    with sqlite3.connect(sqlite_store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
