"""``GET /v1/audit``: the workspace audit log, newest first, for a signed-in owner or admin
(no token of any scope reaches it). Parse, call AuditService.page, render."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response
from fastpad.security.audit import ACTIONS, DEFAULT_PAGE, MAX_PAGE
from fastpad.store.audit import AuditFilter

router = APIRouter(prefix="/v1", tags=["audit"])


class ActorOut(BaseModel):
    kind: str = Field(description="person | agent | operator | system | anonymous (a failed sign-in)")
    id: str | None = Field(description="the person's or agent's id")
    token_id: str | None = Field(description="the token it acted with; null for a web session")


class EntryOut(BaseModel):
    seq: int
    at: datetime
    actor: ActorOut
    action: str = Field(description=" | ".join(ACTIONS))
    note_id: str | None
    target: str | None = Field(description="what it acted on: a token, a person, a turn, an import, a block…")
    details: dict[str, object] = Field(description="ids and small facts, never note text")


class AuditPageOut(BaseModel):
    items: list[EntryOut]
    next_cursor: str | None = Field(description="pass as cursor for the next (older) page; null: the last page")


@router.get(
    "/audit",
    response_model=AuditPageOut,
    summary="The workspace audit log, newest first: sign-ins, tokens, accepts, reverts, publishing, purges, "
            "imports, exports, placeholder reveals, members (a signed-in owner or admin only)",
    responses=problems(_403="policy-denied: a token of any scope, or a person who is not an owner or admin",
                       _422="validation-failed: an unknown action, a bad cursor, or until not after since"),
)
async def audit_log(
    request: Request,
    caller: Authenticated,
    actor: Annotated[str | None, Query(max_length=64, description="a person's, agent's or token's id")] = None,
    action: Annotated[str | None, Query(max_length=64, description=" | ".join(ACTIONS))] = None,
    note_id: Annotated[str | None, Query(max_length=64, description="entries about this note")] = None,
    since: Annotated[datetime | None, Query(description="ISO 8601 with an offset; entries at or after it")] = None,
    until: Annotated[datetime | None, Query(description="ISO 8601 with an offset; entries before it")] = None,
    cursor: Annotated[str | None, Query(max_length=64, description="next_cursor from the previous page")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE,
) -> Response:
    which = AuditFilter(actor_id=actor, action=action, note_id=note_id, since=since, until=until)
    page = await run_in_threadpool(request.app.state.deployment.audit.page, caller.principal, which,
                                   cursor=cursor, limit=limit)
    return json_response(page.as_dict(), headers={"cache-control": "no-store"})
