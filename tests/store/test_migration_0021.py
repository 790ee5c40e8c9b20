"""Migration 21 on a database that already holds notes: their blocks and titles are found by no
word until the deployment's backfill computes their lexical text, then by every word but a
secret's, and the chunks of a note holding a secret are cut again without it."""

from __future__ import annotations

from fastpad.search.indexing import backfill_lexical_texts, note_chunks
from fastpad.store.search_index import SearchFilter
from tests.helpers_store import lexical, make_services
from tests.store.old_schema import old_note

PASSWORD = "Wm7qZt2xKp9Lv4Rb"


def test_blocks_written_before_version_21_are_indexed_without_their_secrets(make_store, fast_hasher) -> None:
    old = make_store(migrate_to=20)
    url = make_store.last_url()
    svc = make_services(old, fast_hasher)
    ws = svc.workspace()
    note_id, _ = old_note(old, ws.id, ws.owner_id, title=f"Vault password: {PASSWORD}", at=svc.clock(),
                          texts=["the heliograph station", f"password: {PASSWORD}"])
    old.close()

    store = make_store(url=url)
    with store.read(ws.id) as tx:
        assert lexical(tx, "heliograph") == [] and lexical(tx, PASSWORD) == []
    with store.write(ws.id) as tx:
        assert backfill_lexical_texts(tx) == 1  # one note held a secret: its chunks were cut again
    with store.read(ws.id) as tx:
        assert [h.note_id for h in lexical(tx, "heliograph")] == [note_id]
        assert [h.note_id for h in lexical(tx, "password")] == [note_id]
        assert lexical(tx, PASSWORD) == []
        assert [n for n, _ in tx.search_index.lexical_titles('"vault"', SearchFilter(), limit=5)] == [note_id]
        assert tx.search_index.lexical_titles(f'"{PASSWORD.lower()}"', SearchFilter(), limit=5) == []
        row = tx.note(note_id)
        embedded = "\n".join(chunk.embed_text for _, chunk in note_chunks(row, tx.blocks(note_id)))
        stored = {c.digest for c in tx.search_index.note_chunks(note_id)}
        assert "heliograph" in embedded and PASSWORD not in embedded and "Vault password" in embedded
        assert stored == {c.digest for c, _ in note_chunks(row, tx.blocks(note_id))}
    with store.write(ws.id) as tx:
        assert backfill_lexical_texts(tx) == 0  # nothing left: a no-op on every later open
