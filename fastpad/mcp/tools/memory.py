"""``fastpad_memory``: the memory index (topic names, titles, one-line summaries; no bodies)
or one topic's note (``MemoryService``)."""

from __future__ import annotations

from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, NoteBody, ToolOutput, ToolSpec
from fastpad.security.scopes import NOTES_READ


def run(call: Call) -> ToolOutput:
    memory = call.deployment.memory
    topic = call.args.get("topic")
    if topic is None:
        index = memory.index(call.principal, floor=call.floor.value)
        return ToolOutput({"floor": index.floor.value}, key="topics", items=[t.as_dict() for t in index.topics],
                          item_id=lambda t: t["note_id"], notice=True)
    found = memory.topic(call.principal, topic)
    note = found.note
    return ToolOutput({"topic": found.name}, key="notes", notes=[NoteBody(
        note.id, note.title, note.blocks, frontier=note.frontier, types=note.types, properties=note.properties,
        read=[(b["id"], b["text"]) for b in note.blocks],
    )])


TOOL = ToolSpec(
    name="fastpad_memory",
    title="Memory",
    description="The workspace's memory: without topic, the index of topics (name, note_id, title, one-line "
                "summary); with topic (a name or note id), that topic's note as Markdown.",
    scopes=(NOTES_READ,),
    input_schema=s.inputs({"session": s.SESSION, "topic": s.STR, "floor": s.FLOOR, "cursor": s.CURSOR}, "session"),
    output_schema=s.outputs({"topics": s.array(s.OBJ), "notes": s.array(s.OBJ), **s.BUDGET}),
    run=run,
)
