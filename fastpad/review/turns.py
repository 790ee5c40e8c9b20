"""A turn (one proposal) as the service hands it out, how its parts are stored, and the
other shapes reading, reviewing and deciding return.

Statuses: ``pending`` (nothing decided), ``partially_accepted`` (some of it
landed; the rest may still wait, or was declined), ``accepted`` (everything
landed), ``rejected`` (a person declined it, nothing landed), ``abandoned``
(its agent withdrew it, nothing landed), ``reverted`` (it landed and a person
undid it). A turn is *open* while any block or edge/calendar op still waits.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from fastpad.notes import NoteMeta, serialize_markdown
from fastpad.notes.blocks import Block
from fastpad.review.apply import BlockDiff, Hunk, text_hunks
from fastpad.review.landing import AcceptPlan
from fastpad.review.merge import MergeConflict
from fastpad.review.ops import PERSON_ONLY_KINDS as PERSON_OP_KINDS
from fastpad.review.ops import Op
from fastpad.store.turns import SourceUse, TurnEventRow, TurnRow

PENDING = "pending"
PARTIALLY_ACCEPTED = "partially_accepted"
ACCEPTED = "accepted"
REJECTED = "rejected"
ABANDONED = "abandoned"
REVERTED = "reverted"
STATUSES = (PENDING, PARTIALLY_ACCEPTED, ACCEPTED, REJECTED, ABANDONED, REVERTED)
# A list filter, not a status: a turn with blocks or ops still waiting for a decision,
# whether or not part of it landed already (pending or partially accepted).
WAITING = "waiting"
STATUS_FILTERS = (WAITING, *STATUSES)

GRANT = "grant"  # accepted by its own agent under turns:accept
AUTO_APPLY = "auto_apply"  # landed without review: the token has auto-apply


def status_after(row: TurnRow, *, withdrawn: str = REJECTED) -> str:
    """A turn's status from what landed and what still waits. ``withdrawn`` names the end of
    a turn closed with nothing landed (rejected by a person, abandoned by its agent)."""
    decided = len(row.landed_blocks) + len(row.accepted_ops)
    person_ops = sum(1 for op in row.ops if op["op"] in PERSON_OP_KINDS)
    if not row.pending_blocks and not row.pending_ops and decided == len(row.diffs) + person_ops:
        return ACCEPTED
    if decided:
        return PARTIALLY_ACCEPTED
    return PENDING if row.pending_blocks or row.pending_ops else withdrawn


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


# -- stored shapes ---------------------------------------------------------------------------


def op_to_json(op: Op) -> dict[str, Any]:
    """An op as stored: its members, the handle replaced by the block it resolved to."""
    data: dict[str, Any] = {"op": op.kind}
    for f in fields(op):
        value = getattr(op, f.name)
        if f.name in ("kind", "handle") or value is None:
            continue
        if isinstance(value, datetime):
            value = value.isoformat()
        data[f.name] = list(value) if isinstance(value, tuple) else value
    return data


def block_to_json(block: Block | None) -> dict[str, Any] | None:
    return None if block is None else {"id": block.id, "type": block.type, "text": block.text, "attrs": block.attrs}


def block_from_json(data: dict[str, Any] | None) -> Block | None:
    return None if data is None else Block(data["id"], data["type"], data["text"], data["attrs"])


def diff_to_json(diff: BlockDiff) -> dict[str, Any]:
    """Hunks are not stored: they are recomputed from before/after when read."""
    return {
        "kind": diff.kind, "block_id": diff.block_id, "before": block_to_json(diff.before),
        "after": block_to_json(diff.after), "after_id": diff.after_id, "source_block_ids": list(diff.source_block_ids),
    }


def diff_from_json(data: dict[str, Any]) -> BlockDiff:
    before, after = block_from_json(data["before"]), block_from_json(data["after"])
    if data["kind"] == "inserted":
        hunks: tuple[Hunk, ...] = (Hunk("insert", "", after.text),)  # type: ignore[union-attr]
    elif data["kind"] == "deleted":
        hunks = (Hunk("delete", before.text, ""),)  # type: ignore[union-attr]
    else:
        hunks = text_hunks(before.text, after.text)  # type: ignore[union-attr]
    return BlockDiff(data["kind"], data["block_id"], before, after, hunks, data["after_id"],
                     tuple(data["source_block_ids"]))


def conflict_as_dict(conflict: MergeConflict) -> dict[str, Any]:
    base, ours, theirs = conflict.texts
    return {
        "block_id": conflict.block_id, "kind": conflict.kind, "base": base, "mine": ours, "proposal": theirs,
        "suggestion": None if conflict.suggestion is None else conflict.suggestion.text,
    }


def diff_as_dict(diff: BlockDiff, state: str) -> dict[str, Any]:
    return {
        **diff_to_json(diff), "state": state,
        "hunks": [{"op": h.op, "before": h.before, "after": h.after} for h in diff.hunks],
    }


# -- what the service returns ------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    id: str | None  # None for a dry run
    note_id: str
    status: str
    author_kind: str
    author_id: str
    token_id: str | None
    expected_frontier: str
    ops: tuple[dict[str, Any], ...]
    source_block_ids: tuple[str, ...]
    diffs: tuple[BlockDiff, ...]
    pending_block_ids: tuple[str, ...]
    pending_ops: tuple[int, ...]
    landed_block_ids: tuple[str, ...]
    accepted_ops: tuple[int, ...]
    authority: str | None
    reviewed_at: datetime | None
    review_url: str | None
    created_at: datetime | None
    updated_at: datetime | None
    dry_run: bool = False
    replayed: bool = False  # an idempotent replay of an earlier call
    # A turn that creates its note: the note's title, types and properties (its blocks are the
    # insertions in ``diffs``); the note exists once a first part of the turn is accepted.
    new_note: dict[str, Any] | None = None
    author_name: str | None = None  # who proposed it, as a person reads it (lists for a person)

    @classmethod
    def from_row(cls, row: TurnRow, review_url: str, *, replayed: bool = False,
                 author_name: str | None = None) -> "Turn":
        return cls(
            id=row.id, note_id=row.note_id, status=row.status, author_kind=row.author_kind, author_id=row.author_id,
            token_id=row.token_id, expected_frontier=row.base_frontier, ops=tuple(row.ops),
            source_block_ids=tuple(row.source_block_ids), diffs=tuple(diff_from_json(d) for d in row.diffs),
            pending_block_ids=tuple(row.pending_blocks), pending_ops=tuple(row.pending_ops),
            landed_block_ids=tuple(row.landed_blocks), accepted_ops=tuple(row.accepted_ops), authority=row.authority,
            reviewed_at=row.reviewed_at,
            review_url=review_url, created_at=row.created_at, updated_at=row.updated_at, replayed=replayed,
            new_note=row.proposed_note, author_name=author_name,
        )

    @property
    def open(self) -> bool:
        return self.status in (PENDING, PARTIALLY_ACCEPTED) and bool(self.pending_block_ids or self.pending_ops)

    def block_state(self, block_id: str) -> str:
        """pending, landed, or decided (declined, rejected, abandoned, or reverted)."""
        if block_id in self.pending_block_ids:
            return "pending"
        if block_id in self.landed_block_ids and self.status != REVERTED:
            return "landed"
        return "decided"

    def op_state(self, index: int) -> str:
        """pending, accepted, or decided (declined, rejected, abandoned, or reverted), for an
        edge/calendar op (prose ops: their blocks say)."""
        if index in self.pending_ops:
            return "pending"
        return "accepted" if index in self.accepted_ops and self.status != REVERTED else "decided"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "note_id": self.note_id, "status": self.status, "open": self.open,
            "dry_run": self.dry_run, "replayed": self.replayed,
            "author": {"kind": self.author_kind, "id": self.author_id, "token_id": self.token_id,
                       **({"name": self.author_name} if self.author_name else {})},
            "expected_frontier": self.expected_frontier,
            "ops": [{**op, "state": self.op_state(i)} if op["op"] in PERSON_OP_KINDS else dict(op)
                    for i, op in enumerate(self.ops)],
            "source_block_ids": list(self.source_block_ids),
            "diffs": [diff_as_dict(d, self.block_state(d.block_id)) for d in self.diffs],
            "pending_block_ids": list(self.pending_block_ids), "pending_ops": list(self.pending_ops),
            "landed_block_ids": list(self.landed_block_ids), "accepted_ops": list(self.accepted_ops),
            "authority": self.authority,
            "auto_applied": self.authority == AUTO_APPLY, "reviewed_at": _iso(self.reviewed_at),
            "review_url": self.review_url, "created_at": _iso(self.created_at), "updated_at": _iso(self.updated_at),
            "new_note": self.new_note,
        }


@dataclass(frozen=True)
class AuditEntry:
    """One line of the append-only audit log."""

    seq: int
    turn_id: str
    note_id: str
    action: str
    actor_kind: str
    actor_id: str
    token_id: str | None
    review_state: str | None
    block_ids: tuple[str, ...]
    op_indexes: tuple[int, ...]
    at: datetime
    # Outside the prose: what an accept created or moved, what a revert did with each (ids only).
    effects: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: TurnEventRow) -> "AuditEntry":
        assert row.seq is not None
        return cls(row.seq, row.turn_id, row.note_id, row.action, row.actor_kind, row.actor_id, row.token_id,
                   row.review_state, row.block_ids, row.op_indexes, row.at, dict(row.effects or {}))

    def as_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq, "turn_id": self.turn_id, "note_id": self.note_id, "action": self.action,
            "actor": {"kind": self.actor_kind, "id": self.actor_id, "token_id": self.token_id},
            "review_state": self.review_state, "block_ids": list(self.block_ids),
            "op_indexes": list(self.op_indexes), "effects": dict(self.effects), "at": _iso(self.at),
        }


# -- what reading, reviewing and deciding return ------------------------------------------------------


@dataclass(frozen=True)
class HandledBlock:
    id: str
    type: str
    text: str
    attrs: dict[str, Any]
    origin: str
    review_state: str
    handle: str


@dataclass(frozen=True)
class FetchedNote:
    """A note as an agent reads it to propose: structured blocks with handles. The caller
    renders it, and any text it sends to an agent goes through the outbound path."""

    note_id: str
    title: str
    types: tuple[str, ...]
    properties: dict[str, Any]
    frontier: str
    blocks: tuple[HandledBlock, ...]
    handles_expire_at: datetime

    def markdown(self) -> str:
        """Canonical Markdown, a ``{#ULID}`` anchor after every block."""
        return serialize_markdown(
            NoteMeta(self.title, self.types, self.properties),
            [Block(b.id, b.type, b.text, b.attrs) for b in self.blocks],
        )


@dataclass(frozen=True)
class SourceBlock:
    """A block a turn cites, as the review page shows it (``text`` None: no longer there)."""

    block_id: str
    note_id: str | None
    note_title: str | None
    text: str | None
    retracted_at: datetime | None = None  # a person marked it wrong


@dataclass(frozen=True)
class Retraction:
    """A source block marked retracted, and every block that was accepted from it."""

    block_id: str
    note_id: str
    accepted: list[SourceUse]


@dataclass(frozen=True)
class TurnReview:
    """Everything the review page and ``GET /v1/turns/{id}/diff`` show."""

    turn: Turn
    note_title: str
    author_name: str
    note_moved: bool  # a person (or an earlier accept) changed the note since the agent read it
    merge: AcceptPlan | None  # the three-way merge of the pending blocks, when the note moved
    sources: dict[str, SourceBlock]


@dataclass(frozen=True)
class Decision:
    """What an accept or a revert did."""

    turn: Turn
    frontier: str  # the note's version afterwards
    landed_block_ids: tuple[str, ...]
    merged: bool = False
    kept: tuple[tuple[str, str], ...] = ()  # revert: (block id, why it was left as the person has it)
    # revert: (kind, id, outcome) for each edge, event note and event move the turn made
    # outside its prose (KnowledgeEffects.undo), e.g. ("link", id, "kept_confirmed")
    undone: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class ActivityItem:
    """A turn that reached a note on an agent's authority and waits for a person's look."""

    turn: Turn
    who: str
    note_title: str
    blocks: int
    at: datetime


@dataclass(frozen=True)
class TurnPage:
    items: list[Turn]
    next_cursor: str | None
