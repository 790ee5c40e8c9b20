"""``fastpad_graph``: one hop from a note (``GraphService.neighbors``), every edge with its
evidence — the block it was made in and the text around the link. Agents only ever walk
edges a person asserted; evidence below the call's trust floor is withheld."""

from __future__ import annotations

from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.knowledge.graph import Edge
from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, ToolOutput, ToolSpec
from fastpad.notes import is_ulid
from fastpad.security.scopes import GRAPH_READ

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


def run(call: Call) -> ToolOutput:
    args = call.args
    cursor = args.get("cursor")
    if cursor is not None and not is_ulid(cursor):
        raise ValidationFailed(detail="cursor is the next_cursor a previous fastpad_graph call returned",
                               field_errors=[FieldError("cursor", "malformed_cursor", "pass next_cursor back")])
    limit = args.get("limit", DEFAULT_LIMIT)
    found = call.deployment.graph.neighbors(
        call.principal, args["note_id"], edge_types=args.get("edge_types"), direction=args.get("direction", "both"),
        floor=call.floor, after=cursor, limit=limit + 1,
    )
    edges = [_edge(edge) for edge in found[:limit]]
    data: dict[str, Any] = {"from_note_id": args["note_id"]}
    if len(found) > limit:
        data["next_cursor"] = edges[-1]["edge_id"]

    def page_cursor(kept: int) -> str | None:
        return data.get("next_cursor") if kept >= len(edges) else edges[kept - 1]["edge_id"] if kept else cursor

    return ToolOutput(data, key="edges", items=edges, item_id=lambda e: e["edge_id"], page_cursor=page_cursor,
                      notice=True)


def _edge(edge: Edge) -> dict[str, Any]:
    other = edge.target if edge.direction == "out" else edge.source
    view: dict[str, Any] = {
        "edge_id": edge.id, "type": edge.type, "direction": edge.direction,
        "note_id": None if other is None else other.id,
        "title": edge.target_title if other is None else other.title,
        "status": edge.status,
        "evidence": {"block_id": edge.evidence.block_id, "text": edge.evidence.text,
                     **({"withheld": True} if edge.evidence.withheld else {})},
    }
    if edge.confidence is not None:
        view["confidence"] = edge.confidence
    return view


TOOL = ToolSpec(
    name="fastpad_graph",
    title="Linked notes",
    description="One hop from a note: its typed edges, each with the linked note and its evidence (the block the "
                "link was made in and the text around it). Only edges a person asserted are walked.",
    scopes=(GRAPH_READ,),
    input_schema=s.inputs({
        "session": s.SESSION,
        "note_id": s.STR,
        "direction": s.enum("out", "in", "both"),
        "edge_types": s.STRS,
        "floor": s.FLOOR,
        "limit": s.integer(1, MAX_LIMIT, DEFAULT_LIMIT),
        "cursor": s.CURSOR,
    }, "session", "note_id"),
    output_schema=s.outputs({"edges": s.array(s.OBJ), **s.BUDGET}, "edges"),
    run=run,
)
