"""A note's search chunks, kept in step by the write path.

``index_note_chunks(tx, write)`` is the write path's search step: it runs
inside ``NoteService._commit``, in the transaction that writes the blocks, so
the chunk table never disagrees with committed text. It re-chunks the note
(``chunker.chunk_note``) whenever its blocks, title, types or properties
change, and the store rewrites only the chunk rows that differ.

A write that names the blocks it edited (``NoteWrite.block_edits``: typing,
which changes text and nothing else) re-chunks only the sections those blocks
sit in — a section is the run of blocks under one heading, and chunks never
cross one — and keeps every other stored chunk as it is, renumbered. That is
exactly what re-chunking the whole note would give, as long as what every
chunk's prefix carries is unchanged: the note's title, types and date (such a
write changes none of them) and the titles its blocks link to (checked: an
edit that changes an edited block's links, or a heading's text, re-chunks the
whole note from the stored blocks).

``note_chunks`` is the same computation from what a transaction reads; the
embedding worker uses it to get the text behind a stored digest (the chunk
table holds no text), so what is embedded is exactly what was chunked.

The prefix's date is the note's own ``date`` property when it has one (a
daily note, a meeting), else the day it was created — not the last edit, so a
chunk nobody touched keeps its digest and its vector across edits elsewhere.
Linked entities are the titles the note's blocks link to.

No secret is indexed, for anyone (:func:`lexical_text`): the lexical index reads each block's
text with its secret spans taken out (``blocks.lexical_text``, migration 21), and chunks — what is
embedded — are cut from the same text. Every reader but a person sees a secret masked, and a search
that matched a correct guess of it (or ranked it closer) and not a wrong one would tell that reader
the value. The owner searching for their own secret's value does not find it either: one index for
everyone keeps the write path single and the index small, and a person reads the note to see it.
``NoteService._commit`` hands the store :func:`lexical_text`, so the statements that write a text
or a title write its lexical text with it; the step fills whatever a write left without one (NULL:
found by no word meanwhile); rows written before migration 21 are filled when the deployment opens
(:func:`backfill_lexical_texts`). Titles are indexed less their secrets the same way
(``notes.lexical_title``).
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from fastpad.knowledge.wikilinks import extract_links
from fastpad.notes.blocks import HEADING, Block, NoteMeta
from fastpad.outbound.secrets import find_secrets
from fastpad.search.chunker import Chunk, chunk_note, chunk_section, is_leaf_section, section_path
from fastpad.store import BlockEdits, BlockRow, NoteRow, NoteWrite, WorkspaceTx
from fastpad.store.search_index import ChunkRow, provenance_bit


@lru_cache(maxsize=8192)
def lexical_text(text: str) -> str:
    """``text`` with every secret span taken out (a space in its place): what search may match.
    Kept for the texts seen last: a structural edit re-chunks every block of its note, unchanged ones
    included, and detection over 2,000 blocks cost a third of such a write."""
    spans = find_secrets(text)
    if not spans:
        return text
    parts, position = [], 0
    for span in spans:
        parts += [text[position:span.start], " "]
        position = span.end
    return "".join([*parts, text[position:]])


def fill_lexical_texts(tx: WorkspaceTx, note_id: str | None = None, *, batch: int = 500) -> set[str]:
    """Compute the lexical text of every block, and the lexical title of every note, left without
    one (of ``note_id``, or of the workspace); returns the notes where a text differs from the
    lexical one — those holding a secret."""
    with_secrets: set[str] = set()
    while titles := tx.search_index.notes_without_lexical_title(note_id, limit=batch):
        lexical_titles = [(note, lexical_text(title)) for note, title in titles]
        with_secrets |= {note for (note, title), (_, lexical) in zip(titles, lexical_titles) if lexical != title}
        tx.search_index.set_lexical_titles(lexical_titles)
    while rows := tx.search_index.blocks_without_lexical_text(note_id, limit=batch):
        texts = [(note, block_id, lexical_text(text)) for note, block_id, text in rows]
        with_secrets |= {note for (note, _, text), (_, _, lexical) in zip(rows, texts) if lexical != text}
        tx.search_index.set_lexical_texts(texts)
    return with_secrets


def backfill_lexical_texts(tx: WorkspaceTx) -> int:
    """Migration 20's backfill: every block's lexical text, and the chunks of the notes holding a
    secret cut again from text without it (their old vectors are swept as unreferenced)."""
    notes = fill_lexical_texts(tx)
    for note_id in sorted(notes):
        row = tx.note(note_id)
        if row is not None:
            tx.search_index.replace_chunks(note_id, [stored for stored, _ in note_chunks(row, tx.blocks(note_id))])
    return len(notes)


def index_note_chunks(tx: WorkspaceTx, write: NoteWrite) -> None:
    """The write path's search step (see the module docstring)."""
    fill_lexical_texts(tx, write.note_id)  # what the write left unfilled: nothing, for _commit's (two indexed reads)
    if (write.blocks is None and write.block_edits is None and write.title is None and write.types is None
            and write.properties is None):
        return  # archive, trash and their reverses change no text
    row = tx.note(write.note_id)
    if row is None:
        return
    if write.blocks is None and write.block_edits is not None and _rechunk_sections(tx, row, write.block_edits):
        return
    blocks = write.blocks if write.blocks is not None else tx.blocks(write.note_id)
    tx.search_index.replace_chunks(write.note_id, [stored for stored, _ in note_chunks(row, blocks)])


def note_chunks(row: NoteRow, blocks: Sequence[BlockRow]) -> list[tuple[ChunkRow, Chunk]]:
    """The note's chunks as stored (``ChunkRow``) and with their text (``Chunk``)."""
    chunks = chunk_note(
        row.id,
        _meta(row),
        [_block(b) for b in blocks],
        linked_entities=_linked_titles(blocks),
        updated_at=note_date(row.properties, row.created_at),
    )
    return _with_masks(chunks, blocks)


def _rechunk_sections(tx: WorkspaceTx, row: NoteRow, edits: BlockEdits) -> bool:
    """Re-chunk only the sections holding the edited blocks (the module docstring says
    when that equals re-chunking the note). False, having written nothing, when it does
    not apply; the caller then re-chunks the whole note."""
    previous = {b.block_id: b for b in edits.previous}
    edited = [b for b in edits.rows if previous.get(b.block_id) != b]
    if not edited:
        return True
    for block in edited:
        old = previous.get(block.block_id)
        if old is None or old.position != block.position or HEADING in (old.type, block.type):
            return False
        if [r.title for r in extract_links(old.type, old.text)] != [r.title for r in extract_links(block.type, block.text)]:
            return False
    headings = tx.heading_blocks(row.id)
    starts = [h.position for h in headings]
    stored = tx.search_index.note_chunks(row.id)
    meta, day = _meta(row), note_date(row.properties, row.created_at)
    entities = _linked_titles(tx.blocks_with_link_marks(row.id))
    replacing: dict[int, list[ChunkRow]] = {}
    for section in sorted({bisect_right(starts, block.position) - 1 for block in edited}):
        heading = headings[section] if section >= 0 else None
        following = headings[section + 1] if section + 1 < len(headings) else None
        body = tx.blocks_between(row.id, -1 if heading is None else heading.position,
                                 None if following is None else following.position)
        leaf = heading is not None and is_leaf_section(_block(heading), None if following is None else _block(following))
        chunks = chunk_section(
            row.id, meta, section_path([_block(h) for h in headings[:section + 1]]),
            _block(heading) if leaf and heading is not None else None, [_block(b) for b in body],
            linked_entities=entities, updated_at=day,
        )
        members = {b.block_id for b in body} | ({heading.block_id} if heading is not None else set())
        old = [i for i, chunk in enumerate(stored) if chunk.block_ids and chunk.block_ids[0] in members]
        if not old or old != list(range(old[0], old[-1] + 1)):
            return False  # nowhere to put the section's chunks among the stored ones
        replacing[old[0]] = [stored_row for stored_row, _ in _with_masks(chunks, body + ([heading] if heading else []))]
        for i in old[1:]:
            replacing[i] = []
    after: list[ChunkRow] = []
    for i, chunk in enumerate(stored):
        after += replacing.get(i, [chunk])
    after = [c if c.ordinal == i else replace(c, ordinal=i) for i, c in enumerate(after)]
    tx.search_index.replace_chunks(row.id, after, before=stored)
    return True


def _with_masks(chunks: list[Chunk], blocks: Iterable[BlockRow]) -> list[tuple[ChunkRow, Chunk]]:
    provenance = {b.block_id: provenance_bit(b.origin, b.review_state) for b in blocks}
    out = []
    for chunk in chunks:
        mask = 0
        for block_id in chunk.block_ids:
            mask |= provenance[block_id]
        out.append((ChunkRow(chunk.id, chunk.note_id, chunk.ordinal, chunk.block_ids, chunk.heading_path,
                             chunk.prefix, chunk.digest, mask), chunk))
    return out


def _meta(row: NoteRow) -> NoteMeta:
    """The note's metadata as chunks carry it: the title in their prefix is embedded, less its secrets."""
    return NoteMeta(lexical_text(row.title), tuple(row.types), dict(row.properties))


def _block(row: BlockRow) -> Block:
    """The block as it is chunked and embedded: its text less its secrets."""
    return Block(row.block_id, row.type, lexical_text(row.text), row.attrs)


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
