"""A note's history: its timeline (changes grouped into sessions per author), the note as it
was at any version (read-only) with a per-block diff against now, and Restore — a version, or
one block of it — as a new edit by the restorer. History is never rewritten: a restore is one
more change in the op log, through the one write path (``NoteService.apply_edit``).

Reading history is a person's (like the raw CRDT state an editor opens): an old version holds
text a reader's trust floor may no longer admit, or that a person has since removed on purpose,
so an agent is refused rather than masked (agents read a block as it stands: fastpad_history).
Restoring is a person's write; agents propose instead.

Compaction (the data-guarantees issue) may later fold the op log older than a horizon into the
snapshot. The timeline then ends at that horizon and says so in ``compacted_before`` (always
None today); see docs/architecture.md › Note history.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fastpad.errors import FieldError, NotFound, PolicyDenied, ValidationFailed
from fastpad.knowledge.block_identity import changed_block_ids
from fastpad.knowledge.note_core import visible_note
from fastpad.knowledge.notes import NoteService
from fastpad.knowledge.persons_save import PersonsSave, block_provenance
from fastpad.notes import Block, NoteDocument, serialize_markdown
from fastpad.notes.diff import apply_block_changes, diff_blocks
from fastpad.notes.frontier import decode_frontier
from fastpad.notes.provenance import Provenance
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ, NOTES_WRITE
from fastpad.store import Store
from fastpad.store.note_history import ChangeRow, NoteHistoryLog

# Changes by one author closer together than this are one session on the timeline.
SESSION_GAP = timedelta(minutes=10)
RESTORE_KIND = "version_restore"  # the op-log kind of a restore ("restore" is the trash's)
MAX_PAGE = 100
_ROWS_PER_READ = 200
_CURSOR_PREFIX = "h1:"


@dataclass(frozen=True)
class Session:
    """Consecutive changes by one author (through one proposal, if any) with no gap over
    SESSION_GAP. A restore is always a session of its own."""

    changes: list[ChangeRow]  # newest first
    frontier_before: str | None  # the note before the session; None: it began with the note
    blocks_touched: list[str]

    def as_dict(self) -> dict[str, Any]:
        newest, oldest = self.changes[0], self.changes[-1]
        proposal = None if newest.turn_id is None else {
            "id": newest.turn_id,
            "author": {"kind": newest.turn_author_kind, "id": newest.turn_author_id, "name": newest.turn_author_name},
        }
        return {
            "author": {"kind": newest.author_kind, "id": newest.author_id, "token_id": newest.token_id,
                       "name": newest.author_name},
            "proposal": proposal,
            "kinds": sorted({c.kind for c in self.changes}),
            "restore": newest.kind == RESTORE_KIND,
            "changes": len(self.changes),
            "first_seq": oldest.seq, "last_seq": newest.seq,
            "first_at": oldest.at.isoformat(), "last_at": newest.at.isoformat(),
            "frontier": newest.frontier, "frontier_before": self.frontier_before,
            "blocks_touched": self.blocks_touched,
        }


@dataclass(frozen=True)
class Timeline:
    note_id: str
    sessions: list[Session]  # newest first
    next_cursor: str | None
    # The version before which the op log was folded into the snapshot (None: nothing folded);
    # older sessions are gone from the timeline, though that version can still be viewed.
    compacted_before: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"note_id": self.note_id, "sessions": [s.as_dict() for s in self.sessions],
                "next_cursor": self.next_cursor, "compacted_before": self.compacted_before}


@dataclass(frozen=True)
class Version:
    """The note as it was at ``frontier`` (read-only), and each block against now."""

    note_id: str
    frontier: str
    current_frontier: str
    doc: NoteDocument
    now: list[Block]

    def as_dict(self) -> dict[str, Any]:
        meta, then = self.doc.meta, self.doc.blocks()
        return {
            "id": self.note_id, "at": self.frontier, "current_frontier": self.current_frontier,
            "title": meta.title, "types": list(meta.types), "properties": meta.properties,
            "blocks": [_block_dict(b) for b in then],
            "markdown": serialize_markdown(meta, then),
            "diff": block_diff(then, self.now),
        }


def block_diff(then: list[Block], now: list[Block]) -> list[dict[str, Any]]:
    """Each block of either version, in the old version's order and then the ones added since:
    ``same``, ``changed`` (content or type), ``removed`` (since then) or ``added`` (since then)."""
    now_by_id = {b.id: b for b in now}
    then_ids = {b.id for b in then}
    out = []
    for block in then:
        current = now_by_id.get(block.id)
        status = "removed" if current is None else "same" if _content(current) == _content(block) else "changed"
        out.append({"block_id": block.id, "status": status, "then": _block_dict(block),
                    "now": None if current is None else _block_dict(current)})
    out += [{"block_id": b.id, "status": "added", "then": None, "now": _block_dict(b)}
            for b in now if b.id not in then_ids]
    return out


class NoteHistory:
    def __init__(self, store: Store, notes: NoteService) -> None:
        self.store = store
        self.notes = notes

    def timeline(self, principal: Principal, note_id: str, *, cursor: str | None = None,
                 limit: int = 20) -> Timeline:
        """A keyset page of the note's sessions, newest first; follow ``next_cursor``."""
        _require_reader(principal)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise ValidationFailed(detail=f"limit is between 1 and {MAX_PAGE}",
                                   field_errors=[FieldError("limit", "range", f"between 1 and {MAX_PAGE}")])
        before = None if cursor is None else _decode_cursor(cursor)
        with self.store.read(principal.workspace_id) as tx:
            row = visible_note(tx, principal, note_id, with_snapshot=True)
            log = NoteHistoryLog(tx)
            groups: list[list[ChangeRow]] = []
            exhausted = False
            # Read until one change past the page's last session (its frontier is that session's start).
            while len(groups) <= limit and not exhausted:
                batch = log.changes(note_id, before_seq=before, limit=_ROWS_PER_READ)
                exhausted = len(batch) < _ROWS_PER_READ
                for change in batch:
                    if groups and _continues(groups[-1][-1], change):
                        groups[-1].append(change)
                    elif len(groups) <= limit:
                        groups.append([change])
                    else:
                        break
                if batch:
                    before = batch[-1].seq
        assert row.snapshot is not None
        page, following = groups[:limit], groups[limit] if len(groups) > limit else None
        # Each session starts where the older one ended; the oldest of all at an empty note.
        ends = [group[0].frontier for group in page]
        start = None if following is None else following[0].frontier
        walked = NoteDocument.load(row.snapshot).blocks_at_each(ends + ([] if start is None else [start]))
        versions = [{b.id: _content(b) for b in blocks} for blocks in walked] + ([{}] if start is None else [])
        sessions = []
        for i, group in enumerate(page):
            after, prior = versions[i], versions[i + 1]
            touched = [b for b in after if after[b] != prior.get(b)] + [b for b in prior if b not in after]
            sessions.append(Session(group, ends[i + 1] if i + 1 < len(page) else start, touched))
        next_cursor = None if following is None else _encode_cursor(page[-1][-1].seq)
        return Timeline(note_id, sessions, next_cursor)

    def version(self, principal: Principal, note_id: str, at: str) -> Version:
        """The note as it was at ``at`` (a frontier the note has been at), with a per-block diff
        against now. ValidationFailed (``malformed_frontier`` / ``unknown_frontier`` on ``at``)
        for a string that is not a frontier or a version this note never had."""
        _require_reader(principal)
        decode_frontier(at, field="at")
        with self.store.read(principal.workspace_id) as tx:
            row = visible_note(tx, principal, note_id, with_snapshot=True)
        assert row.snapshot is not None
        doc = NoteDocument.load(row.snapshot)
        return Version(note_id, at, row.frontier, doc.at(at, field="at"), doc.blocks())

    def restore(self, principal: Principal, note_id: str, at: str, *, block_id: str | None = None) -> dict[str, Any]:
        """Make the note read as it did at ``at`` — the whole note (blocks, title, types,
        properties), or only ``block_id`` — as one new change by ``principal``; history keeps
        everything in between. The restored blocks take their provenance by the rule of a
        person's save (:class:`PersonsSave`), as if the person had typed that text back: an
        agent's block that is still there stays the agent's. Returns the note's new frontier
        (unchanged when it already read so)."""
        if not principal.is_person:
            raise PolicyDenied(detail="restoring a version is a person's edit; an agent proposes the text instead",
                               extra={"reason": "agents_propose", "note_id": note_id},
                               next_call=f"POST /v1/notes/{note_id}/proposals")
        principal.require(NOTES_WRITE)
        decode_frontier(at, field="at")
        with self.store.write(principal.workspace_id) as tx:
            visible_note(tx, principal, note_id)
            before = tx.blocks(note_id)
            current = {b.block_id: block_provenance(b) for b in before}

            def edit(doc: NoteDocument) -> dict[str, Provenance]:
                then = doc.at(at, field="at")
                if block_id is None:
                    apply_block_changes(doc, diff_blocks(doc.blocks(), then.blocks(), keep_ids=True))
                    if doc.meta != then.meta:
                        doc.set_meta(then.meta)
                else:
                    _restore_block(doc, then, block_id, note_id)
                persons_save = PersonsSave(tx, principal, note_id, doc, current, before)
                return {changed: persons_save.stamp(changed) for changed in changed_block_ids(before, doc.blocks())}

            result = self.notes.apply_edit(tx, principal, note_id, edit, kind=RESTORE_KIND,
                                           stamp=Provenance.for_write(principal.origin))
        return {"note_id": note_id, "frontier": result.frontier_after, "restored_from": at, "block_id": block_id,
                "changed": result.frontier_after != result.frontier_before}


def _restore_block(doc: NoteDocument, then: NoteDocument, block_id: str, note_id: str) -> None:
    """Give ``block_id`` its content at ``then``; a block deleted since comes back under its id,
    after the nearest block before it that the note still has."""
    if not then.has_block(block_id):
        raise NotFound(detail=f"note {note_id} had no block {block_id} at that version",
                       extra={"note_id": note_id, "block_id": block_id}, next_call=f"GET /v1/notes/{note_id}/history")
    old = then.block(block_id)
    if doc.has_block(block_id):
        apply_block_changes(doc, diff_blocks([doc.block(block_id)], [old]))
        return
    earlier = [b.id for b in then.blocks()[: then.index_of(block_id)]]
    anchor = next((i for i in reversed(earlier) if i is not None and doc.has_block(i)), None)
    doc.insert_after(anchor, old)


def _require_reader(principal: Principal) -> None:
    principal.require(NOTES_READ)
    if not principal.is_person:
        raise PolicyDenied(
            detail="a note's history is for people: an old version may hold text the reader's trust floor "
                   "no longer admits. Agents read a block as it stands",
            extra={"reason": "person_only"}, next_call="fastpad_history")


def _continues(newer: ChangeRow, older: ChangeRow) -> bool:
    """Whether ``older`` belongs to the session that ``newer`` (the next change) is in."""
    return (newer.kind != RESTORE_KIND and older.kind != RESTORE_KIND
            and (newer.author_kind, newer.author_id, newer.turn_id) == (older.author_kind, older.author_id, older.turn_id)
            and newer.at - older.at <= SESSION_GAP)


def _content(block: Block) -> tuple[Any, ...]:
    return block.type, block.text, block.attrs


def _block_dict(block: Block) -> dict[str, Any]:
    return {"id": block.id, "type": block.type, "text": block.text, "attrs": block.attrs}


def _encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{seq}".encode()).rstrip(b"=").decode()


def _decode_cursor(cursor: str) -> int:
    bad = ValidationFailed(detail="cursor is not one this server returned",
                           field_errors=[FieldError("cursor", "malformed_cursor", "pass next_cursor back unchanged")])
    if not isinstance(cursor, str) or len(cursor) > 40:
        raise bad
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise bad from None
    digits = raw[len(_CURSOR_PREFIX):]
    if not raw.startswith(_CURSOR_PREFIX) or not digits.isdigit() or len(digits) > 18:
        raise bad
    return int(digits)
