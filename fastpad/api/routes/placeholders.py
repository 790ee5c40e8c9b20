"""``POST /v1/notes/{id}/placeholders/reveal``: the owner expands a redaction placeholder to the
secret it stands for (a signed-in person only; logged). Parse, call PlaceholderService, render."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, NoteId, json_response, nowhere

router = APIRouter(prefix="/v1/notes", tags=["notes"])


class RevealIn(BaseModel):
    placeholder: str = Field(max_length=200, description="the [redacted:rule:fingerprint] as it was shown")


class RevealedOut(BaseModel):
    note_id: str
    block_id: str | None = Field(description="the block holding the secret; null: the note's title")
    value: str


@router.post("/{note_id}/placeholders/reveal", response_model=RevealedOut,
             summary="The secret a redaction placeholder stands for (a signed-in person only; every expansion "
                     "is logged in the change feed, without the value)",
             responses=problems(_403="policy-denied: no token of any scope can expand a placeholder",
                                _404="not-found: no such note, or no secret in it that the placeholder stands for"))
async def reveal(request: Request, note_id: NoteId, body: RevealIn, caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere("No such note in the named workspace.")
    shown = await run_in_threadpool(request.app.state.deployment.placeholders.reveal, caller.principal, note_id,
                                    body.placeholder)
    return json_response({"note_id": shown.note_id, "block_id": shown.block_id, "value": shown.value},
                         headers={"cache-control": "no-store"})
