"""What an accepted turn does outside its note's prose, through the services that own it.

- An accepted ``add_edge`` op becomes an edge (``GraphService.create_link``), made by
  the person who accepted it, from the turn's note (and block, if the op named one).
- An accepted ``add_event``/``move_event`` op goes to the calendar service.
- When a person accepts prose (or marks an agent's accept reviewed), every source the
  landed blocks cite becomes a ``cites`` edge from the citing block to the source note.

The review service owns no edge or event storage: without the owning service in a
deployment, accepting such an op is refused (nothing is dropped silently) and
citations stay recorded on the turn only.

Each runs after the prose of the same accept has landed; an op is recorded as accepted
as soon as its service applied it, so a failure leaves only what was not done pending
(``create_link`` also returns the existing edge when the same author makes it again).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Protocol

from fastpad.errors import NotFound, PolicyDenied
from fastpad.knowledge.calendar import END, EVENT, START
from fastpad.security.principals import Principal
from fastpad.store.turns import TurnRow

CITES = "cites"


class Calendar(Protocol):
    def apply_proposed(self, principal: Principal, note_id: str, op: dict[str, Any]) -> None: ...


class EventNotes:
    """The calendar as the knowledge model keeps it (``fastpad.knowledge.calendar``): an event
    is a note of type ``Event`` with ``Event.start``/``Event.end``. ``add_event`` creates one
    (in one write, typed even before the workspace defines ``Event``, so defining it later
    finds the note); ``move_event`` sets the two properties through the typed write."""

    def __init__(self, notes: Any, typed_notes: Any) -> None:
        self.notes = notes
        self.typed_notes = typed_notes

    def apply_proposed(self, principal: Principal, note_id: str, op: dict[str, Any]) -> None:
        window = {START: op["start"], END: op["end"]}
        if op["op"] == "add_event":
            location = {f"{EVENT}.location": op["location"]} if op.get("location") else {}
            self.notes.create(principal, title=op["title"], types=(EVENT,), properties={**window, **location})
        else:
            self.typed_notes.apply(principal, op["event_id"], properties=window)


class KnowledgeEffects:
    def __init__(self, graph: Any | None = None, calendar: Calendar | None = None) -> None:
        self.graph = graph
        self.calendar = calendar

    def apply_op(self, principal: Principal, turn: TurnRow, index: int) -> None:
        """Apply one accepted edge/calendar op of ``turn`` for ``principal`` (a person)."""
        op = turn.ops[index]
        if op["op"] == "add_edge":
            self._require(self.graph, "links")
            self.graph.create_link(  # type: ignore[union-attr]
                principal, source_note_id=turn.note_id, type=op["type"], target_note_id=op["to_note_id"],
                source_block_id=op.get("block_id"),
            )
        else:
            self._require(self.calendar, "calendar events")
            self.calendar.apply_proposed(principal, turn.note_id, op)  # type: ignore[union-attr]

    def cite(self, principal: Principal, turn: TurnRow, citations: Collection[tuple[str, str, str]]) -> None:
        """``(citing block id, source note id, source block id)`` become ``cites`` edges."""
        if self.graph is None:
            return
        for block_id, source_note_id, _source_block_id in citations:
            try:
                self.graph.create_link(principal, source_note_id=turn.note_id, type=CITES,
                                       target_note_id=source_note_id, source_block_id=block_id)
            except NotFound:
                continue  # the source note or the citing block is gone since: nothing left to link

    @staticmethod
    def _require(service: object | None, what: str) -> None:
        if service is None:
            raise PolicyDenied(
                detail=f"this server cannot accept proposed {what} yet; nothing was applied",
                extra={"reason": "unsupported_op"},
            )
