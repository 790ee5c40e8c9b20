"""ChangeFeedService: everything that changed since a cursor, as a principal may see it.

The feed is the workspace's ``change_feed`` (one row per committed write, see
fastpad/store/feed.py). A cursor is opaque to clients: base64url of ``c1:`` and
the last seq read, so it survives a server restart and works on any server
process of the deployment. A page reads up to the workspace's head *as of the
read*; rows about notes the caller cannot see are skipped, and the cursor
still moves past them, so a caller limited to a few notes never re-reads the
rest of the workspace. For such a caller one read looks at no more than
``SCAN_WINDOW`` rows of the feed, so its cost stays bounded however thinly its
notes are spread: a page may then come back short, even empty, with
``has_more`` set — keep following ``next_cursor``.

``long_poll`` waits for the next committed change: on this process's commit
signal, re-checking the database every ``recheck_s`` for writes other
processes commit.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ
from fastpad.store import Store
from fastpad.store.feed import FeedRow
from fastpad.store.feed_signal import CommitSignal, feed_commits

CURSOR_VERSION = "c1:"
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
MAX_WAIT_MS = 30_000  # under the idle timeouts of common proxies
RECHECK_S = 2.0
SCAN_WINDOW = 10_000  # feed rows one read of a note-scoped caller looks at


@dataclass(frozen=True)
class Change:
    """One committed write. No bodies: re-read the note for its content."""

    cursor: str  # resume after this change
    kind: str  # create, ops, archive, unarchive, trash, restore, purge, memory_designate, …
    note_id: str | None
    subject_id: str | None
    block_ids: tuple[str, ...] | None  # blocks inserted, changed or deleted (None: not recorded)
    blocks_touched: int | None  # how many in all; more than len(block_ids) means the list was cut
    actor_kind: str | None  # person | agent | system
    actor_id: str | None
    token_id: str | None
    at: datetime

    @classmethod
    def from_row(cls, row: FeedRow) -> "Change":
        return cls(encode_cursor(row.seq), row.kind, row.note_id, row.subject_id, row.block_ids,
                   row.blocks_touched, row.actor_kind, row.actor_id, row.token_id, row.at)

    def as_dict(self) -> dict[str, Any]:
        actor = None if self.actor_kind is None else {
            "kind": self.actor_kind, "id": self.actor_id, "token_id": self.token_id,
        }
        return {
            "cursor": self.cursor, "kind": self.kind, "note_id": self.note_id, "subject_id": self.subject_id,
            "block_ids": None if self.block_ids is None else list(self.block_ids),
            "blocks_touched": self.blocks_touched, "actor": actor, "at": self.at.isoformat(),
        }


@dataclass(frozen=True)
class FeedPage:
    items: list[Change]
    next_cursor: str  # always set: where to resume, even when nothing changed
    has_more: bool  # more of the feed is already waiting past next_cursor

    def as_dict(self) -> dict[str, Any]:
        return {"items": [c.as_dict() for c in self.items], "next_cursor": self.next_cursor,
                "has_more": self.has_more}


class ChangeFeedService:
    def __init__(self, store: Store, *, signal: CommitSignal = feed_commits, recheck_s: float = RECHECK_S,
                 scan_window: int = SCAN_WINDOW, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.signal = signal
        self.recheck_s = recheck_s
        self.scan_window = scan_window
        self.monotonic = monotonic

    def changes(self, principal: Principal, cursor: str | None = None, limit: int = DEFAULT_LIMIT) -> FeedPage:
        """Changes after ``cursor`` (from the beginning without one), oldest first."""
        principal.require(NOTES_READ)
        _check_int("limit", limit, 1, MAX_LIMIT)
        after = decode_cursor(cursor) if cursor is not None else 0
        if principal.note_ids is not None and not principal.note_ids:
            return FeedPage([], encode_cursor(after), False)  # sees nothing: not even how far the feed went
        with self.store.read(principal.workspace_id) as tx:
            head = tx.feed.head()
            if after > head:
                raise ValidationFailed(
                    detail="this cursor is ahead of the workspace's change feed (from another deployment?)",
                    field_errors=[FieldError("cursor", "cursor_ahead", "start again without a cursor")],
                )
            upto = head if principal.note_ids is None else min(head, after + self.scan_window)
            rows = tx.feed.read(after_seq=after, upto_seq=upto, limit=limit + 1, note_ids=principal.note_ids)
        full = len(rows) > limit
        items = [Change.from_row(r) for r in rows[:limit]]
        # A short page read everything up to ``upto``: the cursor skips past invisible rows too.
        return FeedPage(items, items[-1].cursor if full else encode_cursor(upto), full or upto < head)

    def latest(self, principal: Principal) -> FeedPage:
        """No changes, and the cursor after the newest one: where a watcher that
        only wants what happens from now on starts (one call, however long the feed)."""
        principal.require(NOTES_READ)
        if principal.note_ids is not None and not principal.note_ids:
            return FeedPage([], encode_cursor(0), False)  # sees nothing: not even how far the feed went
        with self.store.read(principal.workspace_id) as tx:
            return FeedPage([], encode_cursor(tx.feed.head()), False)

    async def long_poll(
        self, principal: Principal, cursor: str | None = None, limit: int = DEFAULT_LIMIT, wait_ms: int = 0
    ) -> FeedPage:
        """``changes``, but when there are none yet, wait up to ``wait_ms`` for one
        and return as soon as it commits (an empty page when none did)."""
        _check_int("wait_ms", wait_ms, 0, MAX_WAIT_MS)
        deadline = self.monotonic() + wait_ms / 1000
        while True:
            seen = self.signal.generation(principal.workspace_id)  # before the read: no commit slips between
            page = await asyncio.to_thread(self.changes, principal, cursor, limit)
            remaining = deadline - self.monotonic()
            if page.items or remaining <= 0:
                return page
            cursor = page.next_cursor
            if page.has_more:
                continue  # a window of changes it cannot see: read on at once
            await self.signal.wait(principal.workspace_id, seen, min(remaining, self.recheck_s))


def encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"{CURSOR_VERSION}{seq}".encode()).rstrip(b"=").decode()


def decode_cursor(cursor: str) -> int:
    bad = ValidationFailed(detail="cursor is not one this server returned",
                           field_errors=[FieldError("cursor", "malformed_cursor", "pass next_cursor back unchanged")])
    if not isinstance(cursor, str) or len(cursor) > 64:
        raise bad
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise bad from None
    digits = raw[len(CURSOR_VERSION):]
    if not raw.startswith(CURSOR_VERSION) or not digits.isascii() or not digits.isdigit() or len(digits) > 18:
        raise bad
    return int(digits)


def _check_int(name: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationFailed(detail=f"{name} is between {low} and {high}",
                               field_errors=[FieldError(name, "range", f"between {low} and {high}")])
