"""``fastpad_calendar``: events in a time window (``CalendarService.window``). A credential
limited to a set of notes gets busy intervals only — no titles, no notes. Never writes:
events are proposed with ``add_event``/``move_event`` ops."""

from __future__ import annotations

from datetime import datetime

from fastpad.errors import FieldError, ValidationFailed
from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, ToolOutput, ToolSpec
from fastpad.security.scopes import NOTES_READ


def run(call: Call) -> ToolOutput:
    start, end = _instant(call.args, "start"), _instant(call.args, "end")
    window = call.deployment.calendar.window(call.principal, start, end)
    data = {"start": window.start.isoformat(), "end": window.end.isoformat(), "busy_only": window.busy_only}
    if window.truncated:
        data["more_events"] = True  # past the service's cap: narrow the window
    if window.busy_only:
        return ToolOutput(data, key="busy", items=[b.as_dict() for b in window.busy])
    return ToolOutput(data, key="events", items=[e.as_dict() for e in window.events], notice=True)


def _instant(args: dict, name: str) -> datetime:
    try:
        value = datetime.fromisoformat(args[name])
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        raise ValidationFailed(detail=f"{name} must be ISO 8601 with an offset",
                               field_errors=[FieldError(name, "datetime", "e.g. 2026-03-01T09:00:00+01:00")])
    return value


TOOL = ToolSpec(
    name="fastpad_calendar",
    title="Calendar",
    description="Events between start and end (ISO 8601 with offset, at most 366 days): note_id, title, start, end, "
                "all_day. A note-scoped credential gets busy intervals only. Read-only: propose add_event or "
                "move_event ops.",
    scopes=(NOTES_READ,),
    input_schema=s.inputs({"session": s.SESSION, "start": s.STR, "end": s.STR, "cursor": s.CURSOR},
                          "session", "start", "end"),
    output_schema=s.outputs({"events": s.array(s.OBJ), "busy": s.array(s.OBJ), "busy_only": s.BOOL, **s.BUDGET},
                            "busy_only"),
    run=run,
)
