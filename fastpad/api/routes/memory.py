"""``/v1/memory``: the memory index, one topic, and designating topics.
Parse, call MemoryService, render."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.openapi import problems
from fastpad.api.routes.common import FLOOR_SCHEMA, Authenticated, json_response, mutate, mutate_with, nowhere
from fastpad.api.schemas import IdempotencyKey, NoteOut, Ulid
from fastpad.knowledge.memory import MAX_NAME

router = APIRouter(prefix="/v1/memory", tags=["memory"])

TopicKey = Annotated[str, Path(min_length=1, max_length=512,
                               description="the topic's name (any case) or its note's ULID")]


class DesignateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    note_id: Ulid
    name: str | None = Field(default=None, description=f"1–{MAX_NAME} characters on one line, no '/'; "
                                                      "default: the note's title",
                             json_schema_extra={"pattern": r"^[^/\x00-\x1f\x7f-\x9f]+$"})
    idempotencyKey: IdempotencyKey | None = None


class TopicOut(BaseModel):
    name: str
    note_id: str
    title: str
    summary: str = Field(description="one line from the first block the reader's trust floor admits")
    archived: bool
    designated_at: str
    updated_at: str


class MemoryIndexOut(BaseModel):
    topics: list[TopicOut]
    floor: str = Field(description="the trust floor the summaries were taken at")


class TopicNoteOut(BaseModel):
    name: str
    note: NoteOut


class PlainIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    idempotencyKey: IdempotencyKey | None = None


@router.get("", response_model=MemoryIndexOut, summary="The memory index: every topic, with a one-line summary")
def memory_index(
    request: Request,
    caller: Authenticated,
    floor: Annotated[str | None, Query(description="trust floor for summaries: human, reviewed or all "
                                                   "(default: human for an agent, all for a person)",
                                       json_schema_extra=FLOOR_SCHEMA)] = None,
) -> Response:
    if caller.elsewhere:
        return json_response({"topics": [], "floor": floor or "human"})
    return json_response(request.app.state.deployment.memory.index(caller.principal, floor=floor).as_dict())


@router.get("/{topic}", response_model=TopicNoteOut, summary="One memory topic: the note itself",
            responses=problems(_404="not-found: no such topic visible to this credential"))
def memory_topic(request: Request, topic: TopicKey, caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere()
    return json_response(request.app.state.deployment.memory.topic(caller.principal, topic).as_dict())


@router.post("", response_model=TopicOut, summary="Designate a note as a memory topic (or rename its topic)",
             responses=problems(_404="not-found: no such note", _409="conflict: name_taken, topic_limit, trashed; "
                                                                      "or idempotency-conflict"))
async def designate(request: Request, body: DesignateIn, caller: Authenticated) -> Response:
    memory = request.app.state.deployment.memory

    def execute() -> Response:
        return json_response(memory.designate(caller.principal, body.note_id, name=body.name).as_dict())

    return await mutate_with(request, caller, body, execute)


@router.delete("/{topic}", response_model=TopicOut, summary="Stop a note being a memory topic (the note stays)",
               responses=problems(_404="not-found: no such topic"))
async def undesignate(request: Request, topic: TopicKey, caller: Authenticated, body: PlainIn | None = None) -> Response:
    memory = request.app.state.deployment.memory

    def execute() -> Response:
        return json_response(memory.undesignate(caller.principal, topic).as_dict())

    return await mutate(request, caller, key=key_from(request, body.idempotencyKey if body else None),
                         fingerprint_body={}, execute=execute)
