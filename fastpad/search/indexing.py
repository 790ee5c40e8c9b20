"""A note's search chunks, kept in step by the write path.

``index_note_chunks(tx, write)`` is the write path's search step: it runs
inside ``NoteService._commit``, in the transaction that writes the blocks, so
the chunk table never disagrees with committed text. It re-chunks the note
(``chunker.chunk_note``) whenever its blocks, title, types or properties
change, and the store rewrites only the chunk rows that differ.

``note_chunks`` is the same computation from what a transaction reads; the
embedding worker uses it to get the text behind a stored digest (the chunk
table holds no text), so what is embedded is exactly what was chunked.

The prefix's date is the note's own ``date`` property when it has one (a
daily note, a meeting), else the day it was created — not the last edit, so a
chunk nobody touched keeps its digest and its vector across edits elsewhere.
Linked entities are the titles the note's blocks link to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from fastpad.knowledge.wikilinks import extract_links
from fastpad.notes.blocks import Block, NoteMeta
from fastpad.search.chunker import Chunk, chunk_note
from fastpad.store import BlockRow, NoteRow, NoteWrite, WorkspaceTx
from fastpad.store.search_index import ChunkRow, provenance_bit


def index_note_chunks(tx: WorkspaceTx, write: NoteWrite) -> None:
    """The write path's search step (see the module docstring)."""
    if write.blocks is None and write.title is None and write.types is None and write.properties is None:
        return  # archive, trash and their reverses change no text
    row = tx.note(write.note_id)
    if row is None:
        return
    blocks = write.blocks if write.blocks is not None else tx.blocks(write.note_id)
    tx.search_index.replace_chunks(write.note_id, [stored for stored, _ in note_chunks(row, blocks)])


def note_chunks(row: NoteRow, blocks: Sequence[BlockRow]) -> list[tuple[ChunkRow, Chunk]]:
    """The note's chunks as stored (``ChunkRow``) and with their text (``Chunk``)."""
    provenance = {b.block_id: provenance_bit(b.origin, b.review_state) for b in blocks}
    chunks = chunk_note(
        row.id,
        NoteMeta(row.title, tuple(row.types), dict(row.properties)),
        [Block(b.block_id, b.type, b.text, b.attrs) for b in blocks],
        linked_entities=_linked_titles(blocks),
        updated_at=note_date(row.properties, row.created_at),
    )
    out = []
    for chunk in chunks:
        mask = 0
        for block_id in chunk.block_ids:
            mask |= provenance[block_id]
        out.append((ChunkRow(chunk.id, chunk.note_id, chunk.ordinal, chunk.block_ids, chunk.heading_path,
                             chunk.prefix, chunk.digest, mask), chunk))
    return out


def note_date(properties: Mapping[str, Any], created_at: datetime) -> date | str:
    value = properties.get("date") if isinstance(properties, Mapping) else None
    if isinstance(value, str) and len(value) >= 10:
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            pass
    return created_at.date()


def _linked_titles(blocks: Iterable[BlockRow]) -> list[str]:
    return [ref.title for b in blocks for ref in extract_links(b.type, b.text)]
