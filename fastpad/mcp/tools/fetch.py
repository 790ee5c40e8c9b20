"""``fastpad_fetch``: up to 20 notes as canonical Markdown (a ``{#ULID}`` anchor after every
block), or a structural digest with no prose. ``with_handles`` reads through
``ReviewService.fetch_with_handles``: each block's anchor handle (bound to this session,
credential, note and version; five minutes) and the frontier a proposal is made against.

A collection embedded in a note (a ``fastpad-collection`` block) stays that block in the
Markdown, and ``collections`` gives each one's definition and link — never its rows, which
are a question asked now (``fastpad_query`` with that query), not part of the note.

``comments`` (Markdown mode) holds the note's open comment threads at the call's floor, fenced
as data like the note: a person's comments, an agent's only at a floor admitting unreviewed
agent text, a thread's quoted text only when its block is shown (fastpad/knowledge/comments.py)."""

from __future__ import annotations

from typing import Any

from fastpad.errors import NotFound, OutOfScope
from fastpad.knowledge.comments import threads_as_text
from fastpad.knowledge.hidden import outside_note_set
from fastpad.knowledge.trust import filter_blocks
from fastpad.mcp import schemas as s
from fastpad.mcp.tool import Call, NoteBody, ToolOutput, ToolSpec
from fastpad.mcp.tools.limits import FETCH_MAX_NOTES
from fastpad.outbound.fence import fence_note
from fastpad.security.scopes import NOTES_READ


# Why a named note was left out of the result → the member that lists it.
_LEFT_OUT = {NotFound: "missing", OutOfScope: "out_of_scope"}


def run(call: Call) -> ToolOutput:
    args = call.args
    digest = args.get("mode") == "digest"
    notes: list[NoteBody] = []
    left_out: dict[str, list[str]] = {}
    first_refusal: NotFound | OutOfScope | None = None
    for note_id in dict.fromkeys(args["note_ids"]):
        try:
            notes.append(_read(call, note_id, digest=digest, with_handles=args.get("with_handles", False)))
        except (NotFound, OutOfScope) as error:
            left_out.setdefault(_LEFT_OUT[type(error)], []).append(note_id)
            first_refusal = first_refusal or error
    if not notes and first_refusal is not None:
        raise first_refusal
    data: dict[str, Any] = dict(left_out)
    if left_out.get("out_of_scope"):
        data["hidden"] = [outside_note_set(len(left_out["out_of_scope"]), "notes").as_dict()]
    return ToolOutput(data, key="notes", notes=notes)


def _read(call: Call, note_id: str, *, digest: bool, with_handles: bool) -> NoteBody:
    members: dict[str, Any] = {}
    if with_handles:
        fetched = call.deployment.review.fetch_with_handles(call.principal, call.session, note_id)
        blocks = [{"id": b.id, "type": b.type, "text": b.text, "attrs": b.attrs, "origin": b.origin,
                   "review_state": b.review_state} for b in fetched.blocks]
        handles = {b.id: b.handle for b in fetched.blocks}
        members["handles_expire_at"] = fetched.handles_expire_at.isoformat()
        title, frontier, types, properties = fetched.title, fetched.frontier, fetched.types, fetched.properties
        read: list[tuple[str, str]] = []  # fetch_with_handles recorded the read itself
    else:
        view = call.deployment.notes.get(call.principal, note_id)
        blocks, handles = view.blocks, None
        title, frontier, types, properties = view.title, view.frontier, view.types, view.properties
        read = [(b["id"], b["text"]) for b in view.blocks]
    # Only the views of blocks the caller's floor lets it see: the id is the block's text.
    views = call.deployment.collections.embedded_in(call.principal, filter_blocks(blocks, call.floor))
    if views:
        members["collections"] = views
    if digest:
        members.update({"types": list(types), "properties": dict(properties)})
        read = []  # a digest carries no prose to copy
    else:
        members.update(_open_comments(call, note_id, blocks))
    return NoteBody(note_id, title, blocks, frontier=frontier, types=tuple(types), properties=properties,
                    handles=handles, members=members, read=read, digest=digest)


def _open_comments(call: Call, note_id: str, blocks: list[dict[str, Any]]) -> dict[str, str]:
    """The note's open comments at the call's floor, as text fenced like note content (a comment
    is data someone wrote, never instructions); the outbound path masks it with the rest."""
    admitted = {b["id"] for b in filter_blocks(blocks, call.floor)}
    threads = call.deployment.comments.open_for_reader(call.principal, note_id, call.floor, admitted)
    if not threads:
        return {}
    return {"comments": fence_note(note_id, "open comments", threads_as_text(threads))}


TOOL = ToolSpec(
    name="fastpad_fetch",
    title="Read notes",
    description=f"Up to {FETCH_MAX_NOTES} notes as Markdown, a {{#blockId}} anchor after each block; mode digest: "
                "structure only (block ids, types, sizes, headings). with_handles: true adds block handles and the "
                "frontier for fastpad_propose (handles last 5 minutes).",
    scopes=(NOTES_READ,),
    input_schema=s.inputs({
        "session": s.SESSION,
        "note_ids": s.array(s.STR, minItems=1, maxItems=FETCH_MAX_NOTES),
        "mode": s.enum("markdown", "digest"),
        "with_handles": s.BOOL,
        "floor": s.FLOOR,
        "cursor": s.CURSOR,
    }, "session", "note_ids"),
    output_schema=s.outputs({"notes": s.array(s.OBJ), "missing": s.STRS, "out_of_scope": s.STRS,
                             "hidden": s.array(s.OBJ), **s.BUDGET},
                            "notes"),
    run=run,
)
