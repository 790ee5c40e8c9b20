"""Migration 19 on a database that already holds notes: their titles are indexed
(SQLite fills the title index from notes; PostgreSQL computes the generated column) — since
migration 21, less their secrets, once the deployment's backfill has computed them."""

from __future__ import annotations

from fastpad.search.fusion import LEXICAL
from fastpad.search.indexing import backfill_lexical_texts
from fastpad.search.service import SearchService
from tests.helpers_store import make_services
from tests.store.old_schema import old_note


def test_notes_written_before_version_19_are_found_by_a_word_of_their_title(make_store, fast_hasher) -> None:
    old = make_store(migrate_to=18)
    url = make_store.last_url()
    svc = make_services(old, fast_hasher)
    ws = svc.workspace()
    # version 18's columns: today's write path writes version 21's
    titled, _ = old_note(old, ws.id, ws.owner_id, title="Heliograph signalling", texts=["Mirrors."], at=svc.clock())
    old.close()

    store = make_store(url=url)
    with store.write(ws.id) as tx:  # the lexical titles migration 21 leaves to the deployment's backfill
        backfill_lexical_texts(tx)
    svc = make_services(store, fast_hasher)
    service = SearchService(store, clock=svc.clock)
    assert [h.note_id for h in service.search(ws.owner, "heliograph", strategies=[LEXICAL]).hits] == [titled]
    later = svc.notes.create(ws.owner, title="Heliograph field manual")
    found = [h.note_id for h in service.search(ws.owner, "heliograph", strategies=[LEXICAL]).hits]
    assert sorted(found) == sorted([titled, later.id])
