"""Block-aligned chunks: what the dense index embeds and what a hit anchors to.

Rules (spec, "What gets indexed"):

* A *section* is the run of sibling blocks under one heading (or before the
  first heading). Chunks never cross a heading: the heading path is the
  chunk's context, carried in its prefix rather than repeated in its body.
* Blocks of a section are packed in order until adding the next would pass
  ``target_chars``. A block is never cut: a block longer than the target — a
  long code fence, a long paragraph — becomes a chunk of its own. A code block
  is one block, so it is never split; a table's rows may be grouped, each row
  whole.
* Consecutive chunks of a section overlap by one block: each chunk after the
  first starts with the last block of the one before, so a fact stated across
  a boundary survives in one piece. The exception is a block that was a chunk
  of its own for being over the target: it is not repeated (that would only
  make a second over-size chunk).
* Every chunk carries a structural prefix — note title, heading path, types,
  linked entities, date — prepended to the text that is embedded. All of it
  comes from the note's structure and the caller; nothing is generated.

Why 800 characters by default: the default model (all-MiniLM-L6-v2) reads at
most 256 word pieces and silently drops the rest. English runs about 4–4.5
characters per word piece, so ~800 characters of body is ~180–200 pieces and
leaves ~55–75 for the prefix (capped at :data:`PREFIX_MAX_CHARS`): a packed
chunk is embedded whole. It is also two to four typical note paragraphs — one
coherent passage, which is what a hit's snippet and anchors should point at.
Only a single block longer than that is embedded partially (its head), and it
stays whole in the chunk text for lexical search and for display.

Dividers and empty blocks carry no text and are skipped. A heading with no
content under it at all (a leaf with no body) becomes a chunk of that heading
block, so its words still reach the index.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, datetime
from typing import Iterable, Sequence

from fastpad.notes.blocks import (
    CALLOUT,
    CODE,
    DIVIDER,
    HEADING,
    LIST_TYPES,
    QUOTE,
    TABLE_ROW,
    TASK,
    Block,
    NoteMeta,
    table_cells,
)

DEFAULT_TARGET_CHARS = 800
MAX_PREFIX_ENTITIES = 8
PREFIX_MAX_CHARS = 300
HEADING_SEPARATOR = " › "


@dataclass(frozen=True)
class Chunk:
    """One indexed passage of a note."""

    id: str  # stable: derived from the note id and the anchored block ids
    note_id: str
    ordinal: int  # position among the note's chunks
    block_ids: tuple[str, ...]  # anchors, in document order
    heading_path: tuple[str, ...]
    prefix: str  # structural context, prepended before embedding
    text: str  # the blocks' text, one block per line group

    @property
    def embed_text(self) -> str:
        """What the embedding provider is given: prefix, blank line, body."""
        return f"{self.prefix}\n\n{self.text}" if self.prefix else self.text

    @property
    def digest(self) -> str:
        """SHA-256 of :attr:`embed_text`: the embedding worker skips chunks whose digest it has."""
        return hashlib.sha256(self.embed_text.encode()).hexdigest()


def chunk_note(
    note_id: str,
    meta: NoteMeta,
    blocks: Sequence[Block],
    *,
    linked_entities: Iterable[str] = (),
    updated_at: datetime | date | str | None = None,
    target_chars: int = DEFAULT_TARGET_CHARS,
) -> list[Chunk]:
    """Split a note's blocks into block-aligned chunks (pure; see the module docstring)."""
    if target_chars < 1:
        raise ValueError("target_chars must be positive")
    entities = _unique(e.strip() for e in linked_entities if e and e.strip())
    day = _date_text(updated_at)

    chunks: list[Chunk] = []
    for heading_path, heading_block, body in _sections(blocks):
        chunks += _section_chunks(note_id, meta, heading_path, heading_block, body, entities, day, target_chars,
                                  len(chunks))
    return chunks


def chunk_section(
    note_id: str,
    meta: NoteMeta,
    heading_path: tuple[str, ...],
    leaf_heading: Block | None,
    blocks: Sequence[Block],
    *,
    linked_entities: Iterable[str] = (),
    updated_at: datetime | date | str | None = None,
    target_chars: int = DEFAULT_TARGET_CHARS,
    ordinal: int = 0,
) -> list[Chunk]:
    """The chunks of one section, exactly as :func:`chunk_note` makes them, for a caller
    that re-chunks only the sections an edit touched: ``blocks`` are the blocks under the
    section's heading up to the next heading (dividers and empty blocks are skipped here
    as there), ``heading_path`` is :func:`section_path` of the headings up to and including
    the section's own, and ``leaf_heading`` is that heading when it has no subheadings
    under it (:func:`is_leaf_section`). ``linked_entities`` are the whole note's."""
    if any(block.type == HEADING for block in blocks):
        raise ValueError("a section's blocks hold no heading")
    entities = _unique(e.strip() for e in linked_entities if e and e.strip())
    body = [block for block in blocks if block.type != DIVIDER and block.text.strip()]
    return _section_chunks(note_id, meta, heading_path, leaf_heading if not body else None, body, entities,
                           _date_text(updated_at), target_chars, ordinal)


def section_path(headings: Sequence[Block]) -> tuple[str, ...]:
    """The heading path of the section under the last of ``headings`` (a note's headings
    in order, up to that one), as :func:`chunk_note` computes it."""
    stack: list[tuple[int, str]] = []
    for block in headings:
        level = _level(block)
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, block.text.strip()))
    return tuple(text for _, text in stack if text)


def is_leaf_section(heading: Block, following: Block | None) -> bool:
    """Whether the section under ``heading`` has no subsections: the next heading
    (``following``; None if there is none) is not deeper."""
    return following is None or _level(following) <= _level(heading)


def _level(block: Block) -> int:
    return int(block.attrs.get("level", 1) or 1)


def _section_chunks(
    note_id: str,
    meta: NoteMeta,
    heading_path: tuple[str, ...],
    heading_block: Block | None,
    body: list[Block],
    entities: list[str],
    day: str,
    target_chars: int,
    ordinal: int,
) -> list[Chunk]:
    header_rows = _table_headers(body)
    if body:
        groups = _pack(body, target_chars)
    elif heading_block is not None and heading_block.text.strip():
        groups = [[heading_block]]  # a leaf heading with nothing under it
    else:
        groups = []
    chunks = []
    for group in groups:
        columns = _columns_for(group, header_rows)
        prefix = _prefix(meta, heading_path, entities, day, columns)
        text = "\n".join(_render(block) for block in group)
        block_ids = tuple(_block_id(block) for block in group)
        chunks.append(
            Chunk(
                id=_chunk_id(note_id, block_ids),
                note_id=note_id,
                ordinal=ordinal + len(chunks),
                block_ids=block_ids,
                heading_path=heading_path,
                prefix=prefix,
                text=text,
            )
        )
    return chunks


# --- sections -----------------------------------------------------------------


def _sections(blocks: Sequence[Block]):
    """Yield (heading path, leaf heading block or None, body blocks) in document order.

    The heading block is given only for a heading with no body and no
    subheadings under it, so that its words can still make a chunk.
    """
    sections: list[tuple[tuple[str, ...], Block | None, int, list[Block]]] = []
    stack: list[tuple[int, str]] = []  # (level, heading text)
    current: tuple[tuple[str, ...], Block | None, int, list[Block]] = ((), None, 0, [])
    for block in blocks:
        if block.type == HEADING:
            sections.append(current)
            level = _level(block)
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, block.text.strip()))
            current = (tuple(text for _, text in stack if text), block, level, [])
        elif block.type != DIVIDER and block.text.strip():
            current[3].append(block)
    sections.append(current)
    for position, (path, heading, level, body) in enumerate(sections):
        following = sections[position + 1] if position + 1 < len(sections) else None
        is_leaf = heading is not None and (following is None or following[2] <= level)
        if body or is_leaf:
            yield path, (heading if is_leaf and not body else None), body


# --- packing ------------------------------------------------------------------


def _pack(body: list[Block], target: int) -> list[list[Block]]:
    """Greedy packing with one block of overlap; a block is never cut.

    A chunk holds at least one block it is the first to hold. Its size,
    counting the carried block, stays within ``target`` unless that carried
    block and the one new block are together longer — then the chunk is just
    those two (never more than twice the target), and the new block is carried
    on, first, into the next chunk.
    """
    sizes = [len(_render(block)) for block in body]
    groups: list[list[int]] = []
    carry: int | None = None  # the block repeated at the start of the next chunk
    i = 0
    while i < len(body):
        if sizes[i] > target:
            groups.append([i])  # alone, whole, and not repeated
            carry = None
            i += 1
            continue
        group = [] if carry is None else [carry]
        size = 0 if carry is None else sizes[carry] + 1
        group.append(i)
        size += sizes[i]
        i += 1
        while i < len(body) and sizes[i] <= target and size + 1 + sizes[i] <= target:
            group.append(i)
            size += 1 + sizes[i]
            i += 1
        groups.append(group)
        carry = group[-1]
    return [[body[j] for j in group] for group in groups]


# --- rendering and prefix -----------------------------------------------------


def _render(block: Block) -> str:
    text = block.text
    if block.type in LIST_TYPES:
        indent = "  " * int(block.attrs.get("depth", 0) or 0)
        if block.attrs.get("ordered"):
            marker = f"{block.attrs.get('number', 1)}{block.attrs.get('marker', '.')}"
        else:
            marker = block.attrs.get("marker", "-") or "-"
        if block.type == TASK:
            marker += " [x]" if block.attrs.get("checked") else " [ ]"
        return f"{indent}{marker} {text}"
    if block.type == QUOTE:
        return "\n".join(f"> {line}" for line in text.split("\n"))
    if block.type == CALLOUT:
        title = block.attrs.get("title") or ""
        kind = block.attrs.get("kind") or "note"
        head = f"[!{kind}] {title}".rstrip()
        return f"{head}\n{text}" if text else head
    if block.type == CODE:
        fence = block.attrs.get("fence") or "```"
        return f"{fence}{block.attrs.get('language') or ''}\n{text}\n{fence}"
    if block.type == TABLE_ROW:
        row = text.strip()
        return row if row.startswith("|") else f"| {row} |"
    return text


def _table_headers(body: list[Block]) -> dict[int, str]:
    """For each table row in the body (keyed by object id), its table's header cells."""
    headers: dict[int, str] = {}
    current: str | None = None
    previous_was_row = False
    for block in body:
        if block.type == TABLE_ROW:
            if not previous_was_row:
                current = None
            if block.attrs.get("header"):
                current = " | ".join(cell for cell in table_cells(block.text) if cell)
            elif current:
                headers[id(block)] = current
            previous_was_row = True
        else:
            previous_was_row = False
    return headers


def _columns_for(group: list[Block], headers: dict[int, str]) -> str:
    """A table's column names, when the chunk holds its rows but not its header row."""
    if any(block.type == TABLE_ROW and block.attrs.get("header") for block in group):
        return ""
    for block in group:
        if id(block) in headers:
            return headers[id(block)]
    return ""


def _prefix(meta: NoteMeta, path: tuple[str, ...], entities: list[str], day: str, columns: str) -> str:
    lines = []
    if meta.title.strip():
        lines.append(f"Title: {meta.title.strip()}")
    if path:
        lines.append(f"Section: {HEADING_SEPARATOR.join(path)}")
    if meta.types:
        lines.append(f"Types: {', '.join(meta.types)}")
    if entities:
        shown = entities[:MAX_PREFIX_ENTITIES]
        more = len(entities) - len(shown)
        lines.append(f"Entities: {', '.join(shown)}" + (f" (+{more} more)" if more else ""))
    if day:
        lines.append(f"Date: {day}")
    if columns:
        lines.append(f"Columns: {columns}")
    return "\n".join(_fit(lines, PREFIX_MAX_CHARS))


def _fit(lines: list[str], limit: int) -> list[str]:
    """Shorten the longest field (with an ellipsis) until the prefix fits; drop a field
    only when it cannot be shortened usefully. The title line goes last."""

    def total() -> int:
        return len("\n".join(lines))

    while lines and total() > limit:
        k = max(range(len(lines)), key=lambda j: len(lines[j]))
        label, _, value = lines[k].partition(": ")
        keep = len(value) - (total() - limit) - 1
        if keep >= 8:
            lines[k] = f"{label}: {value[:keep].rstrip()}…"
        elif len(lines) > 1:
            del lines[k if k != 0 else len(lines) - 1]
        else:
            lines[0] = lines[0][: limit - 1].rstrip() + "…"
    return lines


def _date_text(value: datetime | date | str | None) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, (datetime, date)):
        return value.date().isoformat() if isinstance(value, datetime) else value.isoformat()
    text = str(value).strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        return text[:10]


def _block_id(block: Block) -> str:
    if not block.id:
        raise ValueError("every block of an indexed note needs an id (anchor)")
    return block.id


def _chunk_id(note_id: str, block_ids: tuple[str, ...]) -> str:
    digest = hashlib.sha256("\x1f".join((note_id, *block_ids)).encode()).hexdigest()
    return f"{note_id}:{digest[:16]}"


def _unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for value in values:
        key = value.casefold()
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out
