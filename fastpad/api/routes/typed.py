"""Types, typed properties, the structured query and collections under ``/v1``.
Parse, call the service (TypeService, TypedNoteService, KnowledgeQueryService,
CollectionService), render.

- ``/v1/types``: list and define types; ``/v1/types/{name}``: read and change one.
- ``PATCH /v1/notes/{id}/types``: one change to a note's types *and* typed
  properties (adding a type and filling its properties is one write);
  ``POST /v1/notes/types:bulk`` does many notes, with a result per item.
- ``POST /v1/query``: the structured query (a read; the body is the query).
- ``/v1/collections``: saved views; ``GET /v1/collections/{id}/rows`` runs one.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, NoteId, json_response, mutate, mutate_with, nowhere
from fastpad.api.schemas import IdempotencyKey, Ulid
from fastpad.knowledge.query import DEFAULT_LIMIT, MAX_LIMIT
from fastpad.knowledge.saved_views import MAX_ROWS_PAGE
from fastpad.knowledge.schema import KINDS, NAME
from fastpad.knowledge.typed_notes import MAX_BULK

router = APIRouter(prefix="/v1", tags=["types and collections"])

CollectionId = Annotated[Ulid, Path(description="the collection's ULID")]
TypeName = Annotated[str, Path(max_length=64, description="the type's name, e.g. Person")]


# ---------------------------------------------------------------------- bodies


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PropertyDefIn(BaseModel):
    """One property of a type. (Checked by the service, which names each bad field.)"""

    name: str
    kind: str = Field(description="one of " + ", ".join(KINDS))
    options: list[str] | None = Field(default=None, description="select and multi_select: the option names")
    target: str | None = Field(default=None, description="relation: the type the target note must be (or extend)")


class TypeCreate(_In):
    name: str = Field(description="a letter, then letters, digits or underscores: Person, MediaObject",
                      json_schema_extra={"pattern": NAME.pattern})
    extends: list[str] | None = Field(default=None, description="the types this one extends (no cycles)")
    properties: list[dict[str, Any]] | None = Field(
        default=None, description="this type's own properties: [{name, kind, options?, target?}]")
    idempotencyKey: IdempotencyKey | None = None


class TypeUpdate(_In):
    """Replace the parents and/or the whole property list; a property's kind never changes."""

    extends: list[str] | None = None
    properties: list[dict[str, Any]] | None = None
    expectedVersion: int | None = Field(default=None, description="refuse (409) if the type changed since")
    idempotencyKey: IdempotencyKey | None = None


class NoteTypesIn(_In):
    add: list[str] | None = Field(default=None, description="defined types to apply")
    remove: list[str] | None = Field(default=None, description="types to take off (their values stay in the note)")
    properties: dict[str, Any] | None = Field(
        default=None, description="Type.property → value, checked against its kind; null clears it")
    idempotencyKey: IdempotencyKey | None = None


class BulkTypesIn(_In):
    items: list[dict[str, Any]] = Field(
        json_schema_extra={"minItems": 1, "maxItems": MAX_BULK},
        description=f"up to {MAX_BULK} changes, each {{note_id, add?, remove?, properties?}}; "
                    "each is applied on its own and gets its own result")
    idempotencyKey: IdempotencyKey | None = None


class QueryIn(_In):
    """A structured query; see the field descriptions (checked by the service, field by field)."""

    type: str | None = Field(default=None, description="notes of this type or of a type that extends it")
    filters: list[dict[str, Any]] | None = Field(
        default=None, description="all must hold: {property: 'Type.prop', op, value?}; ops eq, neq, in, lt, lte, "
                                  "gt, gte, contains (multi_select), has, has_not")
    sort: list[dict[str, Any]] | None = Field(
        default=None, description="up to 3 {property: 'Type.prop' | title | created_at | updated_at, "
                                  "direction: asc | desc}; empty values last, ties by note id")
    group_by: str | None = Field(default=None, description="a property: rows come ordered by it, each with its group")
    include_archived: bool | None = None
    limit: int | None = Field(default=None, description=f"1 to {MAX_LIMIT}, default {DEFAULT_LIMIT}")
    cursor: str | None = Field(default=None, description="next_cursor from the previous page of the same query")


class CollectionCreate(_In):
    name: str
    layout: str = Field(default="table", description="table, board, list, gallery, calendar or timeline")
    query: dict[str, Any] = Field(description="the saved question: type, filters, sort, group_by, include_archived")
    layout_options: dict[str, Any] | None = Field(
        default=None, description="calendar and timeline: {start: 'Type.prop', end?: 'Type.prop'}")
    idempotencyKey: IdempotencyKey | None = None


class CollectionUpdate(_In):
    name: str | None = None
    layout: str | None = None
    query: dict[str, Any] | None = None
    layout_options: dict[str, Any] | None = None
    expectedVersion: int | None = None
    idempotencyKey: IdempotencyKey | None = None


# ---------------------------------------------------------------------- responses


class PropertyDefOut(BaseModel):
    name: str
    kind: str
    options: list[str] | None = None
    target: str | None = None


class AvailablePropertyOut(PropertyDefOut):
    key: str = Field(description="how notes name it: Owner.property")


class TypeOut(BaseModel):
    id: str
    name: str
    extends: list[str]
    properties: list[PropertyDefOut]
    available_properties: list[AvailablePropertyOut] = Field(description="own and inherited, as notes carry them")
    version: int
    created_at: str
    updated_at: str


class TypeListOut(BaseModel):
    items: list[TypeOut]


class TypedNoteOut(BaseModel):
    note_id: str
    frontier: str
    types: list[str]
    properties: dict[str, Any]


class BulkErrorOut(BaseModel):
    type: str = Field(description="the problem slug")
    title: str
    status: int
    detail: str
    retryable: bool
    field_errors: list[dict[str, str]]


class BulkItemOut(BaseModel):
    index: int
    note_id: Any
    ok: bool
    note: TypedNoteOut | None = None
    error: BulkErrorOut | None = None


class BulkOut(BaseModel):
    results: list[BulkItemOut]
    succeeded: int
    failed: int


class QueryRowOut(BaseModel):
    id: str
    title: str
    types: list[str]
    properties: dict[str, Any]
    archived: bool
    created_at: str
    updated_at: str
    group: Any = Field(default=None, description="present when the query groups: the row's group value")


class QueryPageOut(BaseModel):
    items: list[QueryRowOut]
    next_cursor: str | None
    group_by: str | None = None


class CollectionOut(BaseModel):
    id: str
    name: str
    layout: str
    query: dict[str, Any]
    layout_options: dict[str, Any]
    version: int
    embed_markdown: str = Field(description="the block that embeds this view in a note (its id, never its rows)")
    created_at: str
    updated_at: str


class CollectionListOut(BaseModel):
    items: list[CollectionOut]


# ---------------------------------------------------------------------- types


@router.get("/types", response_model=TypeListOut, summary="The workspace's types")
def list_types(request: Request, caller: Authenticated) -> Response:
    if caller.elsewhere:
        return json_response({"items": []})
    views = request.app.state.deployment.types.list(caller.principal)
    return json_response({"items": [v.as_dict() for v in views]})


@router.post("/types", status_code=201, response_model=TypeOut, summary="Define a type (schema:write)",
             responses=problems(_409="conflict: a type with that name exists; or idempotency-conflict",
                                _422="validation-failed: field_errors name each bad part of the definition"))
async def define_type(request: Request, caller: Authenticated, body: TypeCreate) -> Response:
    types = request.app.state.deployment.types

    def execute() -> Response:
        view = types.define(caller.principal, name=body.name, extends=body.extends, properties=body.properties)
        return json_response(view.as_dict(), 201, {"location": f"/v1/types/{view.type.name}"})

    return await mutate_with(request, caller, body, execute)


@router.get("/types/{name}", response_model=TypeOut, summary="One type, with the properties its notes carry",
            responses=problems(_404="not-found"))
def get_type(request: Request, name: TypeName, caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere()
    return json_response(request.app.state.deployment.types.get(caller.principal, name).as_dict())


@router.patch("/types/{name}", response_model=TypeOut,
              summary="Change a type's parents or property list (schema:write); its notes are re-indexed",
              responses=problems(_404="not-found", _409="conflict: expectedVersion is stale",
                                 _422="validation-failed: e.g. kind_immutable, cycle, unknown_type"))
async def update_type(request: Request, name: TypeName, caller: Authenticated, body: TypeUpdate) -> Response:
    types = request.app.state.deployment.types

    def execute() -> Response:
        view = types.update(caller.principal, name, extends=body.extends, properties=body.properties,
                            expected_version=body.expectedVersion)
        return json_response(view.as_dict())

    return await mutate_with(request, caller, body, execute)


# ---------------------------------------------------------------------- applying types to notes


@router.patch(
    "/notes/{note_id}/types", response_model=TypedNoteOut,
    summary="Apply or remove types and set typed properties, in one write (notes:write)",
    responses=problems(_404="not-found", _409="conflict: the note is in the trash; or idempotency-conflict",
                       _422="validation-failed: field_errors name each bad value, e.g. properties.Person.email"),
)
async def change_note_types(request: Request, note_id: NoteId, caller: Authenticated, body: NoteTypesIn) -> Response:
    typed_notes = request.app.state.deployment.typed_notes

    def execute() -> Response:
        note = typed_notes.apply(caller.principal, note_id, add=body.add, remove=body.remove,
                                 properties=body.properties)
        return json_response(note.as_dict())

    return await mutate_with(request, caller, body, execute)


@router.post(
    "/notes/types:bulk", response_model=BulkOut,
    summary="Apply types and properties to many notes; each item succeeds or fails on its own",
    responses=problems(_422="validation-failed: items is not a list of 1 to 1000 objects"),
)
async def change_many_note_types(request: Request, caller: Authenticated, body: BulkTypesIn) -> Response:
    typed_notes = request.app.state.deployment.typed_notes

    def execute() -> Response:
        return json_response(typed_notes.apply_many(caller.principal, body.items).as_dict())

    return await mutate_with(request, caller, body, execute)


# ---------------------------------------------------------------------- query


@router.post("/query", response_model=QueryPageOut,
             summary="Structured query over typed properties (a read: keyset pages, follow next_cursor)",
             responses=problems(_422="validation-failed: field_errors name the query part, e.g. filters[0].value"))
def run_query(request: Request, caller: Authenticated, body: QueryIn) -> Response:
    if caller.elsewhere:
        return json_response({"items": [], "next_cursor": None})
    page = request.app.state.deployment.queries.query(caller.principal, body.model_dump(exclude_none=True))
    return json_response(page.as_dict())


# ---------------------------------------------------------------------- collections


@router.get("/collections", response_model=CollectionListOut, summary="The workspace's collections")
def list_collections(request: Request, caller: Authenticated) -> Response:
    if caller.elsewhere:
        return json_response({"items": []})
    views = request.app.state.deployment.collections.list(caller.principal)
    return json_response({"items": [v.as_dict() for v in views]})


@router.post("/collections", status_code=201, response_model=CollectionOut,
             summary="Save a view: a query and a layout (notes:write)",
             responses=problems(_422="validation-failed: e.g. query.filters[0].property, layout_options.start"))
async def create_collection(request: Request, caller: Authenticated, body: CollectionCreate) -> Response:
    collections = request.app.state.deployment.collections

    def execute() -> Response:
        view = collections.create(caller.principal, name=body.name, layout=body.layout, query=body.query,
                                  layout_options=body.layout_options)
        return json_response(view.as_dict(), 201, {"location": f"/v1/collections/{view.row.id}"})

    return await mutate_with(request, caller, body, execute)


@router.get("/collections/{collection_id}", response_model=CollectionOut, summary="One collection (its view, no rows)",
            responses=problems(_404="not-found"))
def get_collection(request: Request, collection_id: CollectionId, caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere()
    return json_response(request.app.state.deployment.collections.get(caller.principal, collection_id).as_dict())


@router.patch("/collections/{collection_id}", response_model=CollectionOut, summary="Change a collection",
              responses=problems(_404="not-found", _409="conflict: expectedVersion is stale"))
async def update_collection(request: Request, collection_id: CollectionId, caller: Authenticated,
                            body: CollectionUpdate) -> Response:
    collections = request.app.state.deployment.collections

    def execute() -> Response:
        view = collections.update(caller.principal, collection_id, name=body.name, layout=body.layout,
                                  query=body.query, layout_options=body.layout_options,
                                  expected_version=body.expectedVersion)
        return json_response(view.as_dict())

    return await mutate_with(request, caller, body, execute)


@router.delete("/collections/{collection_id}", status_code=204, summary="Delete a collection",
               responses=problems(_404="not-found"))
async def delete_collection(request: Request, collection_id: CollectionId, caller: Authenticated) -> Response:
    collections = request.app.state.deployment.collections

    def execute() -> Response:
        collections.delete(caller.principal, collection_id)
        return Response(status_code=204)

    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)


@router.get("/collections/{collection_id}/rows", response_model=QueryPageOut,
            summary="Run a collection's query now: one keyset page of its rows",
            responses=problems(_404="not-found", _409="conflict: the saved query no longer fits the schema",
                               _422="validation-failed: a calendar or timeline without its window, or a bad one"))
def collection_rows(
    request: Request,
    collection_id: CollectionId,
    caller: Authenticated,
    cursor: Annotated[str | None, Query(max_length=2048, description="next_cursor from the previous page")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_ROWS_PAGE)] = DEFAULT_LIMIT,
    window_start: Annotated[str | None, Query(max_length=40, description=(
        "calendar and timeline (required there): the window's first instant, a date or a datetime with an offset"))] = None,
    window_end: Annotated[str | None, Query(max_length=40, description=(
        "calendar and timeline (required there): the instant after the window; rows whose span overlaps it"))] = None,
) -> Response:
    if caller.elsewhere:
        raise nowhere()
    page = request.app.state.deployment.collections.rows(caller.principal, collection_id, cursor=cursor, limit=limit,
                                                         window_start=window_start, window_end=window_end)
    return json_response(page.as_dict())
