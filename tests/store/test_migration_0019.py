"""Migration 19 on a database that already holds notes: their titles are indexed
(SQLite fills the title index from notes; PostgreSQL computes the generated column)."""

from __future__ import annotations

from fastpad.notes import Block
from fastpad.search.fusion import LEXICAL
from fastpad.search.service import SearchService
from tests.helpers_store import make_services


def test_notes_written_before_version_19_are_found_by_a_word_of_their_title(make_store, fast_hasher) -> None:
    old = make_store(migrate_to=18)
    url = make_store.last_url()
    svc = make_services(old, fast_hasher)
    ws = svc.workspace()
    titled = svc.notes.create(ws.owner, title="Heliograph signalling", blocks=[Block(None, "paragraph", "Mirrors.")])
    old.close()

    store = make_store(url=url)
    svc = make_services(store, fast_hasher)
    service = SearchService(store, clock=svc.clock)
    assert [h.note_id for h in service.search(ws.owner, "heliograph", strategies=[LEXICAL]).hits] == [titled.id]
    later = svc.notes.create(ws.owner, title="Heliograph field manual")
    found = [h.note_id for h in service.search(ws.owner, "heliograph", strategies=[LEXICAL]).hits]
    assert sorted(found) == sorted([titled.id, later.id])
