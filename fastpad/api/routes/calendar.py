"""``GET /v1/calendar``: events in a time window, or busy intervals only for a
credential limited to a set of notes. Never writes. Parse, call CalendarService, render."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response
from fastpad.knowledge.calendar import MAX_EVENTS, MAX_WINDOW

router = APIRouter(prefix="/v1", tags=["calendar"])


class EventOut(BaseModel):
    note_id: str
    title: str
    start: str
    end: str | None = Field(description="null: a moment, not a span")
    all_day: bool
    archived: bool


class BusyOut(BaseModel):
    start: str
    end: str


class CalendarOut(BaseModel):
    start: str
    end: str
    busy_only: bool = Field(description="true for a credential limited to a set of notes: busy intervals, no events")
    truncated: bool = Field(description=f"more than {MAX_EVENTS} events: narrow the window")
    events: list[EventOut] | None = Field(default=None, description="when busy_only is false")
    busy: list[BusyOut] | None = Field(default=None, description="when busy_only is true: merged, clipped to the window")


@router.get(
    "/calendar",
    response_model=CalendarOut,
    summary="Events (notes of type Event) overlapping [start, end); busy intervals only for a note-scoped credential",
    responses=problems(_422=f"validation-failed: start/end not datetimes with an offset, end not after start, "
                            f"or more than {MAX_WINDOW.days} days apart"),
)
def calendar_window(
    request: Request,
    caller: Authenticated,
    start: Annotated[datetime, Query(description="ISO 8601 with an offset, e.g. 2026-12-07T00:00:00Z")],
    end: Annotated[datetime, Query(description="ISO 8601 with an offset; after start")],
) -> Response:
    if caller.elsewhere:
        return json_response({"start": start.isoformat(), "end": end.isoformat(), "busy_only": True, "truncated": False,
                      "busy": []})
    return json_response(request.app.state.deployment.calendar.window(caller.principal, start, end).as_dict())
