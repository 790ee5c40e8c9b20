"""Collections on both backends: a saved view (query + layout) stores the question, never
the answer; the same object is opened from the sidebar or embedded in a note."""

from __future__ import annotations

import pytest

from fastpad.errors import Conflict, NotFound, OutOfScope, ValidationFailed
from fastpad.knowledge.saved_views import EMBED_LANGUAGE
from tests.services.typed_helpers import Typed, agent


@pytest.fixture
def typed(svc, ws) -> Typed:
    typed = Typed.over(svc)
    typed.types.define(ws.owner, name="Event", properties=[
        {"name": "start", "kind": "datetime"}, {"name": "end", "kind": "datetime"},
        {"name": "status", "kind": "select", "options": ["planned", "done"]}, {"name": "title", "kind": "text"}])
    return typed


def _event(svc, ws, typed, title: str, start: str, status: str = "planned") -> str:
    note = svc.notes.create(ws.owner, title=title).id
    typed.notes.apply(ws.owner, note, add=["Event"], properties={"Event.start": start, "Event.status": status})
    return note


PLANNED = {"type": "Event", "filters": [{"property": "Event.status", "op": "eq", "value": "planned"}],
           "sort": [{"property": "Event.start"}]}


def test_a_collection_stores_the_view_and_runs_it_now(svc, store, ws, typed):
    _event(svc, ws, typed, "Standup", "2025-03-03T09:00:00+01:00")
    view = typed.collections.create(ws.owner, name="Upcoming", layout="calendar", query=PLANNED,
                                    layout_options={"start": "Event.start", "end": "Event.end"}).as_dict()
    assert view["query"] == PLANNED and view["layout_options"] == {"start": "Event.start", "end": "Event.end"}
    march = {"window_start": "2025-03-01", "window_end": "2025-04-01"}
    assert [r.title for r in typed.collections.rows(ws.owner, view["id"], **march).items] == ["Standup"]

    # An embedding note holds the collection's id in one block, never its rows.
    host = svc.notes.create(ws.owner, markdown=f"# Week\n\n{view['embed_markdown']}\n")
    block = host.blocks[1]
    assert (block["type"], block["attrs"]["language"], block["text"]) == ("code", EMBED_LANGUAGE, view["id"])

    # Rows that appear later show up in the same view; nothing stored changed.
    _event(svc, ws, typed, "Retro", "2025-03-02T16:00:00Z")
    _event(svc, ws, typed, "Launch", "2025-03-01T10:00:00Z", status="done")
    assert [r.title for r in typed.collections.rows(ws.owner, view["id"], **march).items] == ["Retro", "Standup"]
    with store.read(ws.id) as tx:
        stored = tx.typed.collection(view["id"])
    assert stored is not None and stored.query == PLANNED and stored.version == 1
    assert svc.notes.get(ws.owner, host.id).blocks == host.blocks
    assert typed.collections.get(ws.owner, view["id"]).as_dict() == view


def test_rows_are_paged_and_seen_through_the_callers_note_set(svc, ws, typed):
    ids = [_event(svc, ws, typed, f"e{i}", f"2025-03-0{i + 1}T09:00:00Z") for i in range(5)]
    view = typed.collections.create(ws.owner, name="All", query={"type": "Event"})
    first = typed.collections.rows(ws.owner, view.row.id, limit=2)
    second = typed.collections.rows(ws.owner, view.row.id, limit=2, cursor=first.next_cursor)
    assert [r.id for r in first.items + second.items] == ids[:4]
    limited = agent(svc, ws.id, "notes:read", note_ids=ids[3:])
    assert [r.id for r in typed.collections.rows(limited, view.row.id).items] == ids[3:]


def _span(svc, ws, typed, title: str, start: str, end: str | None = None) -> str:
    note = _event(svc, ws, typed, title, start)
    if end is not None:
        typed.notes.apply(ws.owner, note, properties={"Event.end": end})
    return note


def test_a_calendar_and_a_timeline_read_only_the_rows_in_their_window(svc, ws, typed):
    """The window is applied by the query: rows outside it are never read, and a span
    overlapping an edge, or a row without an end inside it, is in."""
    before = _span(svc, ws, typed, "Before", "2025-02-10T09:00:00Z", "2025-02-12T09:00:00Z")
    into = _span(svc, ws, typed, "Into March", "2025-02-25T09:00:00Z", "2025-03-02T09:00:00Z")
    point = _span(svc, ws, typed, "Point in March", "2025-03-15T09:00:00Z")
    across = _span(svc, ws, typed, "Across April", "2025-03-30T09:00:00Z", "2025-04-03T09:00:00Z")
    after = _span(svc, ws, typed, "April", "2025-04-01T00:00:00Z")
    open_before = _span(svc, ws, typed, "Point in February", "2025-02-20T09:00:00Z")
    march = {"window_start": "2025-03-01", "window_end": "2025-04-01"}
    timeline = typed.collections.create(ws.owner, name="Spans", layout="timeline", query={"type": "Event", "sort": [
        {"property": "Event.start"}]}, layout_options={"start": "Event.start", "end": "Event.end"})
    assert [r.id for r in typed.collections.rows(ws.owner, timeline.row.id, **march).items] == [into, point, across]
    calendar = typed.collections.create(ws.owner, name="Starts", layout="calendar", query={"type": "Event", "sort": [
        {"property": "Event.start"}]}, layout_options={"start": "Event.start"})
    assert [r.id for r in typed.collections.rows(ws.owner, calendar.row.id, **march).items] == [point, across]
    # Paged, the window stays part of what the cursor belongs to.
    first = typed.collections.rows(ws.owner, timeline.row.id, limit=2, **march)
    rest = typed.collections.rows(ws.owner, timeline.row.id, limit=2, cursor=first.next_cursor, **march)
    assert [r.id for r in first.items + rest.items] == [into, point, across] and rest.next_cursor is None
    with pytest.raises(ValidationFailed):
        typed.collections.rows(ws.owner, timeline.row.id, cursor=first.next_cursor,
                               window_start="2025-02-01", window_end="2025-03-01")
    assert {before, after, open_before}.isdisjoint(r.id for r in typed.collections.rows(
        ws.owner, timeline.row.id, **march).items)


def test_a_window_is_required_where_time_places_rows_and_refused_elsewhere(ws, typed):
    timeline = typed.collections.create(ws.owner, name="T", layout="timeline", query={"type": "Event"},
                                        layout_options={"start": "Event.start"})
    table = typed.collections.create(ws.owner, name="All", query={"type": "Event"})
    cases = [(timeline, {}, {"window_start": "required", "window_end": "required"}),
             (timeline, {"window_start": "2025-03-01", "window_end": "2025-03-01"}, {"window_end": "order"}),
             (timeline, {"window_start": "March", "window_end": "2025-03-01T00:00:00"},
              {"window_start": "datetime", "window_end": "datetime"}),
             (timeline, {"window_start": "2000-01-01", "window_end": "2025-01-01"}, {"window_end": "range"}),
             (table, {"window_start": "2025-03-01"}, {"window_start": "not_allowed"})]
    for view, window, expected in cases:
        with pytest.raises(ValidationFailed) as exc:
            typed.collections.rows(ws.owner, view.row.id, **window)
        assert {fe.field: fe.code for fe in exc.value.field_errors} == expected, window


def test_layouts_check_what_they_need(ws, typed):
    with pytest.raises(ValidationFailed) as exc:
        typed.collections.create(ws.owner, name="Board", layout="board", query={"type": "Event"})
    assert [fe.field for fe in exc.value.field_errors] == ["query.group_by"]
    typed.collections.create(ws.owner, name="Board", layout="board", query={"type": "Event", "group_by": "Event.status"})
    with pytest.raises(ValidationFailed) as exc:
        typed.collections.create(ws.owner, name="Cal", layout="calendar", query={"type": "Event"},
                                 layout_options={"start": "Event.title", "colour": "red"})
    assert {fe.field: fe.code for fe in exc.value.field_errors} == {
        "layout_options.colour": "unknown_field", "layout_options.start": "time_property"}
    with pytest.raises(ValidationFailed) as exc:
        typed.collections.create(ws.owner, name="", layout="spreadsheet",
                                 query={"type": "Event", "filters": [{"property": "Event.nope", "op": "has"}]})
    assert [fe.field for fe in exc.value.field_errors] == ["query.filters[0].property"]
    with pytest.raises(ValidationFailed) as exc:
        typed.collections.create(ws.owner, name="", layout="spreadsheet", query={"type": "Event"})
    assert {fe.field for fe in exc.value.field_errors} == {"name", "layout"}


def test_updates_are_versioned_and_a_schema_change_makes_a_view_stale(svc, ws, typed):
    view = typed.collections.create(ws.owner, name="Planned", layout="table", query=PLANNED).row
    changed = typed.collections.update(ws.owner, view.id, name="Planned events", expected_version=1).row
    assert (changed.name, changed.version, changed.query) == ("Planned events", 2, PLANNED)
    with pytest.raises(Conflict):
        typed.collections.update(ws.owner, view.id, name="again", expected_version=1)
    typed.types.update(ws.owner, "Event", properties=[{"name": "start", "kind": "datetime"}])
    with pytest.raises(Conflict) as exc:
        typed.collections.rows(ws.owner, view.id)
    assert exc.value.extra["reason"] == "stale_view"
    assert exc.value.field_errors[0].field == "query.filters[0].property"
    typed.collections.update(ws.owner, view.id, query={"type": "Event", "sort": [{"property": "Event.start"}]})
    assert typed.collections.rows(ws.owner, view.id).items == []


def test_who_may_change_collections(svc, ws, typed):
    note = _event(svc, ws, typed, "e", "2025-03-01T09:00:00Z")
    limited = agent(svc, ws.id, "notes:read", "notes:write", note_ids=[note])
    with pytest.raises(OutOfScope):
        typed.collections.create(limited, name="Mine", query={"type": "Event"})
    writer = agent(svc, ws.id, "notes:read", "notes:write")
    view = typed.collections.create(writer, name="Agent's", query={"type": "Event"}).row
    typed.collections.delete(writer, view.id)
    with pytest.raises(NotFound):
        typed.collections.get(ws.owner, view.id)
    with pytest.raises(NotFound):
        typed.collections.delete(ws.owner, view.id)
    assert typed.collections.list(ws.owner) == []
