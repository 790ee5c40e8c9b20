"""``fastpad_context``: a packed context bundle for a question, within a token budget.

1. **Retrieve**: hybrid search at the call's trust floor (its best hits and their anchor blocks).
2. **Expand**: around each anchor, the blocks before and after it and the heading it sits
   under; from the best notes, one hop along the graph (asserted edges only, for agents)
   to the opening blocks of linked notes.
3. **Dedupe** by block id, keeping a block's best score.
4. **Rerank**: a block scores its note's fused search score, weighted by how it was
   reached (anchor > neighbour > heading > linked note); notes are ordered by their best
   block, blocks within a note by position.
5. **Fit** ``max_tokens`` (the outbound path cuts at a block boundary, with a cursor).

Everything leaves as fenced excerpts through the outbound path, which also records the
read for the copy guard.

Scope: the tool needs ``notes:read`` (spec table). Retrieval and expansion run the
search and graph services for the same credential with ``search:read`` and
``graph:read`` added: within the credential's note set, titles, snippets and edges
between its notes say nothing a body read under ``notes:read`` does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from fastpad.errors import NotFound
from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, NoteBody, ToolOutput, ToolSpec
from fastpad.search.service import MAX_QUERY_CHARS
from fastpad.security.scopes import GRAPH_READ, NOTES_READ, SEARCH_READ

HITS = 8  # notes retrieved
ANCHORS_PER_NOTE = 3
EXPAND_FROM = 3  # best notes whose links are followed
LINKS_PER_NOTE = 5
LINKED_BLOCKS = 2  # opening blocks taken from a linked note
WEIGHT = {"anchor": 1.0, "neighbour": 0.6, "heading": 0.5, "linked": 0.35}
DEFAULT_TOKENS = 8_000


@dataclass
class _Note:
    view: Any  # NoteView
    scores: dict[str, float] = field(default_factory=dict)  # block id -> best score
    via: set[str] = field(default_factory=set)

    def add(self, block_id: str, score: float, how: str) -> None:
        self.scores[block_id] = max(score * WEIGHT[how], self.scores.get(block_id, 0.0))
        self.via.add("graph" if how == "linked" else "search")

    @property
    def best(self) -> float:
        return max(self.scores.values(), default=0.0)


def run(call: Call) -> ToolOutput:
    args = call.args
    principal = call.principal
    reader = replace(principal, scopes=principal.scopes | {SEARCH_READ, GRAPH_READ})  # see the module docstring
    deployment = call.deployment
    hits = deployment.search.search(reader, args["query"], limit=HITS, floor=call.floor,
                                    include_archived=args.get("include_archived", False)).hits
    found: dict[str, _Note] = {}

    def note(note_id: str) -> _Note | None:
        if note_id not in found:
            try:
                found[note_id] = _Note(deployment.notes.get(principal, note_id))
            except NotFound:
                return None
        return found[note_id]

    for hit in hits:
        target = note(hit.note_id)
        if target is None:
            continue
        blocks = target.view.blocks
        position = {b["id"]: i for i, b in enumerate(blocks)}
        for rank, anchor in enumerate(hit.anchors[:ANCHORS_PER_NOTE]):
            if anchor not in position:
                continue
            i = position[anchor]
            score = hit.score * (1.0 - 0.1 * rank)
            target.add(anchor, score, "anchor")
            for j in (i - 1, i + 1):
                if 0 <= j < len(blocks):
                    target.add(blocks[j]["id"], score, "neighbour")
            heading = next((blocks[j] for j in range(i - 1, -1, -1) if blocks[j]["type"] == "heading"), None)
            if heading is not None:
                target.add(heading["id"], score, "heading")
    for hit in hits[:EXPAND_FROM]:
        for edge in deployment.graph.neighbors(reader, hit.note_id, floor=call.floor, limit=LINKS_PER_NOTE):
            other = edge.target if edge.direction == "out" else edge.source
            if other is None or other.id in found:
                continue
            linked = note(other.id)
            if linked is not None:
                for block in [b for b in linked.view.blocks if b["text"].strip()][:LINKED_BLOCKS]:
                    linked.add(block["id"], hit.score, "linked")

    ranked = sorted((n for n in found.values() if n.scores), key=lambda n: -n.best)
    bodies = [NoteBody(
        n.view.id, n.view.title, [b for b in n.view.blocks if b["id"] in n.scores], frontier=n.view.frontier,
        frontmatter=False, members={"score": round(n.best, 6), "via": sorted(n.via)},
        read=[(b["id"], b["text"]) for b in n.view.blocks],
    ) for n in ranked]
    return ToolOutput({"query": args["query"]}, key="notes", notes=bodies,
                      max_tokens=args.get("max_tokens", DEFAULT_TOKENS))


TOOL = ToolSpec(
    name="fastpad_context",
    title="Context bundle",
    description="One budgeted bundle for a question: search hits expanded with neighbouring blocks, their heading "
                "and one-hop linked notes, deduped, reranked, fit to max_tokens. Markdown excerpts with block "
                "anchors; fastpad_fetch reads a note whole.",
    scopes=(NOTES_READ,),
    input_schema=s.inputs({
        "session": s.SESSION,
        "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
        "max_tokens": s.integer(1_000, 25_000, DEFAULT_TOKENS),
        "floor": s.FLOOR,
        "include_archived": s.BOOL,
        "cursor": s.CURSOR,
    }, "session", "query"),
    output_schema=s.outputs({"notes": s.array(s.OBJ), **s.BUDGET}, "notes"),
    run=run,
)
