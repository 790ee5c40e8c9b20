"""CalendarService: events in a window for a workspace reader, busy intervals for a note-scoped one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from fastpad.errors import InsufficientScope, ValidationFailed
from fastpad.knowledge.calendar import MAX_WINDOW, CalendarService
from fastpad.knowledge.query import KnowledgeQueryService
from fastpad.knowledge.types import TypeService

DAY = datetime(2026, 12, 7, tzinfo=timezone.utc)  # a Monday


def at(hour: float, day: int = 0) -> datetime:
    return DAY + timedelta(days=day, hours=hour)


@pytest.fixture
def calendar(svc) -> CalendarService:
    return CalendarService(svc.store, KnowledgeQueryService(svc.store))


@pytest.fixture
def event_type(svc, ws) -> None:
    TypeService(svc.store).define(ws.owner, name="Event", properties=[
        {"name": "start", "kind": "datetime"}, {"name": "end", "kind": "datetime"},
        {"name": "all_day", "kind": "checkbox"}])
    TypeService(svc.store).define(ws.owner, name="Meeting", extends=["Event"])


def event(svc, ws, title, start, end=None, *, all_day=False, types=("Event",)):
    properties = {"Event.start": start.isoformat(), "Event.all_day": all_day}
    if end is not None:
        properties["Event.end"] = end.isoformat()
    return svc.notes.create(ws.owner, title=title, types=list(types), properties=properties).id


def token(svc, ws, scopes, **kwargs):
    plaintext, _ = svc.tokens.create(ws.id, scopes=list(scopes), **kwargs)
    return svc.tokens.authenticate(plaintext)


def test_a_workspace_reader_gets_the_events_overlapping_the_window(svc, ws, event_type, calendar) -> None:
    standup = event(svc, ws, "Standup", at(9), at(9.25), types=("Meeting",))  # a type extending Event
    review = event(svc, ws, "Review", at(14), at(15))
    early = event(svc, ws, "Deploy", at(7), at(8.5))  # starts before the window
    holiday = event(svc, ws, "Holiday", at(0), at(0, day=1), all_day=True)
    reminder = event(svc, ws, "Call back", at(11))  # a moment: no end
    event(svc, ws, "Tomorrow", at(9, day=1), at(10, day=1))
    event(svc, ws, "Ended just before", at(6), at(8))
    event(svc, ws, "Moment before", at(7.5))
    svc.notes.create(ws.owner, title="Not an event", properties={"start": at(9).isoformat()})
    trashed = event(svc, ws, "Cancelled", at(10), at(11))
    svc.notes.trash(ws.owner, trashed)
    archived = event(svc, ws, "Archived", at(16), at(17))
    svc.notes.archive(ws.owner, archived)

    window = calendar.window(ws.owner, at(8), at(18))
    assert window.busy_only is False and window.truncated is False
    assert [e.note_id for e in window.events] == [holiday, early, standup, reminder, review, archived]
    by_id = {e.note_id: e for e in window.events}
    assert (by_id[review].start, by_id[review].end, by_id[review].title) == (at(14), at(15), "Review")
    assert by_id[holiday].all_day is True and by_id[review].all_day is False
    assert by_id[reminder].end is None and by_id[archived].archived is True
    body = window.as_dict()
    assert "busy" not in body and body["events"][0]["start"] == at(0).isoformat()


def test_a_note_scoped_token_gets_busy_intervals_only(svc, ws, event_type, calendar) -> None:
    mine = event(svc, ws, "Mine", at(9), at(10))
    event(svc, ws, "Secret A", at(9.5), at(11))  # overlaps: merged
    event(svc, ws, "Secret B", at(11), at(12))  # touches: merged
    event(svc, ws, "Secret C", at(14), at(15))
    event(svc, ws, "Early", at(6), at(8.5))  # clipped to the window
    event(svc, ws, "A moment", at(16))  # takes no time
    scoped = token(svc, ws, ["notes:read"], note_ids=[mine])

    window = calendar.window(scoped, at(8), at(18))
    assert window.busy_only is True and window.events == []
    assert [(b.start, b.end) for b in window.busy] == [(at(8), at(8.5)), (at(9), at(12)), (at(14), at(15))]
    body = window.as_dict()
    assert set(body) == {"start", "end", "busy_only", "truncated", "busy"}
    assert "Secret" not in str(body) and mine not in str(body)
    # A workspace token sees the events themselves.
    assert len(calendar.window(token(svc, ws, ["notes:read"]), at(8), at(18)).events) == 6
    # A credential whose note set is empty learns nothing, not even busy time.
    nothing = calendar.window(ws.owner.sees_nothing_in(ws.id), at(8), at(18))
    assert (nothing.busy, nothing.events) == ([], [])


def test_a_workspace_without_an_event_type_has_an_empty_calendar(svc, ws, calendar) -> None:
    svc.notes.create(ws.owner, title="Untyped", types=["Event"], properties={"Event.start": at(9).isoformat()})
    assert calendar.window(ws.owner, at(0), at(24)).events == []
    TypeService(svc.store).define(ws.owner, name="Event", properties=[{"name": "start", "kind": "date"}])
    assert calendar.window(ws.owner, at(0), at(24)).events == []  # a date-only start is not a calendar


def test_an_event_type_without_an_end_makes_every_event_a_moment(svc, ws, calendar) -> None:
    TypeService(svc.store).define(ws.owner, name="Event", properties=[{"name": "start", "kind": "datetime"}])
    inside = svc.notes.create(ws.owner, title="in", types=["Event"], properties={"Event.start": at(9).isoformat()}).id
    svc.notes.create(ws.owner, title="out", types=["Event"], properties={"Event.start": at(20).isoformat()})
    assert [(e.note_id, e.end) for e in calendar.window(ws.owner, at(8), at(10)).events] == [(inside, None)]


def test_a_crowded_window_is_cut_and_says_so(svc, ws, event_type, calendar, monkeypatch) -> None:
    import fastpad.knowledge.calendar as module

    monkeypatch.setattr(module, "MAX_EVENTS", 3)
    for hour in range(5):
        event(svc, ws, f"e{hour}", at(hour), at(hour + 0.5))
    window = calendar.window(ws.owner, at(0), at(24))
    assert [e.title for e in window.events] == ["e0", "e1", "e2"] and window.truncated is True


def test_bad_windows_are_clear_errors(svc, ws, event_type, calendar) -> None:
    for start, end, field in [
        (at(10), at(9), "end"), (at(10), at(10), "end"), (at(0), at(0) + MAX_WINDOW + timedelta(seconds=1), "end"),
        (at(0).replace(tzinfo=None), at(1), "start"), ("2026-12-07", at(1), "start"),
    ]:
        with pytest.raises(ValidationFailed) as bad:
            calendar.window(ws.owner, start, end)
        assert bad.value.field_errors[0].field == field
    with pytest.raises(InsufficientScope):
        calendar.window(token(svc, ws, ["search:read"]), at(0), at(1))
