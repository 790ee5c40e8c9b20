"""MemoryService: a designated set of notes (topics) agents read as an index or
one topic at a time (spec: MCP › fastpad_memory).

A topic is an ordinary note plus a name. The index lists names, titles and a
one-line summary taken from the note's first block the reader's trust floor
admits — never a body; ``topic`` returns the note itself. Designating is a
write (``notes:write``, a person or a token) with a change-feed row; a
trashed note drops out of the index until it is restored.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastpad.errors import Conflict, FieldError, NotFound, ValidationFailed
from fastpad.knowledge.note_views import NoteView
from fastpad.knowledge.notes import NoteService
from fastpad.knowledge.trust import TrustFloor, admits, floor_for
from fastpad.notes import is_ulid
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ, NOTES_WRITE
from fastpad.store import Store, WorkspaceTx, utcnow
from fastpad.store.memory import MemoryTopics, SummaryCandidate, TopicRow

MAX_TOPICS = 500  # per workspace: the index is read whole
MAX_NAME = 120
SUMMARY_CHARS = 200
SUMMARY_CANDIDATES = 8  # blocks looked at per note for a summary the floor admits


@dataclass(frozen=True)
class Topic:
    name: str
    note_id: str
    title: str
    summary: str
    archived: bool
    designated_at: datetime
    updated_at: datetime  # the note's

    @classmethod
    def from_row(cls, row: TopicRow, summary: str = "") -> "Topic":
        return cls(row.name, row.note_id, row.title, summary, row.archived, row.designated_at, row.note_updated_at)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "note_id": self.note_id, "title": self.title, "summary": self.summary,
                "archived": self.archived, "designated_at": self.designated_at.isoformat(),
                "updated_at": self.updated_at.isoformat()}


@dataclass(frozen=True)
class MemoryIndex:
    topics: list[Topic]
    floor: TrustFloor  # the floor the summaries were taken at

    def as_dict(self) -> dict[str, Any]:
        return {"topics": [t.as_dict() for t in self.topics], "floor": self.floor.value}


@dataclass(frozen=True)
class TopicView:
    name: str
    note: NoteView

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "note": self.note.as_dict()}


class MemoryService:
    def __init__(self, store: Store, notes: NoteService, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.notes = notes
        self.clock = clock

    # ------------------------------------------------------------------ reads

    def index(self, principal: Principal, *, floor: str | None = None) -> MemoryIndex:
        """Every topic the caller can see, by name, with a one-line summary."""
        principal.require(NOTES_READ)
        at = floor_for(principal, floor)
        if principal.note_ids is not None and not principal.note_ids:
            return MemoryIndex([], at)
        with self.store.read(principal.workspace_id) as tx:
            topics = MemoryTopics(tx)
            rows = topics.listed(principal.note_ids)
            candidates = topics.summary_candidates(principal.note_ids, per_note=SUMMARY_CANDIDATES)
        by_note: dict[str, list[SummaryCandidate]] = {}
        for candidate in candidates:
            by_note.setdefault(candidate.note_id, []).append(candidate)
        return MemoryIndex([Topic.from_row(r, _summary(r.title, by_note.get(r.note_id, []), at)) for r in rows], at)

    def topic(self, principal: Principal, name_or_id: str) -> TopicView:
        """One topic, by its name (any case) or its note's id: the note itself."""
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            row = self._find(tx, principal, name_or_id)
        return TopicView(row.name, self.notes.get(principal, row.note_id))

    # ------------------------------------------------------------------ writes

    def designate(self, principal: Principal, note_id: str, *, name: str | None = None) -> Topic:
        """Make a note a memory topic named ``name`` (default: its title), or
        rename its topic. Designating it again under the same name changes nothing."""
        principal.require(NOTES_WRITE)
        if name is not None:
            name = check_name(name)
        if not (isinstance(note_id, str) and is_ulid(note_id)):
            raise _no_note(note_id)
        principal.require_note(note_id)
        try:
            with self.store.write(principal.workspace_id) as tx:
                note = tx.note(note_id, for_update=True)
                if note is None:
                    raise _no_note(note_id)
                if note.trashed_at is not None:
                    raise Conflict(detail="the note is in the trash; restore it before designating it",
                                   extra={"reason": "trashed"}, next_call=f"POST /v1/notes/{note_id}/restore")
                if name is None:
                    current = MemoryTopics(tx).by_note(note_id)
                    name = current.name if current is not None else check_name(note.title)
                return self._put(tx, principal, note_id, name)
        except self.store.integrity_errors:
            raise _name_taken(name) from None  # lost a race for the name

    def undesignate(self, principal: Principal, name_or_id: str) -> Topic:
        """The note stops being a topic (the note itself is untouched). Returns what was removed."""
        principal.require(NOTES_WRITE)
        with self.store.write(principal.workspace_id) as tx:
            row = self._find(tx, principal, name_or_id, include_trashed=True)
            MemoryTopics(tx).remove(row.note_id)
            tx.feed.append("memory_undesignate", at=self.clock(), actor=principal.actor(), note_id=row.note_id,
                           subject_id=row.name)
        return Topic.from_row(row)

    # ------------------------------------------------------------------ internals

    def _put(self, tx: WorkspaceTx, principal: Principal, note_id: str, name: str) -> Topic:
        topics = MemoryTopics(tx)
        key = name_key(name)
        holder = topics.by_name(key)
        if holder is not None and holder.note_id != note_id:
            raise _name_taken(name)
        current = topics.by_note(note_id)
        if current is not None and current.name == name:
            return Topic.from_row(current)
        if current is None and topics.count() >= MAX_TOPICS:
            raise Conflict(detail=f"a workspace holds at most {MAX_TOPICS} memory topics",
                           extra={"reason": "topic_limit", "limit": MAX_TOPICS},
                           next_call="DELETE /v1/memory/{topic} for a topic no longer needed")
        now = self.clock()
        topics.put(note_id, name, key, by_kind=principal.kind, by_id=principal.principal_id, at=now)
        tx.feed.append("memory_designate", at=now, actor=principal.actor(), note_id=note_id, subject_id=name)
        row = topics.by_note(note_id)
        assert row is not None
        return Topic.from_row(row)

    @staticmethod
    def _find(tx: WorkspaceTx, principal: Principal, name_or_id: str, *, include_trashed: bool = False) -> TopicRow:
        # No name holds U+0000 (check_name refuses control characters), and PostgreSQL cannot compare one.
        if not isinstance(name_or_id, str) or not name_or_id.strip() or "\x00" in name_or_id:
            raise _no_topic(str(name_or_id))
        topics = MemoryTopics(tx)
        row = topics.by_note(name_or_id) if is_ulid(name_or_id) else None
        if row is None:
            row = topics.by_name(name_key(name_or_id))
        if row is None or not principal.can_see(row.note_id) or (row.trashed and not include_trashed):
            raise _no_topic(name_or_id)
        return row


def check_name(name: Any, *, field: str = "name") -> str:
    """A topic name: 1–120 characters on one line, no ``/``, not a ULID (so a
    name never reads as a note id)."""
    if not isinstance(name, str):
        raise ValidationFailed(detail="a topic name is text", field_errors=[FieldError(field, "type", "a string")])
    name = " ".join(name.split())
    problem = None
    if not name:
        problem = ("required", "a topic needs a name (it defaults to the note's title)")
    elif len(name) > MAX_NAME:
        problem = ("max_length", f"at most {MAX_NAME} characters")
    elif "/" in name or any(unicodedata.category(c).startswith("C") for c in name):
        problem = ("invalid", "no '/' and no control characters")
    elif is_ulid(name.upper()):
        problem = ("invalid", "a name that reads as a note id would be ambiguous")
    if problem:
        raise ValidationFailed(detail=f"invalid topic name: {problem[1]}", field_errors=[FieldError(field, *problem)])
    return name


def name_key(name: str) -> str:
    """Names are unique, and found, regardless of case and spacing."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def _summary(title: str, candidates: list[SummaryCandidate], floor: TrustFloor) -> str:
    """One line from the first block the floor admits that is not the title again."""
    for candidate in candidates:
        if not admits(floor, candidate.origin, candidate.review_state):
            continue
        line = " ".join(candidate.text.split())
        if line and line != title.strip():
            return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1].rstrip() + "…"
    return ""


def _no_note(note_id: str) -> NotFound:
    return NotFound(detail=f"no note {note_id}", extra={"note_id": note_id}, next_call="GET /v1/notes")


def _no_topic(name: str) -> NotFound:
    return NotFound(detail=f"no memory topic {name!r}", extra={"topic": name}, next_call="GET /v1/memory")


def _name_taken(name: str | None) -> Conflict:
    return Conflict(detail=f"another note is already the memory topic {name!r}",
                    extra={"reason": "name_taken", "name": name}, next_call="choose another name")
