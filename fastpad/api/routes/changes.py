"""``GET /v1/changes``: the change feed since a cursor, with an optional long poll.
Parse, call ChangeFeedService, render."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response
from fastpad.errors import FieldError, ValidationFailed
from fastpad.knowledge.changes import DEFAULT_LIMIT, MAX_LIMIT, MAX_WAIT_MS, encode_cursor

router = APIRouter(prefix="/v1", tags=["changes"])


class ActorOut(BaseModel):
    kind: str = Field(description="person, agent or system")
    id: str | None
    token_id: str | None


class ChangeOut(BaseModel):
    cursor: str = Field(description="resume right after this change")
    kind: str = Field(description="create, ops, rename, archive, unarchive, trash, restore, purge, link, "
                                  "memory_designate, …")
    note_id: str | None
    subject_id: str | None = Field(description="what else the change concerns (an edge, a type, a topic name)")
    block_ids: list[str] | None = Field(description="blocks inserted, changed or deleted (at most 100); "
                                                    "null when not recorded")
    blocks_touched: int | None = Field(description="how many blocks in all; more than block_ids lists means "
                                                   "re-read the note")
    actor: ActorOut | None
    at: str


class ChangePageOut(BaseModel):
    items: list[ChangeOut]
    next_cursor: str = Field(description="always set: pass it as ?cursor= to continue, also after a restart")
    has_more: bool = Field(description="more changes are already waiting past next_cursor")


@router.get(
    "/changes",
    response_model=ChangePageOut,
    summary="Changes since a cursor, oldest first; with wait_ms, wait for the next one (long poll)",
    responses=problems(_422="validation-failed: cursor malformed_cursor or cursor_ahead, limit or wait_ms range, "
                              "start with a cursor"),
)
async def list_changes(
    request: Request,
    caller: Authenticated,
    cursor: Annotated[str | None, Query(max_length=64, description="next_cursor (or an item's cursor); "
                                                                   "omit to start at the beginning")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    wait_ms: Annotated[int, Query(ge=0, le=MAX_WAIT_MS, description="when nothing is new, wait up to this "
                                  "long and answer as soon as a change commits")] = 0,
    start: Annotated[Literal["latest"] | None, Query(description="latest: no items, and next_cursor after the "
                                                     "newest change — to follow only what happens from now on")] = None,
) -> Response:
    if start is not None and cursor is not None:
        raise ValidationFailed(detail="start=latest and a cursor are two different starting points: send one",
                               field_errors=[FieldError("start", "conflicts_with_cursor", "send start or cursor")])
    if caller.elsewhere:
        return json_response({"items": [], "next_cursor": cursor or encode_cursor(0), "has_more": False})
    if start == "latest":
        return json_response(request.app.state.deployment.changes.latest(caller.principal).as_dict())
    page = await request.app.state.deployment.changes.long_poll(caller.principal, cursor, limit, wait_ms)
    return json_response(page.as_dict())
