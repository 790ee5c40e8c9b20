"""What an accepted turn does outside its note's prose, through the services that own it,
and how a revert takes exactly that back. Everything here runs in the caller's
transaction: the accept's (or the revert's) one transaction, with the prose.

Accept
------

- An accepted ``add_edge`` op becomes an edge (``GraphService.create_link_in``), made by
  the person who accepted it, from the turn's note (and block, if the op named one).
- An accepted ``add_event`` op creates an event note; ``move_event`` sets an event's
  window (:class:`EventNotes`).
- When a person accepts prose (or marks an agent's accept reviewed), every source the
  landed blocks cite becomes a ``cites`` edge from the citing block to the source note.
  A source note that is gone or in the trash by then gets no edge; the citation stays
  recorded on the turn, so a retraction still reaches the block.

A refusal from an owning service (the edge's target is in the trash, the event cannot
take the window…) propagates, and the caller's transaction undoes the whole accept.

What was done is kept as a :class:`Landed` record in the accept's audit entry, because a
revert must undo what the accept did and nothing else: an edge is listed only when the
accept inserted it (the graph hands back, unchanged, the same edge the same person made
before, and that one is not the accept's to remove).

Revert
------

:meth:`KnowledgeEffects.undo` takes back every landing's record, newest first:

- an edge the accept inserted is removed, unless a person has confirmed it since
  (``GraphService.promote``, the one way the graph changes an edge made through it) —
  then it stays (``kept_confirmed``); one already deleted is ``gone``;
- an event note the accept created, or the note a proposed new note's first landing made
  (``ReviewCore._create_proposed_note``), goes to the trash (``trashed``; restorable from
  there, whatever was written in it since); one already in the trash or purged is
  ``gone``;
- a moved event gets its previous window back (``restored``) while its window is still
  the one the accept set; moved again since, or no longer an event that takes a window,
  it stays as it is (``kept_changed``); in the trash or purged, ``gone``.

The review service owns no edge or event storage: without the owning service in a
deployment, accepting such an op is refused (nothing is applied) and citations stay
recorded on the turn only.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fastpad.errors import PolicyDenied, ValidationFailed
from fastpad.knowledge.calendar import END, EVENT, START
from fastpad.knowledge.edges import CITES
from fastpad.security.principals import Principal
from fastpad.store import NoteRow, WorkspaceTx
from fastpad.store.turns import TurnRow

# What became of one thing an accept did, when its turn was reverted.
REMOVED, TRASHED, RESTORED = "removed", "trashed", "restored"
KEPT_CONFIRMED, KEPT_CHANGED, GONE = "kept_confirmed", "kept_changed", "gone"


@dataclass
class Landed:
    """What one landing did outside the prose: ids and event windows, never note text.
    Stored as its audit entry's ``effects``."""

    links: list[str] = field(default_factory=list)  # edges it inserted (add_edge ops and cites)
    events: list[str] = field(default_factory=list)  # event notes it created
    moves: list[dict[str, Any]] = field(default_factory=list)  # {"event_id", "before": window, "after": window}
    notes: list[str] = field(default_factory=list)  # the note a proposed new note's first landing made

    def as_json(self) -> dict[str, Any]:
        return {name: value for name, value in (("links", self.links), ("events", self.events),
                                                ("moves", self.moves), ("notes", self.notes)) if value}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> "Landed":
        data = data or {}
        return cls(list(data.get("links", ())), list(data.get("events", ())), list(data.get("moves", ())),
                   list(data.get("notes", ())))


class Calendar(Protocol):
    def apply_proposed(self, tx: WorkspaceTx, principal: Principal, op: dict[str, Any], landed: Landed) -> None: ...

    def undo_create(self, tx: WorkspaceTx, principal: Principal, event_id: str) -> str: ...

    def undo_move(self, tx: WorkspaceTx, principal: Principal, move: dict[str, Any]) -> str: ...


class EventNotes:
    """The calendar as the knowledge model keeps it (``fastpad.knowledge.calendar``): an event
    is a note of type ``Event`` with ``Event.start``/``Event.end``. ``add_event`` creates one
    (in one write, typed even before the workspace defines ``Event``, so defining it later
    finds the note); ``move_event`` sets the two properties through the typed write."""

    def __init__(self, notes: Any, typed_notes: Any) -> None:
        self.notes = notes
        self.typed_notes = typed_notes

    def apply_proposed(self, tx: WorkspaceTx, principal: Principal, op: dict[str, Any], landed: Landed) -> None:
        window = {START: op["start"], END: op["end"]}
        if op["op"] == "add_event":
            location = {f"{EVENT}.location": op["location"]} if op.get("location") else {}
            note = self.notes.create_in(tx, principal, title=op["title"], types=(EVENT,),
                                        properties={**window, **location})
            landed.events.append(note.id)
        else:
            before = _window(tx.note(op["event_id"]))
            self.typed_notes.apply_in(tx, principal, op["event_id"], properties=window)
            landed.moves.append({"event_id": op["event_id"], "before": before, "after": window})

    def undo_create(self, tx: WorkspaceTx, principal: Principal, event_id: str) -> str:
        return trash_created_note(self.notes, tx, principal, event_id)

    def undo_move(self, tx: WorkspaceTx, principal: Principal, move: dict[str, Any]) -> str:
        row = tx.note(move["event_id"])
        if row is None or row.trashed_at is not None:
            return GONE
        if _window(row) != move["after"]:
            return KEPT_CHANGED
        try:
            self.typed_notes.apply_in(tx, principal, row.id, properties=move["before"])
        except ValidationFailed:
            # Refused before anything was written: the note is no longer an Event (or the
            # workspace's Event type changed), so the old window has nowhere to go.
            return KEPT_CHANGED
        return RESTORED


def trash_created_note(notes: Any, tx: WorkspaceTx, principal: Principal, note_id: str) -> str:
    """Undo a landing's creation of a note: to the trash, or ``gone`` if it already is."""
    row = tx.note(note_id)
    if row is None or row.trashed_at is not None:
        return GONE
    notes.trash_in(tx, principal, note_id)
    return TRASHED


class KnowledgeEffects:
    def __init__(self, graph: Any | None = None, calendar: Calendar | None = None, notes: Any | None = None) -> None:
        self.graph = graph
        self.calendar = calendar
        self.notes = notes  # to trash, on revert, a note an agent's creation turn made

    def apply_op(self, tx: WorkspaceTx, principal: Principal, turn: TurnRow, index: int, landed: Landed) -> None:
        """Apply one accepted edge/calendar op of ``turn`` for ``principal`` (a person)."""
        op = turn.ops[index]
        if op["op"] == "add_edge":
            made = self._graph().create_link_in(
                tx, principal, source_note_id=turn.note_id, type=op["type"], target_note_id=op["to_note_id"],
                source_block_id=op.get("block_id"),
            )
            if made.created:
                landed.links.append(made.edge.id)
        else:
            self._calendar().apply_proposed(tx, principal, op, landed)

    def cite(self, tx: WorkspaceTx, principal: Principal, turn: TurnRow,
             citations: Collection[tuple[str, str, str]], landed: Landed) -> None:
        """``(citing block id, source note id, source block id)`` become ``cites`` edges."""
        if self.graph is None:
            return
        for block_id, source_note_id, _source_block_id in citations:
            source = tx.note(source_note_id) if principal.can_see(source_note_id) else None
            if source is None or source.trashed_at is not None:
                continue  # nothing to link to now; the citation stays on the turn
            made = self.graph.create_link_in(tx, principal, source_note_id=turn.note_id, type=CITES,
                                             target_note_id=source_note_id, source_block_id=block_id)
            if made.created:
                landed.links.append(made.edge.id)

    def undo(self, tx: WorkspaceTx, principal: Principal, landings: Sequence[Landed]) -> list[list[str]]:
        """Take back what ``landings`` (oldest first) did, newest first, by the rules in the
        module docstring. Returns ``[kind, id, outcome]`` for each thing, kind one of
        ``link``, ``event``, ``move``, ``note``."""
        undone: list[list[str]] = []
        for landed in reversed(landings):
            for note_id in landed.notes:
                undone.append(["note", note_id, trash_created_note(_required(self.notes, "notes"), tx, principal,
                                                                   note_id)])
            for move in reversed(landed.moves):
                undone.append(["move", move["event_id"], self._calendar().undo_move(tx, principal, move)])
            for event_id in landed.events:
                undone.append(["event", event_id, self._calendar().undo_create(tx, principal, event_id)])
            for link_id in landed.links:
                undone.append(["link", link_id, self._unlink(tx, principal, link_id)])
        return undone

    def _unlink(self, tx: WorkspaceTx, principal: Principal, link_id: str) -> str:
        link = tx.links.get(link_id)
        if link is None:
            return GONE
        if link.confirmed_by is not None:
            return KEPT_CONFIRMED
        self._graph().delete_link_in(tx, principal, link_id)
        return REMOVED

    def _graph(self) -> Any:
        return _required(self.graph, "links")

    def _calendar(self) -> Calendar:
        return _required(self.calendar, "calendar events")


def _window(row: NoteRow | None) -> dict[str, Any]:
    """An event's window as its properties hold it (None: not set)."""
    properties = row.properties if row is not None else {}
    return {START: properties.get(START), END: properties.get(END)}


def _required(service: Any, what: str) -> Any:
    if service is None:
        raise PolicyDenied(
            detail=f"this server cannot accept proposed {what} yet; nothing was applied",
            extra={"reason": "unsupported_op"},
        )
    return service
