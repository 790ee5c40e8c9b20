"""``GET /v1/notes/{id}/blocks/{block_id}``: one block as it stands, with who last
wrote it. Parse, call HistoryService, render."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response, nowhere
from fastpad.api.schemas import Ulid

router = APIRouter(prefix="/v1", tags=["notes"])


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
    note_id: Annotated[Ulid, Path(description="the note's ULID")],
    block_id: Annotated[Ulid, Path(description="the block's ULID (its {#…} anchor)")],
    caller: Authenticated,
) -> Response:
    if caller.elsewhere:
        raise nowhere()
    return json_response(request.app.state.deployment.history.block(caller.principal, note_id, block_id).as_dict())
