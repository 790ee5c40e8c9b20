"""A note's history: ``GET /v1/notes/{id}/history`` (the timeline, keyset pages) and
``POST /v1/notes/{id}/history:restore`` (a version, or one block of it, as a new edit).
The note as it was at a version is ``GET /v1/notes/{id}?at=FRONTIER`` (routes/notes.py).
Parse, call NoteHistory, render."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from pydantic import Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response, mutate_with, nowhere
from fastpad.api.schemas import IdempotencyKey, Ulid, _Strict
from fastpad.knowledge.note_history import MAX_PAGE
from fastpad.notes.frontier import PATTERN as FRONTIER_PATTERN

router = APIRouter(prefix="/v1/notes", tags=["notes"])
NoteParam = Annotated[Ulid, Path(description="the note's ULID")]


class RestoreIn(_Strict):
    at: str = Field(description='the version to restore: a frontier ("fp1:…") from the timeline or a write',
                    pattern=FRONTIER_PATTERN)
    block_id: Ulid | None = Field(default=None, description="restore only this block (as it was at `at`)")
    idempotencyKey: IdempotencyKey | None = None


@router.get(
    "/{note_id}/history",
    summary="The note's timeline, newest first: changes grouped into sessions per author (and the proposal "
            "they landed through), with the version after each. For people; agents read a block as it stands",
    responses=problems(_403="policy-denied: agents do not read history", _404="not-found",
                       _422="validation-failed: malformed cursor or limit"),
)
def note_history(request: Request, note_id: NoteParam, caller: Authenticated, cursor: str | None = None,
                 limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20) -> Response:
    if caller.elsewhere:
        raise nowhere()
    timeline = request.app.state.deployment.note_history.timeline(caller.principal, note_id, cursor=cursor,
                                                                   limit=limit)
    return json_response(timeline.as_dict())


@router.post(
    "/{note_id}/history:restore",
    summary="Restore the note (or one block) as it was at a version: one new change by you; history is kept",
    responses=problems(_403="policy-denied: agents propose instead", _404="not-found: no such note, or no such "
                       "block at that version", _409="conflict: in the trash; idempotency-conflict",
                       _422="validation-failed: at is malformed or a version this note never had"),
)
async def restore_version(request: Request, note_id: NoteParam, body: RestoreIn, caller: Authenticated) -> Response:
    def execute() -> Response:
        restored = request.app.state.deployment.note_history.restore(caller.principal, note_id, body.at,
                                                                     block_id=body.block_id)
        return json_response(restored)

    return await mutate_with(request, caller, body, execute)
