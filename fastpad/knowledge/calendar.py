"""CalendarService: events in a time window (spec: MCP › fastpad_calendar). Never writes.

An event is a note that is an ``Event`` (or a type extending it) with the
typed properties ``Event.start`` and ``Event.end`` (datetimes) and
``Event.all_day`` (a checkbox). A workspace that has not defined ``Event``
with a datetime ``start`` has no calendar: every window is empty. The rows
come from the structured query over the typed index (KnowledgeQueryService),
so trashed notes never appear and archived ones do (an archived meeting still
happened).

An event ``[start, end)`` is in the window ``[start, end)`` when the two
overlap; an event without an end is a moment, in the window when it falls
inside it.

What a reader gets depends on its reach:

- a credential that sees the whole workspace gets the events: note, title,
  start, end, all-day;
- a credential limited to a set of notes gets only busy intervals — the
  workspace's events merged and clipped to the window, with no note, title or
  count — so an agent can schedule around a person's time without reading
  their calendar. A credential whose note set is empty gets nothing at all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.knowledge.property_index import load_schema
from fastpad.knowledge.query import MAX_LIMIT, KnowledgeQueryService, QueryRow
from fastpad.knowledge.schema import PropertyDef
from fastpad.knowledge.values import InvalidValue, index_entries
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ
from fastpad.store import Store

EVENT = "Event"
START, END, ALL_DAY = f"{EVENT}.start", f"{EVENT}.end", f"{EVENT}.all_day"
MAX_WINDOW = timedelta(days=366)
MAX_EVENTS = 1000  # per window; past it the answer says it was cut and to narrow the window
_DATETIME = PropertyDef("value", "datetime")


@dataclass(frozen=True)
class Event:
    note_id: str
    title: str
    start: datetime
    end: datetime | None  # None: a moment
    all_day: bool
    archived: bool

    def as_dict(self) -> dict[str, Any]:
        return {"note_id": self.note_id, "title": self.title, "start": self.start.isoformat(),
                "end": None if self.end is None else self.end.isoformat(), "all_day": self.all_day,
                "archived": self.archived}


@dataclass(frozen=True)
class Busy:
    start: datetime
    end: datetime

    def as_dict(self) -> dict[str, str]:
        return {"start": self.start.isoformat(), "end": self.end.isoformat()}


@dataclass(frozen=True)
class CalendarWindow:
    start: datetime
    end: datetime
    busy_only: bool  # the reader is limited to a set of notes: busy intervals, no events
    events: list[Event]
    busy: list[Busy]
    truncated: bool  # more than MAX_EVENTS events: narrow the window

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"start": self.start.isoformat(), "end": self.end.isoformat(),
                               "busy_only": self.busy_only, "truncated": self.truncated}
        if self.busy_only:
            out["busy"] = [b.as_dict() for b in self.busy]
        else:
            out["events"] = [e.as_dict() for e in self.events]
        return out


class CalendarService:
    def __init__(self, store: Store, queries: KnowledgeQueryService) -> None:
        self.store = store
        self.queries = queries

    def window(self, principal: Principal, start: datetime, end: datetime) -> CalendarWindow:
        principal.require(NOTES_READ)
        _check_window(start, end)
        busy_only = principal.note_ids is not None
        if busy_only and not principal.note_ids:
            return CalendarWindow(start, end, True, [], [], False)
        # Busy time covers the whole workspace: the reader gets intervals only, never what they were.
        reader = replace(principal, note_ids=None) if busy_only else principal
        events, truncated = self._events(reader, start, end)
        if busy_only:
            return CalendarWindow(start, end, True, [], _busy(events, start, end), truncated)
        return CalendarWindow(start, end, False, events, [], truncated)

    def _events(self, reader: Principal, start: datetime, end: datetime) -> tuple[list[Event], bool]:
        with self.store.read(reader.workspace_id) as tx:
            schema = load_schema(tx)
        kinds = {key: (found[1].kind if (found := schema.resolve(key)) else None) for key in (START, END, ALL_DAY)}
        if kinds[START] != "datetime":
            return [], False  # no calendar in this workspace
        has_end = kinds[END] == "datetime"
        starts_before_end = {"property": START, "op": "lt", "value": end.isoformat()}
        # A moment: no end (or no end property), starting inside the window.
        moments = [starts_before_end, {"property": START, "op": "gte", "value": start.isoformat()}]
        queries = [moments + ([{"property": END, "op": "has_not"}] if has_end else [])]
        if has_end:  # a span overlapping the window
            queries.append([starts_before_end, {"property": END, "op": "gt", "value": start.isoformat()}])
        rows: list[QueryRow] = []
        for filters in queries:
            rows += self._rows(reader, filters, MAX_EVENTS + 1 - len(rows))
        events = sorted((_event(r, has_end, kinds[ALL_DAY] == "checkbox") for r in rows),
                        key=lambda e: (e.start, e.note_id))
        return events[:MAX_EVENTS], len(events) > MAX_EVENTS

    def _rows(self, reader: Principal, filters: list[dict[str, Any]], budget: int) -> list[QueryRow]:
        definition = {"type": EVENT, "filters": filters, "sort": [{"property": START}], "include_archived": True}
        rows: list[QueryRow] = []
        cursor = None
        while budget > len(rows):
            page = self.queries.run(reader, definition, cursor=cursor, limit=min(MAX_LIMIT, budget - len(rows)))
            rows += page.items
            cursor = page.next_cursor
            if cursor is None:
                break
        return rows


def _event(row: QueryRow, has_end: bool, has_all_day: bool) -> Event:
    start = _instant(row.properties.get(START))
    assert start is not None  # the query matched on it
    end = _instant(row.properties.get(END)) if has_end else None
    all_day = has_all_day and row.properties.get(ALL_DAY) is True
    return Event(row.id, row.title, start, end, all_day, row.archived)


def _instant(value: Any) -> datetime | None:
    """A datetime property's value as the index holds it (UTC), or None when unset or unreadable."""
    try:
        entries = index_entries(_DATETIME, value)
    except InvalidValue:
        return None
    return entries[0].time if entries else None


def _busy(events: list[Event], start: datetime, end: datetime) -> list[Busy]:
    """The events' spans clipped to the window, overlapping and touching ones merged.
    A moment (no end) takes no time."""
    spans = sorted((max(e.start, start), min(e.end, end)) for e in events if e.end is not None and e.end > e.start)
    merged: list[Busy] = []
    for s, e in spans:
        if merged and s <= merged[-1].end:
            if e > merged[-1].end:
                merged[-1] = Busy(merged[-1].start, e)
        else:
            merged.append(Busy(s, e))
    return merged


def _check_window(start: Any, end: Any) -> None:
    errors = [FieldError(name, "datetime", "an ISO 8601 datetime with an offset")
              for name, value in (("start", start), ("end", end))
              if not isinstance(value, datetime) or value.tzinfo is None]
    if not errors and end <= start:
        errors.append(FieldError("end", "range", "after start"))
    elif not errors and end - start > MAX_WINDOW:
        errors.append(FieldError("end", "max_window", f"at most {MAX_WINDOW.days} days after start"))
    if errors:
        raise ValidationFailed(detail="the calendar window is invalid", field_errors=errors)
