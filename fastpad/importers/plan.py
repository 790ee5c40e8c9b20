"""What a source importer decides before anything is written: a ``Plan``.

A source module (``vault``, ``notion``) reads the archive and returns the
notes to create (``NoteDraft``: blocks without ids, title, types, properties,
where its links are resolved from), the attachments to store, the types to
define, and a ledger row for every item it already knows will not become a
note or an attachment. The service then mints ids, picks unique titles,
rewrites links and writes — nothing in a plan touches the store.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field
from typing import Any

from fastpad.importers.ledger import LedgerRow
from fastpad.importers.resolve import PathIndex
from fastpad.importers.rewrite import MissingReason, unresolved
from fastpad.notes import Block


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class NoteDraft:
    item: str  # the archive path (a database row without a page: "<csv path>#row <n>")
    kind: str  # note | canvas | database_row
    digest: str  # of the bytes the note is made from: with the item path, the key its ids are remembered by
    title: str
    blocks: list[Block]  # without ids
    types: tuple[str, ...] = ()
    properties: dict[str, Any] = field(default_factory=dict)
    link_base: str = ""  # the path relative links are resolved from (default: item)
    relations: dict[str, str] = field(default_factory=dict)  # Type.property -> the target item's path
    detail: str = ""  # a remark for the ledger row
    context: str = ""  # where it sits, for people (its folder): tells two notes of one title apart

    @property
    def source(self) -> str:
        return self.link_base or self.item

    @property
    def folder(self) -> str:
        """The archive folder it sat in ("" at the root), '/'-separated: kept on the note."""
        return posixpath.dirname(self.source)


@dataclass(frozen=True)
class AttachmentDraft:
    item: str
    media_type: str
    size: int


@dataclass(frozen=True)
class TypeDraft:
    """A type to define (or extend) for a database: ``properties`` as TypeService takes them."""

    item: str
    name: str
    properties: list[dict[str, Any]]
    rows: int


@dataclass
class Plan:
    source: str  # obsidian | notion | markdown
    drafts: list[NoteDraft]
    attachments: list[AttachmentDraft]
    rows: list[LedgerRow]  # items already decided: skips, views, settings
    index: PathIndex
    types: list[TypeDraft] = field(default_factory=list)
    missing: MissingReason = unresolved  # what a link to nothing is reported as

    def to_write(self) -> dict[str, str]:
        """The items the run writes (attachments, databases, notes): item -> kind."""
        return {**{a.item: "attachment" for a in self.attachments}, **{t.item: "database" for t in self.types},
                **{d.item: d.kind for d in self.drafts}}

    @property
    def item_count(self) -> int:
        """How many item rows the ledger will hold."""
        return len(self.rows) + len(self.attachments) + len(self.types) + len(self.drafts)
