"""A person's Inbox of mentions: ``GET /v1/inbox/mentions`` (keyset pages, newest first),
``PATCH /v1/inbox/mentions/{id}`` (read or unread) and ``POST /v1/inbox/mentions:read-all``.
A person's own entries only; no agent token reaches them. Parse, call InboxService, render.

(The Inbox's other parts have their own routes: proposals waiting for review are
``GET /v1/turns?status=waiting``, captures are notes typed ``Inbox``.)"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response, mutate, mutate_with
from fastpad.api.schemas import IdempotencyKey, Ulid, _Strict
from fastpad.knowledge.mentions import DEFAULT_PAGE, MAX_PAGE
from fastpad.notes.ids import ULID_PATTERN

router = APIRouter(prefix="/v1/inbox", tags=["inbox"])

_PERSON_ONLY = "policy-denied: an agent has no Inbox and reads no one's"


class MentionerOut(BaseModel):
    kind: str = Field(description="person | agent: whose write put the mention in the note")
    id: str
    token_id: str | None = Field(description="the token it wrote with; null for a web session")
    name: str | None = Field(description="their display name (an agent's name); null: no longer a member")


class MentionOut(BaseModel):
    id: str
    note_id: str
    block_id: str
    comment_id: str | None = Field(description="the comment the mention is in; null: in the block's text")
    note_title: str | None = Field(description="null: the note is in the trash")
    excerpt: str | None = Field(description="the mentioning block's (or comment's) text now (its first 240 "
                                            "characters); null: deleted since")
    url: str = Field(description="the app's address of the block, /notes/{note_id}#{block_id}, or of the comment, "
                                 "/notes/{note_id}#comment-{comment_id}")
    mentioned_by: MentionerOut
    origin: str = Field(description="the block's origin when the mention landed (human_typed, agent_accepted…)")
    created_at: str
    read: bool
    read_at: str | None


class MentionPageOut(BaseModel):
    items: list[MentionOut]
    unread: int = Field(description="how many of your mentions are unread, in all")
    next_cursor: str | None = Field(description="pass as cursor for the next (older) page; null: the last page")


class MarkIn(_Strict):
    read: bool
    idempotencyKey: IdempotencyKey | None = None


@router.get("/mentions", response_model=MentionPageOut,
            summary="Where you were mentioned, newest first: who, in which note and block, read or not (a person only)",
            responses=problems(_403=_PERSON_ONLY, _422="validation-failed: a bad cursor or limit"))
async def mentions(
    request: Request,
    caller: Authenticated,
    unread: Annotated[bool, Query(description="only the unread ones")] = False,
    cursor: Annotated[str | None, Query(pattern=f"^{ULID_PATTERN}$",
                                        description="next_cursor from the previous page (a ULID)")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE,
) -> Response:
    if caller.elsewhere:
        return json_response({"items": [], "unread": 0, "next_cursor": None})
    page = await run_in_threadpool(request.app.state.deployment.inbox.page, caller.principal, cursor=cursor,
                                   unread_only=unread, limit=limit)
    return json_response(page.as_dict(), headers={"cache-control": "no-store"})


@router.patch("/mentions/{mention_id}", response_model=MentionOut, summary="Mark one of your mentions read or unread",
              responses=problems(_403=_PERSON_ONLY, _404="not-found: no such mention in your Inbox"))
async def mark(request: Request, caller: Authenticated, body: MarkIn,
               mention_id: Annotated[Ulid, Path(description="the mention's id")]) -> Response:
    def execute() -> Response:
        return json_response(request.app.state.deployment.inbox.mark(caller.principal, mention_id,
                                                                     read=body.read).as_dict())
    return await mutate_with(request, caller, body, execute)


@router.post("/mentions:read-all", summary="Mark every one of your mentions read (no body; Idempotency-Key header)",
             responses=problems(_403=_PERSON_ONLY))
async def read_all(request: Request, caller: Authenticated) -> Response:
    def execute() -> Response:
        return json_response({"marked": request.app.state.deployment.inbox.mark_all_read(caller.principal)})
    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)
