"""What NoteService hands back: a note's summary, a page of them, a whole note with its
blocks' provenance, and the results of its writes (``as_dict`` is each one's JSON)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastpad.notes import Block, NoteMeta
from fastpad.store import BlockRow, NoteRow


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


@dataclass(frozen=True)
class NoteSummary:
    id: str
    title: str
    types: tuple[str, ...]
    frontier: str
    archived: bool
    trashed: bool
    archived_at: datetime | None
    trashed_at: datetime | None
    created_at: datetime
    updated_at: datetime
    aliases: tuple[str, ...] = ()  # former titles: [[links]] to them still resolve here

    @classmethod
    def from_row(cls, row: NoteRow, aliases: Iterable[str] = ()) -> "NoteSummary":
        return cls(row.id, row.title, tuple(row.types), row.frontier, row.archived_at is not None,
                   row.trashed_at is not None, row.archived_at, row.trashed_at, row.created_at, row.updated_at,
                   tuple(aliases))

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "title": self.title, "types": list(self.types), "frontier": self.frontier,
            "archived": self.archived, "trashed": self.trashed, "archived_at": _iso(self.archived_at),
            "trashed_at": _iso(self.trashed_at), "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at), "aliases": list(self.aliases),
        }


@dataclass(frozen=True)
class NotePage:
    items: list[NoteSummary]
    next_cursor: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"items": [i.as_dict() for i in self.items], "next_cursor": self.next_cursor}


@dataclass(frozen=True)
class NoteView:
    id: str
    title: str
    types: tuple[str, ...]
    properties: dict[str, Any]
    frontier: str
    blocks: list[dict[str, Any]]  # id, type, text, attrs, origin, review_state
    archived: bool
    trashed: bool
    created_at: datetime
    updated_at: datetime
    archived_at: datetime | None = None
    trashed_at: datetime | None = None
    # Set by a create only: the given block ids another note already held (old id → the id
    # minted for it here). None on every other view, whose as_dict leaves it out.
    reassigned_block_ids: dict[str, str] | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id, "title": self.title, "types": list(self.types), "properties": self.properties,
            "frontier": self.frontier, "blocks": [dict(b) for b in self.blocks], "archived": self.archived,
            "trashed": self.trashed, "archived_at": _iso(self.archived_at), "trashed_at": _iso(self.trashed_at),
            "created_at": _iso(self.created_at), "updated_at": _iso(self.updated_at),
        }
        if self.reassigned_block_ids is not None:
            out["reassigned_block_ids"] = dict(self.reassigned_block_ids)
        return out

    def block_list(self) -> list[Block]:
        return as_blocks(self.blocks)


@dataclass(frozen=True)
class OpsResult:
    frontier: str
    note_id: str

    def as_dict(self) -> dict[str, str]:
        return {"frontier": self.frontier, "note_id": self.note_id}


@dataclass(frozen=True)
class NoteDraft:
    """A new note as :meth:`NoteService.draft` checked it, before anything is written."""

    meta: NoteMeta
    blocks: list[Block]
    reassigned_block_ids: dict[str, str]


@dataclass(frozen=True)
class NoteEdit:
    """What ``NoteService.apply_edit`` did: the note's version around it, and its blocks
    (with their provenance) before it."""

    frontier_before: str
    frontier_after: str
    before: list[BlockRow]


def as_blocks(blocks: list[dict[str, Any]]) -> list[Block]:
    return [Block(b["id"], b["type"], b["text"], b["attrs"]) for b in blocks]
