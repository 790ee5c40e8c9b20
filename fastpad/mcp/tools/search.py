"""``fastpad_search``: hybrid search (``SearchService``) — ids, titles, heading path, score,
block anchors, a short snippet and why each hit ranked. Never bodies."""

from __future__ import annotations

from typing import Any

from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, ToolOutput, ToolSpec
from fastpad.mcp.tools.limits import SEARCH_MAX_HITS
from fastpad.search.service import MAX_QUERY_CHARS, SearchHit
from fastpad.security.scopes import SEARCH_READ


def run(call: Call) -> ToolOutput:
    args = call.args
    results = call.deployment.search.search(
        call.principal, args["query"], limit=args.get("limit", 10), floor=call.floor,
        include_archived=args.get("include_archived", False),
    )
    data: dict[str, Any] = {"query_kind": results.query_kind, "floor": results.floor,
                            "unavailable": results.unavailable}
    if results.hidden:
        data["hidden"] = [hidden.as_dict() for hidden in results.hidden]
    return ToolOutput(data, key="hits", items=[hit_view(hit) for hit in results.hits],
                      item_id=lambda hit: hit["note_id"], notice=True)


def hit_view(hit: SearchHit) -> dict[str, Any]:
    explanation = hit.explanation
    view: dict[str, Any] = {
        "note_id": hit.note_id, "title": hit.title, "path": list(hit.path), "score": hit.score,
        "anchors": list(hit.anchors), "snippet": hit.snippet,
        # why it ranked: each strategy's rank, the terms that matched, the graph path, any penalty
        "why": {c["strategy"]: c["rank"] for c in explanation.get("contributions", ())},
    }
    for key, name in (("matched_terms", "terms"), ("graph_path", "via"), ("penalties", "penalties")):
        if explanation.get(key):
            view[name] = explanation[key]
    if hit.types:
        view["types"] = list(hit.types)
    if hit.archived:
        view["archived"] = True
    if hit.superseded_by:
        view["superseded_by"] = hit.superseded_by
    return view


TOOL = ToolSpec(
    name="fastpad_search",
    title="Search notes",
    description="Hybrid search (lexical, semantic, graph, recency). Hits: note_id, title, heading path, score, "
                "anchors (block ids, best first), snippet, why it ranked; superseded_by names a newer note. No "
                "bodies (fastpad_fetch reads notes). hidden: matches your floor, archived notes or note set kept out.",
    scopes=(SEARCH_READ,),
    input_schema=s.inputs({
        "session": s.SESSION,
        "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
        "limit": s.integer(1, SEARCH_MAX_HITS, 10),
        "floor": s.FLOOR,
        "include_archived": s.BOOL,
        "cursor": s.CURSOR,
    }, "session", "query"),
    output_schema=s.outputs({"hits": s.array(s.OBJ), "hidden": s.array(s.OBJ), **s.BUDGET}, "hits"),
    run=run,
)
