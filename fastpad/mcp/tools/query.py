"""``fastpad_query``: the structured query over typed properties (``KnowledgeQueryService``).
Rows carry a note's id, title, types and properties — never its body."""

from __future__ import annotations

from typing import Any

from fastpad.knowledge.query import DEFAULT_LIMIT, MAX_LIMIT, QueryRow
from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, ToolOutput, ToolSpec
from fastpad.security.scopes import NOTES_READ

_QUERY_MEMBERS = ("type", "filters", "sort", "group_by", "include_archived")


def run(call: Call) -> ToolOutput:
    query: dict[str, Any] = {k: call.args[k] for k in _QUERY_MEMBERS if k in call.args}
    limit, cursor = call.args.get("limit", DEFAULT_LIMIT), call.args.get("cursor")
    queries = call.deployment.queries
    page = queries.query(call.principal, {**query, "limit": limit, **({"cursor": cursor} if cursor else {})})
    grouped = page.group_by is not None
    rows = [_row(row, grouped) for row in page.items]

    def page_cursor(kept: int) -> str | None:
        """Where to resume after the first ``kept`` rows (the same query, a shorter page)."""
        if kept >= len(rows):
            return page.next_cursor
        shorter = queries.query(call.principal, {**query, "limit": kept, **({"cursor": cursor} if cursor else {})})
        return shorter.next_cursor

    data: dict[str, Any] = {"next_cursor": page.next_cursor} if page.next_cursor else {}
    if grouped:
        data["group_by"] = page.group_by
    return ToolOutput(data, key="rows", items=rows, page_cursor=page_cursor, notice=True)


def _row(row: QueryRow, grouped: bool) -> dict[str, Any]:
    out = {"note_id": row.id, "title": row.title, "types": list(row.types), "properties": row.properties,
           "updated_at": row.updated_at.isoformat()}
    if row.archived:
        out["archived"] = True
    if grouped:
        out["group"] = row.group
    return out


_FILTER = s.obj({"property": s.STR,
                 "op": s.enum("eq", "neq", "in", "lt", "lte", "gt", "gte", "contains", "has", "has_not"),
                 "value": {}}, "property", "op")

TOOL = ToolSpec(
    name="fastpad_query",
    title="Query typed notes",
    description="Notes of a type (or subtype) by typed properties: filtered (all must hold), sorted (up to 3 "
                "keys: a property, title, created_at, updated_at), optionally grouped. Rows: id, title, types, "
                "properties; never bodies. Properties are named Type.property.",
    scopes=(NOTES_READ,),
    input_schema=s.inputs({
        "session": s.SESSION,
        "type": s.STR,
        "filters": s.array(_FILTER, maxItems=20),
        "sort": s.array(s.obj({"property": s.STR, "direction": s.enum("asc", "desc")}, "property"), maxItems=3),
        "group_by": s.STR,
        "include_archived": s.BOOL,
        "limit": s.integer(1, MAX_LIMIT, DEFAULT_LIMIT),
        "cursor": s.CURSOR,
    }, "session", "type"),
    output_schema=s.outputs({"rows": s.array(s.OBJ), **s.BUDGET}, "rows"),
    run=run,
)
