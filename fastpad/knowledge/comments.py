"""Comments on notes: threads with replies, anchored to a block or to a range of its text.

A comment is not note content. It lives in its own table (migration 27), never in the note's
Loro document or op log, so the canonical Markdown, search and every export of the note's text
are unchanged by it. Its anchor is:

- a block id — stable through split (the first half keeps it), join (the first block's id
  survives), move and ``fp push`` (which rewrites text through a diff and keeps ids) — and,
- for a comment on text, two Loro cursors (``NoteDocument.text_anchor``) that follow the
  range through every later edit, whoever makes it; ``quote`` keeps the text it read then.

When the block or every character of the range is deleted the thread stays, readable, marked
``on_deleted`` — never lost. A thread is its first comment and the replies to it; resolving
is the thread's. Each author edits and deletes their own comments; a first comment deleted
while others replied stays as a tombstone so the replies keep their thread.

Who may comment: a person who can read the note (a viewer too: commenting is not writing the
note); an agent only with ``notes:write`` (its comment is marked the agent's). Reading the
threads here is for people; an agent reads open comments through ``fastpad_fetch``, the one
outbound path, masked and fenced at its trust floor. ``@person`` mentions in a comment put an
entry in that member's Inbox (``fastpad/knowledge/mentions.py``), once per comment.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from fastpad.errors import Conflict, FieldError, NotFound, PolicyDenied, ValidationFailed
from fastpad.knowledge.note_core import visible_note
from fastpad.knowledge.trust import TrustFloor, admits
from fastpad.notes import NoteDocument, new_id
from fastpad.notes.ids import is_ulid
from fastpad.notes.mentions import person_mentions
from fastpad.notes.provenance import Origin, ReviewState
from fastpad.notes.schema import storable_text
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ, NOTES_WRITE
from fastpad.store import Store, WorkspaceTx, utcnow
from fastpad.store.comments import CommentRow
from fastpad.store.mentions import MentionRow

MAX_BODY = 10_000  # characters of one comment
AGENT_ACTIVITY_COMMENTS = 50  # the newest agents' comments Agent activity lists
PARAGRAPH = "paragraph"  # a comment's body is read for mentions as a paragraph's text is


@dataclass(frozen=True)
class TextRange:
    start: int
    end: int  # exclusive, code points into the block's text as it reads now


@dataclass(frozen=True)
class CommentView:
    row: CommentRow
    author_name: str | None

    def as_dict(self) -> dict[str, Any]:
        r = self.row
        return {
            "id": r.id, "thread_id": r.thread_id, "note_id": r.note_id, "block_id": r.block_id,
            "body": "" if r.deleted_at is not None else r.body, "deleted": r.deleted_at is not None,
            "author": {"kind": r.author_kind, "id": r.author_id, "token_id": r.token_id, "name": self.author_name},
            "created_at": r.created_at.isoformat(), "edited_at": _iso(r.edited_at),
        }


@dataclass(frozen=True)
class Thread:
    first: CommentRow
    comments: list[CommentView]
    range: TextRange | None  # where a text comment's range is now; None: a block comment, or on_deleted
    on_deleted: bool  # the block, or every character of the range, was deleted since

    @property
    def resolved(self) -> bool:
        return self.first.resolved_at is not None

    def as_dict(self) -> dict[str, Any]:
        f = self.first
        return {
            "id": f.id, "note_id": f.note_id, "block_id": f.block_id,
            "anchor": "text" if f.range_start is not None else "block",
            "range": None if self.range is None else {"start": self.range.start, "end": self.range.end},
            "quote": f.quote, "on_deleted": self.on_deleted,
            "resolved": self.resolved, "resolved_at": _iso(f.resolved_at), "resolved_by": f.resolved_by_id,
            "comments": [c.as_dict() for c in self.comments],
        }


@dataclass(frozen=True)
class AgentComment:
    """An agent's comment as Agent activity lists it, for a person."""

    row: CommentRow
    agent_name: str | None
    note_title: str | None  # None: the note is in the trash


class CommentService:
    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.clock = clock

    def threads(self, principal: Principal, note_id: str, *, open_only: bool = False) -> list[Thread]:
        """The note's threads, oldest first, each with where its anchor is now."""
        _require_person_reader(principal)
        with self.store.read(principal.workspace_id) as tx:
            return threads_in(tx, principal, note_id, open_only=open_only)

    def export(self, principal: Principal) -> dict[str, list[dict[str, Any]]]:
        """Every thread on the notes the caller (a person) sees, by note id: what an export writes
        beside each note (``fp pull``: ``<note file>.comments.json``)."""
        _require_person_reader(principal)
        with self.store.read(principal.workspace_id) as tx:
            return {note_id: [thread.as_dict() for thread in threads_in(tx, principal, note_id)]
                    for note_id in tx.comments.notes_with_comments() if principal.can_see(note_id)}

    def by_agents(self, principal: Principal, *, limit: int = AGENT_ACTIVITY_COMMENTS) -> list[AgentComment]:
        """The newest comments agents made on notes the caller sees: what Agent activity lists."""
        _require_person_reader(principal)
        with self.store.read(principal.workspace_id) as tx:
            names: dict[tuple[str, str], str | None] = {}
            shown = []
            for row in tx.comments.recent_by_agents(limit):
                note = tx.note(row.note_id) if principal.can_see(row.note_id) else None
                if note is not None:
                    title = None if note.trashed_at is not None else note.title
                    shown.append(AgentComment(row, _author_name(tx, names, row, with_email=True), title))
            return shown

    def open_for_reader(self, principal: Principal, note_id: str, floor: TrustFloor,
                        admitted_blocks: set[str]) -> list[Thread]:
        """The note's open threads as a reader at ``floor`` may see them (an agent, through
        ``fastpad_fetch``): only the comments whose author ``floor`` admits (a person's words as
        a person's text; an agent's as unreviewed agent text), and a thread's quote only when its
        block is one of ``admitted_blocks``. The caller sends what it gets through the outbound path."""
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            threads = threads_in(tx, principal, note_id, open_only=True)
        shown = []
        for thread in threads:
            comments = [c for c in thread.comments if c.row.deleted_at is None and admits(floor, *_provenance(c.row))]
            if comments:
                quoted = thread.first.block_id in admitted_blocks and not thread.on_deleted
                shown.append(replace(thread, comments=comments,
                                     first=thread.first if quoted else replace(thread.first, quote=None)))
        return shown

    def create(self, principal: Principal, note_id: str, *, body: str, block_id: str | None = None,
               start: int | None = None, end: int | None = None, thread_id: str | None = None) -> Thread:
        """A new thread on ``block_id`` (with ``start``/``end``: on that range of its text), or a
        reply to ``thread_id``; returns the thread as it now reads."""
        _require_commenter(principal)
        body = _checked_body(body)
        with self.store.write(principal.workspace_id) as tx:
            note = visible_note(tx, principal, note_id, with_snapshot=True, for_update=True)
            if note.trashed_at is not None:
                raise Conflict(detail="the note is in the trash; restore it before commenting on it",
                               extra={"reason": "trashed"}, next_call=f"POST /v1/notes/{note_id}/restore")
            row = self._new_row(tx, principal, note_id, NoteDocument.load(note.snapshot), body=body,
                                block_id=block_id, start=start, end=end, thread_id=thread_id)
            tx.comments.insert(row)
            _notify_mentioned(tx, principal, row)
            return _thread_of(tx, principal, row)

    def edit(self, principal: Principal, comment_id: str, *, body: str) -> Thread:
        """A new body for one of the caller's own comments."""
        _require_commenter(principal)
        body = _checked_body(body)
        with self.store.write(principal.workspace_id) as tx:
            row = _own_comment(tx, principal, comment_id)
            edited = replace(row, body=body, edited_at=self.clock())
            tx.comments.update(edited)
            _notify_mentioned(tx, principal, edited)
            return _thread_of(tx, principal, edited)

    def delete(self, principal: Principal, comment_id: str) -> None:
        """Delete one of the caller's own comments. A thread's first comment with replies stays
        as a tombstone (so the replies keep their thread); once a tombstoned thread's last reply
        goes, the tombstone goes with it."""
        _require_commenter(principal)
        with self.store.write(principal.workspace_id) as tx:
            row = _own_comment(tx, principal, comment_id)
            thread = [c for c in tx.comments.in_note(row.note_id) if c.thread_id == row.thread_id]
            if row.starts_thread and len(thread) > 1:
                tx.comments.update(replace(row, body="", deleted_at=self.clock()))
                return
            tx.comments.delete(row.id)
            first = thread[0]
            if not row.starts_thread and first.deleted_at is not None and len(thread) == 2:
                tx.comments.delete(first.id)

    def resolve(self, principal: Principal, comment_id: str, *, resolved: bool) -> Thread:
        """Resolve (or reopen) the thread ``comment_id`` starts or belongs to."""
        _require_commenter(principal)
        with self.store.write(principal.workspace_id) as tx:
            first = tx.comments.get(_visible_comment(tx, principal, comment_id, tombstone_ok=True).thread_id)
            assert first is not None
            first = replace(first, resolved_at=self.clock() if resolved else None,
                            resolved_by_id=principal.principal_id if resolved else None)
            tx.comments.update(first)
            return _thread_of(tx, principal, first)

    def _new_row(self, tx: WorkspaceTx, principal: Principal, note_id: str, doc: NoteDocument, *, body: str,
                 block_id: str | None, start: int | None, end: int | None, thread_id: str | None) -> CommentRow:
        comment_id = new_id()
        common = dict(id=comment_id, note_id=note_id, body=body, author_kind=principal.kind,
                      author_id=principal.principal_id, token_id=principal.token_id, created_at=self.clock())
        if thread_id is not None:
            if block_id is not None or start is not None or end is not None:
                raise ValidationFailed(detail="a reply is anchored where its thread is: send threadId alone",
                                       field_errors=[FieldError("threadId", "reply_with_anchor",
                                                                "leave out blockId, start and end")])
            first = tx.comments.get(thread_id) if is_ulid(thread_id) else None
            if first is None or first.note_id != note_id or not first.starts_thread:
                raise NotFound(detail=f"no comment thread {thread_id} on this note",
                               extra={"thread_id": thread_id}, next_call=f"GET /v1/notes/{note_id}/comments")
            return CommentRow(thread_id=thread_id, block_id=first.block_id, range_start=None, range_end=None,
                              quote=None, **common)
        if not isinstance(block_id, str) or not doc.has_block(block_id):
            raise NotFound(detail=f"the note has no block {block_id!r}; re-read the note for its block ids",
                           field_errors=[FieldError("blockId", "unknown_block", "a block id of this note")],
                           extra={"block_id": block_id}, next_call=f"GET /v1/notes/{note_id}")
        if start is None and end is None:
            return CommentRow(thread_id=comment_id, block_id=block_id, range_start=None, range_end=None, quote=None,
                              **common)
        if start is None or end is None:
            raise ValidationFailed(detail="a comment on text names both start and end",
                                   field_errors=[FieldError("start" if start is None else "end", "required",
                                                            "send start and end together, or neither")])
        anchor_start, anchor_end = doc.text_anchor(block_id, start, end)
        return CommentRow(thread_id=comment_id, block_id=block_id, range_start=anchor_start, range_end=anchor_end,
                          quote=doc.block(block_id).text[start:end], **common)


def threads_in(tx: WorkspaceTx, principal: Principal, note_id: str, *, open_only: bool = False) -> list[Thread]:
    """The note's threads as ``principal`` may read them (the note must be reachable)."""
    visible_note(tx, principal, note_id)
    rows = tx.comments.in_note(note_id)
    if not rows:
        return []  # the usual case (every fastpad_fetch asks): no snapshot read for it
    note = tx.note(note_id, with_snapshot=True)
    assert note is not None and note.snapshot is not None
    doc = NoteDocument.load(note.snapshot)
    names: dict[tuple[str, str], str | None] = {}
    by_thread: dict[str, list[CommentRow]] = {}
    for row in rows:
        by_thread.setdefault(row.thread_id, []).append(row)
    threads = []
    for thread_rows in by_thread.values():
        first = thread_rows[0]
        if open_only and first.resolved_at is not None:
            continue
        views = [CommentView(row, _author_name(tx, names, row, with_email=principal.is_person)) for row in thread_rows]
        threads.append(_anchored(doc, first, views))
    return threads


def _anchored(doc: NoteDocument, first: CommentRow, views: list[CommentView]) -> Thread:
    if not doc.has_block(first.block_id):
        return Thread(first, views, None, on_deleted=True)
    if first.range_start is None or first.range_end is None:
        return Thread(first, views, None, on_deleted=False)
    found = doc.anchored_range(first.range_start, first.range_end)
    return Thread(first, views, None if found is None else TextRange(*found), on_deleted=found is None)


def _thread_of(tx: WorkspaceTx, principal: Principal, row: CommentRow) -> Thread:
    return next(t for t in threads_in(tx, principal, row.note_id) if t.first.id == row.thread_id)


def _author_name(tx: WorkspaceTx, names: dict[tuple[str, str], str | None], row: CommentRow, *,
                 with_email: bool) -> str | None:
    """The author's display name (an agent's name); a person without one is called by their email
    in a person's reading, never in an agent's (agents are never given a member's email)."""
    key = (row.author_kind, row.author_id)
    if key not in names:
        if row.author_kind == "person":
            person = tx.person(row.author_id)
            names[key] = None if person is None else (person.display_name or (person.email if with_email else None))
        else:
            agent = tx.agent(row.author_id)
            names[key] = None if agent is None else agent.name
    return names[key]


def _provenance(row: CommentRow) -> tuple[str, str]:
    """A comment's words are its author's: a person's as typed, an agent's as unreviewed agent text."""
    if row.author_kind == "person":
        return Origin.HUMAN_TYPED.value, ReviewState.HUMAN_ACCEPTED.value
    return Origin.AGENT_WRITTEN.value, ReviewState.UNREVIEWED.value


def threads_as_text(threads: list[Thread]) -> str:
    """Open threads as plain lines for a reader that takes text (an agent), oldest first::

        Thread 01J… on block {#01J…} ("the quoted text"):
        - Ada (person): the comment
    """
    lines = []
    for thread in threads:
        where = f"on block {{#{thread.first.block_id}}}"
        if thread.first.quote is not None:
            where += f" ({json.dumps(thread.first.quote, ensure_ascii=False)})"
        lines.append(f"Thread {thread.first.id} {where}:")
        lines += [f"- {c.author_name or c.row.author_id} ({c.row.author_kind}): {c.row.body}" for c in thread.comments]
    return "\n".join(lines) + "\n" if lines else ""


def _visible_comment(tx: WorkspaceTx, principal: Principal, comment_id: str, *,
                     tombstone_ok: bool = False) -> CommentRow:
    """The comment, on a note the caller may reach; NotFound otherwise (as if it did not exist).
    A deleted first comment kept for its replies names its thread (``tombstone_ok``), nothing more."""
    row = tx.comments.get(comment_id) if isinstance(comment_id, str) and is_ulid(comment_id) else None
    if row is None or not principal.can_see(row.note_id) or (row.deleted_at is not None and not tombstone_ok):
        raise NotFound(detail=f"no comment {comment_id}", extra={"comment_id": comment_id})
    return row


def _own_comment(tx: WorkspaceTx, principal: Principal, comment_id: str) -> CommentRow:
    row = _visible_comment(tx, principal, comment_id)
    if (row.author_kind, row.author_id) != (principal.kind, principal.principal_id):
        raise PolicyDenied(detail="you edit and delete your own comments only; reply instead",
                           extra={"reason": "not_the_author", "comment_id": comment_id})
    return row


def _notify_mentioned(tx: WorkspaceTx, principal: Principal, row: CommentRow) -> None:
    """One Inbox entry per member the comment mentions (never its author), once per comment."""
    mentioned = {m.person_id for m in person_mentions(PARAGRAPH, row.body)} - {
        principal.principal_id if principal.is_person else None}
    if not mentioned:
        return
    members = {person.id for person, _ in tx.members()}
    tx.mentions.insert_new([
        MentionRow(id=new_id(), person_id=person_id, note_id=row.note_id, block_id=row.block_id,
                   mentioned_by_kind=principal.kind, mentioned_by_id=principal.principal_id,
                   token_id=principal.token_id, origin=principal.origin.value, created_at=row.edited_at or row.created_at,
                   comment_id=row.id)
        for person_id in sorted(mentioned & members)
    ])


def _checked_body(body: Any) -> str:
    if not isinstance(body, str) or not body.strip() or len(body) > MAX_BODY or not storable_text(body):
        raise ValidationFailed(detail=f"a comment is 1 to {MAX_BODY} characters of text",
                               field_errors=[FieldError("body", "invalid", f"1 to {MAX_BODY} characters, not blank")])
    return body


def _require_person_reader(principal: Principal) -> None:
    principal.require(NOTES_READ)
    if not principal.is_person:
        raise PolicyDenied(detail="an agent reads a note's open comments through fastpad_fetch, at its trust floor",
                           extra={"reason": "person_only"}, next_call="fastpad_fetch")


def _require_commenter(principal: Principal) -> None:
    """A person who reads the note (a viewer too); an agent only with notes:write."""
    principal.require(NOTES_READ if principal.is_person else NOTES_WRITE)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
