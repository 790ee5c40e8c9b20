"""``fastpad_history``: one block as it stands (``HistoryService.block``) — its text, who last
wrote it, its origin and review state. Not a version log."""

from __future__ import annotations

from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, NoteBody, ToolOutput, ToolSpec
from fastpad.security.scopes import NOTES_READ


def run(call: Call) -> ToolOutput:
    state = call.deployment.history.block(call.principal, call.args["note_id"], call.args["block_id"])
    block = {"id": state.block_id, "type": state.type, "text": state.text, "attrs": state.attrs,
             "origin": state.origin, "review_state": state.review_state}
    members = {
        "block_id": state.block_id, "position": state.position, "origin": state.origin,
        "review_state": state.review_state, "author": None if state.author is None else state.author.as_dict(),
        "written_at": None if state.written_at is None else state.written_at.isoformat(),
    }
    return ToolOutput({}, key="blocks", notes=[NoteBody(state.note_id, "", [block], frontmatter=False,
                                                        members=members)])


TOOL = ToolSpec(
    name="fastpad_history",
    title="Block state",
    description="One block as it stands: Markdown, who last wrote it (person or agent, which credential), when, "
                "origin (human_typed, agent_written, inbound_untrusted), review state. Not a version log.",
    scopes=(NOTES_READ,),
    input_schema=s.inputs({"session": s.SESSION, "note_id": s.STR, "block_id": s.STR, "floor": s.FLOOR},
                          "session", "note_id", "block_id"),
    output_schema=s.outputs({"blocks": s.array(s.OBJ)}, "blocks"),
    run=run,
)
