"""Who is in a note now, and where their caret is: presence, kept in memory only.

Each open tab holds its state (person, caret and selection as Loro cursors) in a Loro
``EphemeralStore`` under one key, the tab's id, and posts that key's encoded update here on every
change and as a heartbeat. Everyone following the note receives every live tab's latest update and
applies it to their own store. Nothing of it is written to the database, the op log or the
document: a server restart forgets it, and the tabs post again within a heartbeat.

A tab's entry lives ``ttl_s`` after its last post (25 s), or until it leaves (a closing tab says so).
The ttl is under 30 s so that a tab that could not say it left (closed while offline, crashed, or a
leave the browser dropped) is gone within 30 s of closing however close to a heartbeat it closed.

The fan-out seam is :class:`PresenceHub`: this process keeps its rooms in :class:`InProcessPresenceHub`;
a hub for several server processes (PostgreSQL ``NOTIFY`` of each post and leave, every process
``LISTEN``-ing and folding them into its own rooms, expiry computed locally from each entry's
``expires_at``) replaces it without changing the service or the routes.

Only people read presence or post it, and only in notes they can read: an agent's presence is its
open proposal on a block, shown there (review), so an agent credential is refused here.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import loro

from fastpad.errors import FieldError, PolicyDenied, ValidationFailed
from fastpad.knowledge.note_core import not_found, require_reachable
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ
from fastpad.store import Store

DEFAULT_TTL_S = 25.0
MAX_STATE_BYTES = 2048  # a caret, a selection and a colour: a few hundred bytes
MAX_WAIT_S = 25.0
TAB_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")

Room = tuple[str, str]  # (workspace id, note id)


@dataclass(frozen=True)
class PresenceEntry:
    tab: str
    person_id: str
    name: str
    state: bytes  # the tab's EphemeralStore update for its own key, as the tab encoded it
    expires_at: float  # time.monotonic() seconds

    def as_dict(self) -> dict[str, object]:
        return {"tab": self.tab, "person": {"id": self.person_id, "name": self.name}, "state": self.state}


@dataclass(frozen=True)
class PresenceSnapshot:
    generation: str  # changes whenever a tab posts, leaves or expires; opaque to clients
    entries: tuple[PresenceEntry, ...]
    ttl_s: float


class PresenceHub(Protocol):
    """Rooms of live tabs. Implementations fan posts out to every process serving the rooms."""

    def put(self, room: Room, entry: PresenceEntry) -> None: ...
    def leave(self, room: Room, tab: str, person_id: str, until: float) -> None: ...
    def owner_of(self, room: Room, tab: str) -> str | None: ...
    def snapshot(self, room: Room) -> tuple[str, tuple[PresenceEntry, ...], float | None]: ...
    async def wait(self, room: Room, seen: str, timeout: float) -> None: ...


class InProcessPresenceHub:
    """One process's rooms. Posts arrive on worker threads, followers wait on event loops."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        # A restarted server's generations never repeat an old one a tab may still send back.
        self._epoch = secrets.token_hex(4)
        self._counter = 0
        # An empty room keeps nothing, not even a generation: every note ever opened would stay.
        self._empty = f"{self._epoch}.0"
        self._rooms: dict[Room, dict[str, PresenceEntry]] = {}
        # Tabs that left, until when: a post of theirs still on its way (sent just before the
        # leave, overtaken by it) must not bring them back for a whole ttl.
        self._left: dict[tuple[Room, str], tuple[str, float]] = {}  # → (person id, until)
        self._generation: dict[Room, str] = {}
        self._waiters: dict[Room, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}

    def put(self, room: Room, entry: PresenceEntry) -> None:
        with self._lock:
            now = self._clock()
            self._left = {key: left for key, left in self._left.items() if left[1] > now}
            if self._left.get((room, entry.tab), ("", 0.0))[0] == entry.person_id:
                return
            self._rooms.setdefault(room, {})[entry.tab] = entry
            self._changed(room)
        self._wake(room)

    def leave(self, room: Room, tab: str, person_id: str, until: float) -> None:
        with self._lock:
            entries = self._rooms.get(room, {})
            if tab in entries and entries[tab].person_id != person_id:
                return
            self._left[(room, tab)] = (person_id, until)
            if tab not in entries:
                return
            del entries[tab]
            self._changed(room)
        self._wake(room)

    def owner_of(self, room: Room, tab: str) -> str | None:
        with self._lock:
            entry = self._rooms.get(room, {}).get(tab)
            return entry.person_id if entry else None

    def snapshot(self, room: Room) -> tuple[str, tuple[PresenceEntry, ...], float | None]:
        """(generation, live entries, when the next of them expires); expired entries are dropped."""
        now = self._clock()
        with self._lock:
            entries = self._rooms.get(room, {})
            expired = [tab for tab, entry in entries.items() if entry.expires_at <= now]
            for tab in expired:
                del entries[tab]
            if expired:
                self._changed(room)
            if not entries:
                self._rooms.pop(room, None)
                self._generation.pop(room, None)
            live = tuple(entries.values())
            generation = self._generation.get(room, self._empty)
        next_expiry = min((entry.expires_at for entry in live), default=None)
        return generation, live, None if next_expiry is None else next_expiry - now

    async def wait(self, room: Room, seen: str, timeout: float) -> None:
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            if self._generation.get(room, self._empty) != seen:
                return
            self._waiters.setdefault(room, set()).add(waiter)
        try:
            await asyncio.wait_for(waiter[1].wait(), max(0.0, timeout))
        except asyncio.TimeoutError:
            pass
        finally:
            with self._lock:
                waiting = self._waiters.get(room)
                if waiting is not None:
                    waiting.discard(waiter)
                    if not waiting:
                        del self._waiters[room]

    def _next(self) -> str:
        self._counter += 1
        return f"{self._epoch}.{self._counter}"

    def _changed(self, room: Room) -> None:
        self._generation[room] = self._next()

    def _wake(self, room: Room) -> None:
        with self._lock:
            waiters = self._waiters.pop(room, set())
        for loop, event in waiters:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:
                pass  # that follower's event loop has closed


class PresenceService:
    def __init__(self, store: Store, hub: PresenceHub | None = None, *, ttl_s: float = DEFAULT_TTL_S) -> None:
        self.store = store
        self.hub = hub or InProcessPresenceHub()
        self.ttl_s = ttl_s

    def post(self, principal: Principal, note_id: str, tab: str, state: bytes) -> None:
        """The tab's current state; it lives ``ttl_s`` unless posted again."""
        _check_tab(tab)
        _check_state(tab, state)
        name = self._admit(principal, note_id)
        room = (principal.workspace_id, note_id)
        owner = self.hub.owner_of(room, tab)
        if owner is not None and owner != principal.principal_id:
            raise PolicyDenied(detail="this tab id is another person's", extra={"reason": "tab_taken"})
        self.hub.put(room, PresenceEntry(tab, principal.principal_id, name, state, time.monotonic() + self.ttl_s))

    def leave(self, principal: Principal, note_id: str, tab: str) -> None:
        """The tab closed or left the note: gone for everyone now rather than at its expiry."""
        _check_tab(tab)
        self._admit(principal, note_id)
        self.hub.leave((principal.workspace_id, note_id), tab, principal.principal_id, time.monotonic() + self.ttl_s)

    def admit(self, principal: Principal, note_id: str) -> None:
        """May this principal follow the note's presence? (Checked before a long poll starts.)"""
        self._admit(principal, note_id)

    async def follow(self, principal: Principal, note_id: str, seen: str | None, wait_s: float) -> PresenceSnapshot:
        """The live tabs, once the room's generation differs from ``seen`` or ``wait_s`` has passed.
        Call :meth:`admit` first (it reads the database; this does not)."""
        room = (principal.workspace_id, note_id)
        deadline = time.monotonic() + min(max(wait_s, 0.0), MAX_WAIT_S)
        while True:
            generation, entries, next_expiry = self.hub.snapshot(room)
            left = deadline - time.monotonic()
            if generation != seen or left <= 0:
                return PresenceSnapshot(generation, entries, self.ttl_s)
            # Wake for the next expiry too: a tab that stopped posting leaves when it expires.
            await self.hub.wait(room, generation, left if next_expiry is None else min(left, next_expiry + 0.01))

    def _admit(self, principal: Principal, note_id: str) -> str:
        """The person's display name, once they are known to read the note."""
        if not principal.is_person:
            raise PolicyDenied(detail="presence is people's: an agent shows where it works through its proposals",
                               extra={"reason": "person_only"})
        principal.require(NOTES_READ)
        require_reachable(principal, note_id)
        with self.store.read(principal.workspace_id) as tx:
            if tx.note(note_id) is None:
                raise not_found(note_id)
            person = tx.person(principal.principal_id)
        return (person.display_name or person.email) if person else ""


def _check_tab(tab: str) -> None:
    if not isinstance(tab, str) or not TAB_ID.match(tab):
        raise ValidationFailed(detail="tab must be 8 to 64 letters, digits, - or _",
                               field_errors=[FieldError("tab", "pattern", "8 to 64 of [A-Za-z0-9_-]")])


def _check_state(tab: str, state: bytes) -> None:
    """One EphemeralStore update, for the tab's own key and no other, within the size bound."""
    if len(state) > MAX_STATE_BYTES:
        raise ValidationFailed(detail=f"a presence state is at most {MAX_STATE_BYTES} bytes",
                               field_errors=[FieldError("state", "too_long", f"at most {MAX_STATE_BYTES} bytes")])
    scratch = loro.EphemeralStore(60_000)
    try:
        scratch.apply(state)
    except BaseException as exc:  # loro raises a bare BaseException on bytes it cannot decode
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise ValidationFailed(detail="state is not a Loro EphemeralStore update",
                               field_errors=[FieldError("state", "malformed", "not an EphemeralStore update")]) from None
    if scratch.keys() != [tab]:
        raise ValidationFailed(detail="state must hold the tab's own key and nothing else",
                               field_errors=[FieldError("state", "keys", "exactly the key named by tab")])
