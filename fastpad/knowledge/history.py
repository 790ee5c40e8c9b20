"""HistoryService: one block as it stands — text, type, who last wrote it,
origin, review state and when. Not a version log (spec: MCP › fastpad_history)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastpad.errors import NotFound
from fastpad.notes import is_ulid
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ
from fastpad.store import Store
from fastpad.store.block_history import BlockHistory, BlockStateRow


@dataclass(frozen=True)
class Author:
    kind: str  # person | agent
    id: str
    token_id: str | None  # the credential it wrote with (None: a web session)
    name: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "token_id": self.token_id, "name": self.name}


@dataclass(frozen=True)
class BlockState:
    note_id: str
    block_id: str
    position: int
    type: str
    text: str
    attrs: dict[str, Any]
    origin: str
    review_state: str
    author: Author | None  # None: written before authorship was recorded
    written_at: datetime | None
    updated_at: datetime

    @classmethod
    def from_row(cls, row: BlockStateRow) -> "BlockState":
        author = None
        if row.author_kind is not None and row.author_id is not None:
            author = Author(row.author_kind, row.author_id, row.author_token_id, row.author_name)
        return cls(row.note_id, row.block_id, row.position, row.type, row.text, row.attrs, row.origin,
                   row.review_state, author, row.written_at, row.updated_at)

    def as_dict(self) -> dict[str, Any]:
        return {
            "note_id": self.note_id, "block_id": self.block_id, "position": self.position, "type": self.type,
            "text": self.text, "attrs": self.attrs, "origin": self.origin, "review_state": self.review_state,
            "author": None if self.author is None else self.author.as_dict(),
            "written_at": None if self.written_at is None else self.written_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }


class HistoryService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def block(self, principal: Principal, note_id: str, block_id: str) -> BlockState:
        """OutOfScope for a note outside the caller's note set (decided before any lookup, so
        alike whether or not it exists); NotFound for a block the note does not have."""
        principal.require(NOTES_READ)
        missing = NotFound(detail=f"no block {block_id} in note {note_id}",
                           extra={"note_id": note_id, "block_id": block_id}, next_call=f"GET /v1/notes/{note_id}")
        if not (is_ulid(note_id) and is_ulid(block_id)):
            raise missing
        principal.require_note(note_id)
        with self.store.read(principal.workspace_id) as tx:
            row = BlockHistory(tx).block(note_id, block_id)
        if row is None:
            raise missing
        return BlockState.from_row(row)
