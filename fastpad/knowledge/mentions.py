"""People mentioned in notes: the write path's mention step, and each person's Inbox of them.

The step (:func:`project_mentions`) runs inside ``NoteService._commit``, in the transaction
of every committed write, after the link step: each block the write carries that
mentions a member (``[@Name](/people/{id})``, ``fastpad/notes/mentions.py``) puts one Inbox
entry for that member the first time that block mentions them. So:

- editing the block again, or removing the mention and writing it back, adds nothing
  (one entry per person and block, whoever mentions them again); removing the mention
  leaves the entry (it records that they were mentioned; the block reads as it now does);
- a writer mentioning themselves is not notified;
- an agent's mention lands when its write does: a proposal's when it is accepted (the
  entry names whoever's write landed it and the block's origin, so "an agent's words,
  accepted by Ada" reads as such), an auto-applied one at once;
- a mention of someone who is not a member (a removed member, a made-up id) stays text
  and notifies nobody: a note's text is never refused for what it says;
- a viewer may be mentioned (they read every note; they just do not write).

A mention in a comment (``fastpad/knowledge/comments.py``) is an entry too, once per
(person, comment), naming the comment; its excerpt is the comment's text.

Reading (:class:`InboxService`) is for a person, their own entries only, newest first
in keyset pages; an agent has no Inbox and never reaches this (it would learn who is
mentioned where from it, outside its note set and trust floor).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastpad.errors import FieldError, NotFound, PolicyDenied, ValidationFailed
from fastpad.notes import new_id
from fastpad.notes.ids import is_ulid
from fastpad.notes.mentions import person_mentions
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ
from fastpad.store import NoteWrite, Store, WorkspaceTx, utcnow
from fastpad.store.mentions import MentionRow

DEFAULT_PAGE = 50
MAX_PAGE = 200
EXCERPT_CHARS = 240  # of the mentioning block's text, shown in the Inbox


def project_mentions(tx: WorkspaceTx, write: NoteWrite) -> None:
    """The step ``NoteService._commit`` runs after each write (see the module docstring)."""
    blocks = write.blocks if write.blocks is not None else (
        write.block_edits.rows if write.block_edits is not None else None)
    if not blocks:
        return
    written = {(mention.person_id, block.block_id): block
               for block in blocks for mention in person_mentions(block.type, block.text)}
    self_id = write.actor.id if write.actor.kind == "person" else None
    wanted = {pair: block for pair, block in written.items() if pair[0] != self_id}
    if not wanted:
        return
    known = tx.mentions.pairs_in_note(write.note_id)
    new = {pair: block for pair, block in wanted.items() if pair not in known}
    if not new:
        return
    members = {person.id for person, _ in tx.members()}  # one read, however many ids the text names
    actor = write.actor
    tx.mentions.insert_new([
        MentionRow(id=new_id(), person_id=person_id, note_id=write.note_id, block_id=block_id,
                   mentioned_by_kind=actor.kind, mentioned_by_id=actor.id, token_id=actor.token_id,
                   origin=block.origin, created_at=write.at)
        for (person_id, block_id), block in new.items() if person_id in members
    ])


@dataclass(frozen=True)
class InboxMention:
    row: MentionRow
    note_title: str | None  # None: the note is gone from view (trashed)
    excerpt: str | None  # the block's (or the comment's) text now; None: deleted since
    by_name: str | None  # the writer's display name (an agent's name); None: no longer known

    def as_dict(self) -> dict[str, Any]:
        r = self.row
        return {
            "id": r.id, "note_id": r.note_id, "block_id": r.block_id, "note_title": self.note_title,
            "comment_id": r.comment_id, "excerpt": self.excerpt,
            "url": f"/notes/{r.note_id}#" + (r.block_id if r.comment_id is None else f"comment-{r.comment_id}"),
            "mentioned_by": {"kind": r.mentioned_by_kind, "id": r.mentioned_by_id, "token_id": r.token_id,
                             "name": self.by_name},
            "origin": r.origin, "created_at": r.created_at.isoformat(),
            "read": r.read_at is not None, "read_at": None if r.read_at is None else r.read_at.isoformat(),
        }


@dataclass(frozen=True)
class InboxPage:
    mentions: list[InboxMention]
    unread: int
    next_cursor: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"items": [m.as_dict() for m in self.mentions], "unread": self.unread, "next_cursor": self.next_cursor}


class InboxService:
    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.clock = clock

    def page(self, principal: Principal, *, cursor: str | None = None, unread_only: bool = False,
             limit: int = DEFAULT_PAGE) -> InboxPage:
        """The caller's mentions, newest first; ``cursor``: the last id of the previous page."""
        _require_person(principal)
        if not 1 <= limit <= MAX_PAGE:
            raise ValidationFailed(detail=f"limit is between 1 and {MAX_PAGE}",
                                   field_errors=[FieldError("limit", "range", f"between 1 and {MAX_PAGE}")])
        if cursor is not None and not is_ulid(cursor):
            raise ValidationFailed(detail="cursor is not one this server returned",
                                   field_errors=[FieldError("cursor", "malformed_cursor",
                                                            "pass next_cursor back unchanged")])
        with self.store.read(principal.workspace_id) as tx:
            rows = tx.mentions.page(principal.principal_id, before_id=cursor, unread_only=unread_only,
                                    limit=limit + 1)
            # A person's token limited to some notes lists only the mentions in those.
            shown = [_described(tx, row) for row in rows[:limit] if principal.can_see(row.note_id)]
            unread = tx.mentions.unread_count(principal.principal_id)
        return InboxPage(shown, unread, rows[limit - 1].id if len(rows) > limit else None)

    def mark(self, principal: Principal, mention_id: str, *, read: bool) -> InboxMention:
        """One of the caller's mentions, read or unread again; NotFound for anyone else's."""
        _require_person(principal)
        with self.store.write(principal.workspace_id) as tx:
            row = tx.mentions.mark(principal.principal_id, mention_id, self.clock() if read else None) \
                if is_ulid(mention_id) else None
            if row is None:
                raise NotFound(detail=f"no mention {mention_id} in your Inbox", extra={"mention_id": mention_id},
                               next_call="GET /v1/inbox/mentions")
            return _described(tx, row)

    def mark_all_read(self, principal: Principal) -> int:
        """Every unread mention of the caller, read now; how many there were."""
        _require_person(principal)
        with self.store.write(principal.workspace_id) as tx:
            return tx.mentions.mark_all_read(principal.principal_id, self.clock())


def _require_person(principal: Principal) -> None:
    principal.require(NOTES_READ)
    if not principal.is_person:
        raise PolicyDenied(detail="an Inbox is a person's; an agent is never mentioned and reads no one's",
                           extra={"reason": "person_only"})


def _excerpt(tx: WorkspaceTx, row: MentionRow) -> str | None:
    """The mentioning block's text, or the comment's, as it reads now; None: deleted since."""
    if row.comment_id is not None:
        comment = tx.comments.get(row.comment_id)
        return None if comment is None or comment.deleted_at is not None else comment.body[:EXCERPT_CHARS]
    block = next(iter(tx.blocks_by_id(row.note_id, [row.block_id])), None)
    return None if block is None else block.text[:EXCERPT_CHARS]


def _described(tx: WorkspaceTx, row: MentionRow) -> InboxMention:
    note = tx.note(row.note_id)
    title = None if note is None or note.trashed_at is not None else note.title
    excerpt = None if title is None else _excerpt(tx, row)
    if row.mentioned_by_kind == "person":
        person = tx.person(row.mentioned_by_id)
        name = None if person is None else (person.display_name or person.email)
    else:
        agent = tx.agent(row.mentioned_by_id)
        name = None if agent is None else agent.name
    return InboxMention(row, title, excerpt, name)
