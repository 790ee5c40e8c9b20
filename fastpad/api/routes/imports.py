"""``/v1/imports`` and ``/v1/attachments``: upload an archive, watch it import, read its ledger.
Parse, call ImportService, render.

An archive of up to 8 MiB can be the body of ``POST /v1/imports`` itself
(``Content-Type: application/zip``). A larger one is announced with a JSON
``POST /v1/imports`` (``size``, ``source``, ``name``) and streamed in parts of
at most 4 MiB with ``PUT /v1/imports/{id}/archive?offset=N``, each under the
body limits; a part already received is acknowledged again, so an upload
resumes where it broke off. The import starts in the server once the last
byte arrives. A Notion HTML export, a zip bomb or an entry that climbs out of
the archive is refused there and then with a 422 naming the archive.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, Field, ValidationError
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.openapi import problems
from fastpad.api.problems import UnsupportedMediaType, field_errors_from_validation
from fastpad.api.routes.common import Authenticated, json_response, media_type, mutate, mutate_with, nowhere
from fastpad.api.schemas import IdempotencyKey, Ulid
from fastpad.errors import ValidationFailed
from fastpad.importers.service import MAX_LEDGER_PAGE, MAX_PART_BYTES, MAX_UPLOAD_BYTES, ImportService

router = APIRouter(prefix="/v1", tags=["imports"])

ImportId = Annotated[Ulid, Path(description="the import's ULID")]
Source = Literal["obsidian", "notion", "markdown"]
ZIP_TYPES = ("application/zip", "application/x-zip-compressed", "application/octet-stream")
_LOCK = threading.Lock()


def imports_service(request: Request) -> ImportService:
    """The server's one ImportService (it owns the threads its imports run in)."""
    state = request.app.state
    with _LOCK:
        if getattr(state, "imports", None) is None:
            deployment = state.deployment
            state.imports = ImportService(deployment.store, deployment.notes, deployment.types,
                                          spool_dir=FilePath(deployment.data_dir) / "imports")
    return state.imports


class ImportIn(BaseModel):
    size: int = Field(ge=1, le=MAX_UPLOAD_BYTES, description="the zip's size in bytes")
    source: Source | None = Field(default=None, description="default: detected from the archive")
    name: str = Field(default="", max_length=255, description="the zip's file name (names the import)")
    idempotencyKey: IdempotencyKey | None = None


class ProgressOut(BaseModel):
    phase: str | None = Field(default=None, description="reading, attachments, types, notes, done")
    items_total: int | None = None
    items_done: int | None = None
    notes_total: int | None = None
    notes_done: int | None = None


class ImportOut(BaseModel):
    id: str
    status: str = Field(description="uploading, queued, running, completed, cancelled, failed, or interrupted "
                                    "(stopped without finishing: import the archive again, nothing is duplicated)")
    source: str | None
    label: str
    archive_bytes: int | None
    received_bytes: int
    progress: ProgressOut
    summary: dict[str, Any] | None = Field(description="once finished: text ('imported 4,812 of 5,003 notes, and "
                                                       "here is each of the 191 we did not') and counts")
    problem: dict[str, Any] | None = Field(description="why it failed or was refused")
    created_at: str
    updated_at: str
    started_at: str | None
    finished_at: str | None
    upload: dict[str, Any] | None = Field(default=None, description="while uploading: where and how to send parts")


class LedgerEntryOut(BaseModel):
    seq: int
    item: str = Field(description="the path in the archive (a link row: the linking note's path)")
    kind: str = Field(description="note, canvas, database, database_row, attachment, view, file, comments, link, "
                                  "links_more, links_left_out")
    status: str = Field(description="imported, unchanged, stored, defined, skipped, cancelled, failed")
    reason: str | None = Field(description="a skip's reason: encrypted_note, unsupported_attachment, database_view, "
                                           "path_too_long, unresolved_wikilink, ambiguous_wikilink, "
                                           "comments_not_in_export, parse_error")
    detail: str
    note_id: str | None
    target: str | None = Field(description="a link row's target, as written")
    count: int | None = Field(description="how many a 'more' or 'left out' row stands for")


class LedgerPageOut(BaseModel):
    items: list[LedgerEntryOut]
    next_cursor: str | None = Field(description="pass as ?cursor= for the next page; null on the last")


def _out(view: Any) -> dict[str, Any]:
    out = view.as_dict()
    out["upload"] = ({"url": f"/v1/imports/{view.id}/archive?offset={view.received_bytes}",
                      "max_part_bytes": MAX_PART_BYTES} if view.status == "uploading" else None)
    return out


def _location(view: Any) -> dict[str, str]:
    return {"location": f"/v1/imports/{view.id}"}


_CREATE_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": ImportIn.model_json_schema()},
            "application/zip": {"schema": {"type": "string", "format": "binary"},
                                "description": "the whole archive (at most 8 MiB; larger ones go in parts)"},
        },
    },
    "parameters": [
        {"name": "source", "in": "query", "required": False, "schema": {"enum": ["obsidian", "notion", "markdown"]},
         "description": "with a zip body: the source (default: detected)"},
        {"name": "name", "in": "query", "required": False, "schema": {"type": "string", "maxLength": 255},
         "description": "with a zip body: the zip's file name"},
    ],
}


@router.post(
    "/imports",
    status_code=201,
    response_model=ImportOut,
    summary="Start an import: the zip as the body (runs at once, 202), or announce one to upload in parts (201)",
    openapi_extra=_CREATE_BODY,
    responses=problems(_409="idempotency-conflict", _413="payload-too-large: send the archive in parts",
                       _415="unsupported-media-type: send JSON or application/zip",
                       _422="validation-failed: the archive is refused (field archive: notion_html_export, "
                            "archive_too_large, compression_ratio, path_traversal, not_a_zip, …)"),
)
async def create_import(request: Request, caller: Authenticated,
                        source: Annotated[Source | None, Query(include_in_schema=False)] = None,
                        name: Annotated[str, Query(max_length=255, include_in_schema=False)] = "") -> Response:
    if caller.elsewhere:
        raise nowhere()
    service = imports_service(request)
    media = media_type(request)
    if media in ZIP_TYPES:
        data = await request.body()
        key = key_from(request, None)

        def upload() -> Response:
            view = service.upload(caller.principal, data, source=source, label=name)
            return json_response(_out(view), 202, _location(view))

        fingerprint = {"sha256": hashlib.sha256(data).hexdigest(), "source": source, "name": name}
        return await mutate(request, caller, key=key, fingerprint_body=fingerprint, execute=upload)
    if media != "application/json":
        raise UnsupportedMediaType(detail="send JSON to announce an upload, or the zip itself as application/zip")
    try:
        body = ImportIn.model_validate_json(await request.body() or b"{}")
    except ValidationError as exc:
        errors = field_errors_from_validation(exc.errors())
        raise ValidationFailed(detail=f"{len(errors)} field(s) failed validation", field_errors=errors) from exc
    key = key_from(request, body.idempotencyKey)

    def announce() -> Response:
        view = service.begin_upload(caller.principal, size=body.size, source=body.source, label=body.name)
        return json_response(_out(view), 201, _location(view))

    return await mutate(request, caller, key=key, fingerprint_body=body.model_dump(exclude={"idempotencyKey"}),
                         execute=announce)


@router.put(
    "/imports/{import_id}/archive",
    response_model=ImportOut,
    summary="Send one part of the archive at its byte offset; the last part starts the import",
    openapi_extra={"requestBody": {"required": True, "content": {
        "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}},
    responses=problems(_404="not-found", _409="conflict: the upload continues at received_bytes",
                       _413="payload-too-large", _422="validation-failed: past the announced size, a part over "
                                                      "4 MiB, or the archive is refused"),
)
async def put_archive_part(request: Request, import_id: ImportId, caller: Authenticated,
                           offset: Annotated[int, Query(ge=0, le=MAX_UPLOAD_BYTES)]) -> Response:
    if caller.elsewhere:
        raise nowhere()
    service = imports_service(request)
    data = await request.body()

    def write() -> Response:
        view = service.append(caller.principal, import_id, offset=offset, data=data)
        return json_response(_out(view), 200 if view.status == "uploading" else 202, _location(view))

    return await mutate(request, caller, key=key_from(request, None), execute=write,
                        fingerprint_body={"offset": offset, "sha256": hashlib.sha256(data).hexdigest()})


@router.get("/imports/{import_id}", response_model=ImportOut,
            summary="An import's status and progress; once finished, its summary",
            responses=problems(_404="not-found"))
def get_import(request: Request, import_id: ImportId, caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere()
    return json_response(_out(imports_service(request).status(caller.principal, import_id)))


@router.get("/imports/{import_id}/ledger", response_model=LedgerPageOut,
            summary="The import's ledger: a row for every item the archive contained, in order (follow next_cursor)",
            responses=problems(_404="not-found", _422="validation-failed: cursor or limit"))
def get_ledger(
    request: Request,
    import_id: ImportId,
    caller: Authenticated,
    cursor: Annotated[str | None, Query(max_length=64, description="next_cursor from the previous page")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LEDGER_PAGE)] = 100,
) -> Response:
    if caller.elsewhere:
        raise nowhere()
    return json_response(imports_service(request).ledger(caller.principal, import_id, cursor=cursor, limit=limit).as_dict())


class CancelIn(BaseModel):
    idempotencyKey: IdempotencyKey | None = None


@router.post("/imports/{import_id}/cancel", response_model=ImportOut,
             summary="Cancel an import: what already committed stays; the rest of the ledger says cancelled",
             responses=problems(_404="not-found", _409="conflict: the import already finished"))
async def cancel_import(request: Request, import_id: ImportId, caller: Authenticated,
                        body: CancelIn | None = None) -> Response:
    if caller.elsewhere:
        raise nowhere()
    service = imports_service(request)

    def cancel() -> Response:
        return json_response(_out(service.cancel(caller.principal, import_id)))

    return await mutate(request, caller, key=key_from(request, body.idempotencyKey if body else None),
                         fingerprint_body={}, execute=cancel)


class VerifyIn(BaseModel):
    folder: str | None = Field(default=None, max_length=1000,
                               description="only the notes under this folder of the archive (default: all of them)")
    idempotencyKey: IdempotencyKey | None = None


class VerificationOut(BaseModel):
    import_id: str
    folder: str | None
    notes: int = Field(description="the import's notes (in the folder) that still exist")
    blocks: int = Field(description="blocks whose review state this changed")
    asserted_links: int = Field(description="the notes' text links that are asserted afterwards")


def _verification(action: str, summary: str) -> None:
    async def endpoint(request: Request, import_id: ImportId, caller: Authenticated,
                       body: VerifyIn | None = None) -> Response:
        body = body or VerifyIn()

        def execute() -> Response:
            verification = request.app.state.deployment.import_verification
            done = getattr(verification, action)(caller.principal, import_id, folder=body.folder)
            return json_response(done.as_dict())

        return await mutate_with(request, caller, body, execute)

    router.add_api_route(f"/imports/{{import_id}}/{action}", endpoint, methods=["POST"], summary=summary,
                         response_model=VerificationOut, name=f"{action}_import",
                         responses=problems(_403="policy-denied: a signed-in person only; no token can",
                                            _404="not-found", _409="conflict: the import is still running"))


_verification("verify", "Verify an import as yours (a signed-in person only): its blocks become reviewed, "
                        "its wikilinks asserted, so agents see it at the reviewed floor")
_verification("unverify", "Take a verification back: the import's confirmed blocks are unreviewed again")
