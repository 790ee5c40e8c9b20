"""``fastpad_context``: a packed context bundle for a question, within a token budget.

The bundle is :class:`fastpad.search.context.ContextService`'s (retrieve as deep as the budget
can use, expand to neighbouring blocks, headings and linked notes, dedupe, rank, and pack: a
block longer than its share comes as an excerpt of its sentences that match the query, under
its own id, so ``fastpad_fetch`` reads it whole; ``excerpts`` lists those ids). This tool turns
``max_tokens`` into the bundle's budget and hands the notes to the outbound path, which filters
by the trust floor, redacts, fences, cuts at a block boundary with a cursor if the result still
would not fit, and records the read for the copy guard.
"""

from __future__ import annotations

from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, NoteBody, ToolOutput, ToolSpec
from fastpad.search.context import ContextNote
from fastpad.search.service import MAX_QUERY_CHARS
from fastpad.security.scopes import NOTES_READ

DEFAULT_TOKENS = 8_000
# The budget counts the result as sent: each note's Markdown twice (the text content's JSON copy
# and structuredContent) and its entry's members (id, title, score, via, frontier, counts) beside
# it. So the bundle gets half the cap less what the result's fixed part and the cut's hint can take,
# and each note is charged its members once more.
RESULT_RESERVE = 400
ENTRY_TOKENS = 90


def run(call: Call) -> ToolOutput:
    args = call.args
    max_tokens = args.get("max_tokens", DEFAULT_TOKENS)
    bundle = call.deployment.context.bundle(
        call.principal, args["query"], budget=(max_tokens - RESULT_RESERVE) // 2, floor=call.floor,
        include_archived=args.get("include_archived", False), note_overhead=ENTRY_TOKENS)
    # What did not fit follows the bundle, so a cursor reads on where the budget stopped.
    bodies = [_body(n) for n in (*bundle.notes, *bundle.rest)]
    return ToolOutput({"query": args["query"]}, key="notes", notes=bodies, max_tokens=max_tokens)


def _body(note: ContextNote) -> NoteBody:
    view = note.view
    order = {b["id"]: i for i, b in enumerate(view.blocks)}
    blocks = sorted((*note.blocks, *note.withheld), key=lambda b: order[b["id"]])  # the floor's cut is counted
    members = {"score": note.score, "via": list(note.via)}
    if note.excerpted:
        members["excerpts"] = list(note.excerpted)
    return NoteBody(view.id, view.title, blocks, frontier=view.frontier, frontmatter=False, members=members,
                    read=[(b["id"], b["text"]) for b in view.blocks])


TOOL = ToolSpec(
    name="fastpad_context",
    title="Context bundle",
    description="Search hits expanded with neighbouring blocks, headings and one-hop linked notes, deduped, reranked, "
                "packed to max_tokens: long blocks cut to the sentences that match ([...] marks gaps), with block "
                "anchors. fastpad_fetch reads a note whole.",
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
