"""Links and the graph under ``/v1``: a note's links and neighbours, typed edges,
promotion, rename (links keep resolving), supersession. Parse, call the
service (GraphService, or NoteService for a rename), render."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.openapi import problems
from fastpad.api.routes.common import FLOOR_SCHEMA, Authenticated, NoteId, json_response, mutate, nowhere
from fastpad.api.schemas import IdempotencyKey, NoteOut, Ulid
from fastpad.knowledge.edges import EDGE_TYPE
from fastpad.notes.blocks import MAX_TITLE_CHARS
from fastpad.notes.ids import ULID_PATTERN
from fastpad.knowledge.graph import DEFAULT_LIMIT, MAX_LIMIT, GraphService
from fastpad.knowledge.trust import floor_for

router = APIRouter(prefix="/v1", tags=["links"])

LinkId = Annotated[Ulid, Path(description="the edge's ULID")]
EdgeTypes = Annotated[list[str] | None, Query(alias="type", max_length=20,
                                                description="only these edge types (repeat the parameter)",
                                                json_schema_extra={"items": {"pattern": EDGE_TYPE.pattern}})]
Floor = Annotated[str | None, Query(description="trust floor for evidence text: human, reviewed or all "
                                                "(default: human for an agent, all for a person)",
                                    json_schema_extra=FLOOR_SCHEMA)]


# ---------------------------------------------------------------------- bodies


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LinkCreate(_In):
    """A typed edge. Name the target by id, or by title for a forward link that
    resolves when a note with that title (or alias) appears."""

    source_note_id: Ulid
    type: str = Field(description="a lower-case slug: mentions, cites, related, depends_on…",
                      json_schema_extra={"pattern": EDGE_TYPE.pattern})
    target_note_id: Ulid | None = None
    target_title: str | None = Field(default=None, max_length=300)
    source_block_id: Ulid | None = Field(default=None, description="the block that is the evidence")
    confidence: float | None = Field(default=None, description="an agent's edge only: (0, 1], default 0.5")
    idempotencyKey: IdempotencyKey | None = None


class RenameIn(_In):
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    idempotencyKey: IdempotencyKey | None = None


class SupersedeIn(_In):
    by: Ulid = Field(description="the note that replaces this one")
    source_block_id: Ulid | None = Field(default=None, description="a block of the successor that says why")
    idempotencyKey: IdempotencyKey | None = None


class PlainIn(_In):
    idempotencyKey: IdempotencyKey | None = None


class NoteRefOut(BaseModel):
    id: str
    title: str
    archived: bool


class EvidenceOut(BaseModel):
    block_id: str | None
    text: str | None = Field(description="the text around the link; null when withheld below the trust floor")
    origin: str | None
    review_state: str | None
    withheld: bool


class EdgeOut(BaseModel):
    id: str
    type: str
    direction: Literal["out", "in"]
    source: NoteRefOut
    target: NoteRefOut | None = Field(description="null: unresolved (forward link) or not visible to you")
    target_title: str
    status: Literal["asserted", "inferred"]
    confidence: float | None = Field(description="inferred edges: the confidence now (it decays)")
    derivation: Literal["text", "api"]
    evidence: EvidenceOut
    created_by: dict[str, str | None]
    created_at: str
    confirmed_by: str | None
    confirmed_at: str | None


class NoteLinksOut(BaseModel):
    note: NoteRefOut
    aliases: list[str] = Field(description="former titles; [[links]] to them still resolve here")
    outgoing: list[EdgeOut]
    backlinks: list[EdgeOut]
    truncated: bool


class NeighborsOut(BaseModel):
    items: list[EdgeOut]
    next_after: str | None = Field(description="pass as ?after= for the next page; null when this page was not full")


class SuccessorsOut(BaseModel):
    note: NoteRefOut
    successors: list[NoteRefOut]
    latest: NoteRefOut
    cycle: bool


# ---------------------------------------------------------------------- routes


def _graph(request: Request) -> GraphService:
    return request.app.state.deployment.graph


@router.get("/notes/{note_id}/links", response_model=NoteLinksOut,
            summary="A note's outgoing links (forward links included), backlinks and aliases",
            responses=problems(_404="not-found", _422="validation-failed: an unknown type or floor"))
def note_links(request: Request, note_id: NoteId, caller: Authenticated, types: EdgeTypes = None,
               floor: Floor = None) -> Response:
    if caller.elsewhere:
        raise nowhere()
    request.state.floor = floor_for(caller.principal, floor)  # the linked notes' titles leave at it too
    return json_response(_graph(request).links(caller.principal, note_id, edge_types=types, floor=floor).as_dict())


@router.get("/notes/{note_id}/neighbors", response_model=NeighborsOut,
            summary="One hop from a note: typed edges with their evidence (what fastpad_graph returns)",
            responses=problems(_404="not-found", _422="validation-failed"))
def neighbors(
    request: Request,
    note_id: NoteId,
    caller: Authenticated,
    types: EdgeTypes = None,
    direction: Literal["out", "in", "both"] = "both",
    floor: Floor = None,
    after: Annotated[str | None, Query(max_length=26, description="next_after from the previous page",
                                       json_schema_extra={"pattern": f"^{ULID_PATTERN}$"})] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
) -> Response:
    if caller.elsewhere:
        raise nowhere()
    request.state.floor = floor_for(caller.principal, floor)  # the neighbours' titles leave at it too
    edges = _graph(request).neighbors(caller.principal, note_id, edge_types=types, direction=direction, floor=floor,
                                      after=after, limit=limit)
    return json_response({"items": [e.as_dict() for e in edges], "next_after": edges[-1].id if len(edges) == limit else None})


@router.get("/notes/{note_id}/successors", response_model=SuccessorsOut,
            summary="Follow 'superseded by' from a note to the newest one", responses=problems(_404="not-found"))
def successors(request: Request, note_id: NoteId, caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere()
    return json_response(_graph(request).successor_chain(caller.principal, note_id).as_dict())


@router.post("/links", status_code=201, response_model=EdgeOut,
             summary="Create a typed edge (a person's is asserted; an agent's is inferred until a person promotes it)",
             responses=problems(_404="not-found: no such note (one outside the note set is 403 out-of-scope)",
                                _409="conflict: a note in the trash", _422="validation-failed"))
async def create_link(request: Request, caller: Authenticated, body: LinkCreate) -> Response:
    fields = body.model_dump(exclude={"idempotencyKey"})

    def execute() -> Response:
        edge = _graph(request).create_link(caller.principal, **fields)
        return json_response(edge.as_dict(), 201, {"location": f"/v1/links/{edge.id}"})

    return await mutate(request, caller, key=key_from(request, body.idempotencyKey), fingerprint_body=fields,
                         execute=execute)


@router.post("/links/{link_id}/promote", response_model=EdgeOut,
             summary="Promote an inferred edge to asserted (a signed-in person only; tokens get policy-denied)",
             responses=problems(_404="not-found"))
async def promote_link(request: Request, link_id: LinkId, caller: Authenticated,
                       body: PlainIn | None = None) -> Response:
    def execute() -> Response:
        return json_response(_graph(request).promote(caller.principal, link_id).as_dict())

    return await mutate(request, caller, key=key_from(request, body.idempotencyKey if body else None),
                         fingerprint_body={}, execute=execute)


@router.delete("/links/{link_id}", status_code=204,
               summary="Remove an edge made through the API (links written in text go with the text)",
               responses=problems(_404="not-found", _409="conflict: the link is written in a note's text"))
async def delete_link(request: Request, link_id: LinkId, caller: Authenticated) -> Response:
    def execute() -> Response:
        _graph(request).delete_link(caller.principal, link_id)
        return Response(status_code=204)

    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)


@router.post("/notes/{note_id}/rename", response_model=NoteOut,
             summary="Rename a note; the old title becomes an alias, so [[links]] to it keep resolving",
             responses=problems(_403="policy-denied: an agent's token never renames (proposals cannot); a person does",
                                _404="not-found", _409="conflict: the note is in the trash"))
async def rename_note(request: Request, note_id: NoteId, caller: Authenticated, body: RenameIn) -> Response:
    notes = request.app.state.deployment.notes

    def execute() -> Response:
        return json_response(notes.rename(caller.principal, note_id, body.title).as_dict())

    return await mutate(request, caller, key=key_from(request, body.idempotencyKey),
                         fingerprint_body={"title": body.title}, execute=execute)


@router.post("/notes/{note_id}/supersede", response_model=EdgeOut,
             summary="Mark a note superseded by another (a person only); readers follow /successors",
             responses=problems(_404="not-found", _409="conflict: a cycle, or a note in the trash"))
async def supersede_note(request: Request, note_id: NoteId, caller: Authenticated, body: SupersedeIn) -> Response:
    fields: dict[str, Any] = body.model_dump(exclude={"idempotencyKey"})

    def execute() -> Response:
        return json_response(_graph(request).supersede(caller.principal, note_id, **fields).as_dict())

    return await mutate(request, caller, key=key_from(request, body.idempotencyKey), fingerprint_body=fields,
                         execute=execute)
