"""A note's blocks as they stand, with who last wrote them: ``GET /v1/notes/{id}/blocks/{block_id}``
(HistoryService), ``GET /v1/notes/{id}/provenance`` (the blocks a reader should know the source of)
and ``POST /v1/notes/{id}/blocks/{block_id}/mark-reviewed`` (BlockReview). Parse, call, render."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, Field
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response, mutate, nowhere
from fastpad.api.schemas import Ulid

router = APIRouter(prefix="/v1", tags=["notes"])
NoteParam = Annotated[Ulid, Path(description="the note's ULID")]
BlockParam = Annotated[Ulid, Path(description="the block's ULID (its {#…} anchor)")]


class AuthorOut(BaseModel):
    kind: str = Field(description="person or agent")
    id: str
    token_id: str | None = Field(description="the credential it wrote with; null for a web session")
    name: str | None


class BlockStateOut(BaseModel):
    note_id: str
    block_id: str
    position: int
    type: str
    text: str
    attrs: dict[str, Any]
    origin: str = Field(description="human_typed, agent_written or inbound_untrusted")
    review_state: str = Field(description="human_accepted, agent_accepted or unreviewed")
    author: AuthorOut | None = Field(description="who last wrote the content; null if written before this was kept")
    written_at: str | None = Field(description="when the content was last written")
    updated_at: str = Field(description="when content or review state last changed")


@router.get(
    "/notes/{note_id}/blocks/{block_id}",
    response_model=BlockStateOut,
    summary="One block as it stands: text, author, origin, review state and when. Not a version log",
    responses=problems(_404="not-found: no such block in this note (a note outside the note set is 403 "
                            "out-of-scope)"),
)
def get_block(
    request: Request,
    note_id: NoteParam,
    block_id: BlockParam,
    caller: Authenticated,
) -> Response:
    if caller.elsewhere:
        raise nowhere()
    return json_response(request.app.state.deployment.history.block(caller.principal, note_id, block_id).as_dict())


class MarkedBlockOut(BaseModel):
    block_id: str
    position: int
    type: str
    origin: str = Field(description="agent_written or inbound_untrusted (or human_typed, not yet reviewed)")
    review_state: str
    author: AuthorOut | None
    written_at: str | None


class ProvenanceOut(BaseModel):
    note_id: str
    blocks: list[MarkedBlockOut] = Field(description="blocks no person ratified, and text from outside, in order")


@router.get(
    "/notes/{note_id}/provenance",
    response_model=ProvenanceOut,
    summary="The note's blocks no person ratified (an agent's) and text from outside (captures, imports): "
            "who wrote each and when, never the text",
    responses=problems(_404="not-found"),
)
def note_provenance(request: Request, note_id: NoteParam, caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere()
    marked = request.app.state.deployment.block_review.marked(caller.principal, note_id)
    keep = ("block_id", "position", "type", "origin", "review_state", "author", "written_at")
    return json_response({"note_id": note_id, "blocks": [{k: b.as_dict()[k] for k in keep} for b in marked]})


@router.post(
    "/notes/{note_id}/blocks/{block_id}/mark-reviewed",
    response_model=BlockStateOut,
    summary="Mark one block reviewed by this person (a signed-in person; no token can): it becomes "
            "human_accepted and keeps its origin. Marking it again changes nothing",
    responses=problems(_403="policy-denied: a person's alone", _404="not-found", _409="conflict: in the trash"),
)
async def mark_block_reviewed(request: Request, note_id: NoteParam, block_id: BlockParam,
                              caller: Authenticated) -> Response:
    def execute() -> Response:
        marked = request.app.state.deployment.block_review.mark_reviewed(caller.principal, note_id, block_id)
        return json_response(marked.as_dict())

    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)
