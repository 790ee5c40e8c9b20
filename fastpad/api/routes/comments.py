"""Comments on notes: ``GET/POST /v1/notes/{id}/comments``, ``PATCH/DELETE /v1/comments/{id}``
and ``POST /v1/comments/{id}/resolve`` and ``/reopen``, every write under an idempotency key.
Parse, call CommentService (fastpad/knowledge/comments.py), render.

A person reads a note's threads here; an agent reads a note's open comments through
``fastpad_fetch`` (the one outbound path) and, with ``notes:write``, writes comments here —
what it gets back is only its own comment, never the note's text a range quotes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.openapi import problems
from fastpad.api.auth import Caller
from fastpad.api.routes.common import Authenticated, NoteId, json_response, mutate, mutate_with, nowhere
from fastpad.api.schemas import IdempotencyKey, Ulid, _Strict
from fastpad.knowledge.comments import MAX_BODY, CommentService, Thread
from fastpad.security.principals import Principal

router = APIRouter(prefix="/v1", tags=["comments"])

CommentId = Annotated[Ulid, Path(description="the comment's ULID (a thread's first comment names the thread)")]


class AuthorOut(BaseModel):
    kind: str = Field(description="person | agent: an agent's comment is marked as the agent's")
    id: str
    token_id: str | None
    name: str | None = Field(description="their display name (an agent's name); null: no longer known")


class CommentOut(BaseModel):
    id: str
    thread_id: str
    note_id: str
    block_id: str
    body: str = Field(description="empty when deleted (a first comment with replies stays as a tombstone)")
    deleted: bool
    author: AuthorOut
    created_at: str
    edited_at: str | None


class RangeOut(BaseModel):
    start: int = Field(description="code points into the block's text as it reads now")
    end: int = Field(description="exclusive")


class ThreadOut(BaseModel):
    id: str = Field(description="the thread's first comment")
    note_id: str
    block_id: str = Field(description="the block it is on: stable through split (first half), join, move, fp push")
    anchor: str = Field(description="block | text")
    range: RangeOut | None = Field(description="where a comment on text is now; null: on the block, or on_deleted")
    quote: str | None = Field(description="the text the comment was made on, as it read then")
    on_deleted: bool = Field(description="the block, or every character of the range, was deleted since")
    resolved: bool
    resolved_at: str | None
    resolved_by: str | None
    comments: list[CommentOut]


class ThreadsOut(BaseModel):
    items: list[ThreadOut]


class CommentIn(_Strict):
    body: str = Field(min_length=1, max_length=MAX_BODY, description="the comment; @mentions notify in the Inbox")
    blockId: Ulid | None = Field(default=None, description="a new thread on this block (leave out to reply)")
    start: int | None = Field(default=None, ge=0, description="with end: a comment on this range of the block's text")
    end: int | None = Field(default=None, ge=1, description="exclusive; code points")
    threadId: Ulid | None = Field(default=None, description="reply to this thread instead")
    idempotencyKey: IdempotencyKey | None = None


class CommentEditIn(_Strict):
    body: str = Field(min_length=1, max_length=MAX_BODY)
    idempotencyKey: IdempotencyKey | None = None


def _comments(request: Request) -> CommentService:
    return request.app.state.deployment.comments


def _rendered(thread: Thread, principal: Principal) -> dict[str, Any]:
    """The thread for a person; for an agent, only the comments it wrote — none of the note's text,
    which an agent reads through fastpad_fetch at its floor."""
    shown = thread.as_dict()
    if principal.is_person:
        return shown
    own = [c for c in shown["comments"] if c["author"]["id"] == principal.principal_id]
    return {**shown, "quote": None, "range": None, "comments": own}


@router.get("/notes/{note_id}/comments", response_model=ThreadsOut,
            summary="A note's comment threads with their replies, oldest first (a person only)",
            responses=problems(_403="policy-denied: an agent reads open comments through fastpad_fetch",
                               _404="not-found"))
async def list_comments(request: Request, note_id: NoteId, caller: Authenticated,
                        open: Annotated[bool, Query(description="only the unresolved threads")] = False) -> Response:
    if caller.elsewhere:
        raise nowhere()
    threads = await run_in_threadpool(_comments(request).threads, caller.principal, note_id, open_only=open)
    return json_response({"items": [t.as_dict() for t in threads]}, headers={"cache-control": "no-store"})


@router.post("/notes/{note_id}/comments", status_code=201, response_model=ThreadOut,
             summary="Comment on a block or a range of its text, or reply to a thread (a viewer may; an agent "
                     "needs notes:write)",
             responses=problems(_404="not-found: no such note, block or thread",
                                _409="conflict: the note is in the trash", _422="validation-failed: a bad range"))
async def create_comment(request: Request, note_id: NoteId, caller: Authenticated, body: CommentIn) -> Response:
    def execute() -> Response:
        thread = _comments(request).create(caller.principal, note_id, body=body.body, block_id=body.blockId,
                                           start=body.start, end=body.end, thread_id=body.threadId)
        return json_response(_rendered(thread, caller.principal), 201)
    return await mutate_with(request, caller, body, execute)


@router.patch("/comments/{comment_id}", response_model=ThreadOut, summary="Edit one of your own comments",
              responses=problems(_403="policy-denied: not your comment", _404="not-found"))
async def edit_comment(request: Request, comment_id: CommentId, caller: Authenticated, body: CommentEditIn) -> Response:
    def execute() -> Response:
        return json_response(_rendered(_comments(request).edit(caller.principal, comment_id, body=body.body),
                                       caller.principal))
    return await mutate_with(request, caller, body, execute)


@router.delete("/comments/{comment_id}", status_code=204, summary="Delete one of your own comments",
               responses=problems(_403="policy-denied: not your comment", _404="not-found"))
async def delete_comment(request: Request, comment_id: CommentId, caller: Authenticated) -> Response:
    def execute() -> Response:
        _comments(request).delete(caller.principal, comment_id)
        return Response(status_code=204)
    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)


async def _resolution(request: Request, comment_id: str, caller: Caller, *, resolved: bool) -> Response:
    def execute() -> Response:
        thread = _comments(request).resolve(caller.principal, comment_id, resolved=resolved)
        return json_response(_rendered(thread, caller.principal))
    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)


@router.post("/comments/{comment_id}/resolve", response_model=ThreadOut,
             summary="Resolve the thread this comment starts or belongs to (no body; Idempotency-Key header)",
             responses=problems(_404="not-found"))
async def resolve_comment(request: Request, comment_id: CommentId, caller: Authenticated) -> Response:
    return await _resolution(request, comment_id, caller, resolved=True)


@router.post("/comments/{comment_id}/reopen", response_model=ThreadOut,
             summary="Reopen a resolved thread (no body; Idempotency-Key header)", responses=problems(_404="not-found"))
async def reopen_comment(request: Request, comment_id: CommentId, caller: Authenticated) -> Response:
    return await _resolution(request, comment_id, caller, resolved=False)
