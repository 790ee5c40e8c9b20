"""The block model: what a note is made of, independent of Loro and Markdown.

A block's ``text`` is inline Markdown source (emphasis, links and code spans
stay as the writer typed them); its ``attrs`` hold what the block's Markdown
prefix says. The attribute keys per type are fixed here so the document, the
codec and the store agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

HEADING = "heading"
PARAGRAPH = "paragraph"
LIST_ITEM = "list_item"
TASK = "task"
QUOTE = "quote"
CALLOUT = "callout"
CODE = "code"
DIVIDER = "divider"
TABLE_ROW = "table_row"

# type -> attribute defaults. Every attribute a block carries is listed here.
BLOCK_TYPES: dict[str, dict[str, Any]] = {
    HEADING: {"level": 1},
    PARAGRAPH: {},
    # marker: "-", "*" or "+" for bullets; "." or ")" for ordered items.
    LIST_ITEM: {"ordered": False, "marker": "-", "number": 1, "depth": 0},
    TASK: {"ordered": False, "marker": "-", "number": 1, "depth": 0, "checked": False},
    QUOTE: {},
    # fold: "" (plain), "+" (open) or "-" (folded), as Obsidian writes it.
    CALLOUT: {"kind": "note", "fold": "", "title": ""},
    CODE: {"language": "", "fence": "```"},
    DIVIDER: {"marker": "---"},
    # delimiter: the header row's alignment line, e.g. "| --- | :-: |".
    TABLE_ROW: {"header": False, "delimiter": ""},
}

LIST_TYPES = frozenset({LIST_ITEM, TASK})


def normalize_attrs(block_type: str, attrs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The block's full attribute set: defaults filled in, unknown keys dropped."""
    defaults = BLOCK_TYPES[block_type]
    given = attrs or {}
    return {key: given.get(key, default) for key, default in defaults.items()}


@dataclass(frozen=True)
class Block:
    """One block of a note. ``id`` is None only for a parsed block with no anchor."""

    id: str | None
    type: str
    text: str = ""
    attrs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.type not in BLOCK_TYPES:
            raise ValueError(f"unknown block type {self.type!r}")
        object.__setattr__(self, "attrs", normalize_attrs(self.type, self.attrs))

    def with_id(self, block_id: str) -> "Block":
        return Block(block_id, self.type, self.text, self.attrs)


# The longest title a note may have, on both backends: PostgreSQL indexes titles in a btree, whose
# entries must stay under about 2,700 bytes — 500 characters of up to 4 UTF-8 bytes each do.
MAX_TITLE_CHARS = 500


@dataclass(frozen=True)
class NoteMeta:
    """Note metadata carried by the frontmatter: title, types and properties."""

    title: str = ""
    types: tuple[str, ...] = ()
    properties: dict[str, Any] = field(default_factory=dict)


def heading_title(blocks: Iterable[Block]) -> str:
    """The title a note without one takes from its text: its first level-1 heading's, or ``""``.
    Markdown names a document by its ``# Heading``, and Obsidian, GitHub and most editors show
    it as the title; a title is never taken from a lower heading, which names a section. A
    heading longer than a title may be is cut to ``MAX_TITLE_CHARS`` (at a word, with "…")."""
    title = next((b.text.strip() for b in blocks if b.type == HEADING and b.attrs.get("level") == 1), "")
    if len(title) > MAX_TITLE_CHARS:
        title = title[:MAX_TITLE_CHARS - 1].rsplit(" ", 1)[0].rstrip() + "…"
    return title


def table_cells(row_text: str) -> list[str]:
    """Split a table row's source into trimmed cells; ``\\|`` stays inside its cell."""
    body = row_text.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells, current, escaped = [], [], False
    for char in body:
        if char == "|" and not escaped:
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        escaped = char == "\\" and not escaped
    cells.append("".join(current).strip())
    return cells
