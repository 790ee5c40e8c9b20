"""``fastpad_changes``: the workspace change feed since a cursor (``ChangeFeedService``),
filtered to the credential's notes — kinds, notes, blocks touched, who; never bodies.
``wait_ms`` long-polls for the next change."""

from __future__ import annotations

from fastpad.knowledge.changes import MAX_WAIT_MS
from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, ToolOutput, ToolSpec
from fastpad.security.scopes import NOTES_READ

DEFAULT_LIMIT = 100
MAX_LIMIT = 500


async def run(call: Call) -> ToolOutput:
    args = call.args
    page = await call.deployment.changes.long_poll(call.principal, args.get("cursor"), args.get("limit", DEFAULT_LIMIT),
                                                   args.get("wait_ms", 0))
    items = [change.as_dict() for change in page.items]
    return ToolOutput(
        {"next_cursor": page.next_cursor, "has_more": page.has_more}, key="changes", items=items,
        item_id=lambda change: change["cursor"],
        page_cursor=lambda kept: page.next_cursor if kept >= len(items) else items[kept - 1]["cursor"],
    )


TOOL = ToolSpec(
    name="fastpad_changes",
    title="Change feed",
    description="What changed since a cursor, oldest first: kind, note, blocks touched, who, when; no bodies. "
                "Start without a cursor, then pass next_cursor back. has_more: call again now. wait_ms waits for a "
                "change.",
    scopes=(NOTES_READ,),
    input_schema=s.inputs({
        "session": s.SESSION,
        "cursor": s.CURSOR,
        "limit": s.integer(1, MAX_LIMIT, DEFAULT_LIMIT),
        "wait_ms": s.integer(0, MAX_WAIT_MS, 0),
    }, "session"),
    output_schema=s.outputs({"changes": s.array(s.OBJ), "has_more": s.BOOL, **s.BUDGET},
                            "changes", "next_cursor"),
    run=run,
)
