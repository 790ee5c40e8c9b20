"""Attachments: ``POST /v1/attachments`` uploads an image or a PDF (the file a file property
points at); ``GET /v1/attachments/{id}`` serves one back, uploaded or stored by an import.
Parse, call AttachmentService, render."""

from __future__ import annotations

import hashlib
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response, mutate, nowhere
from fastpad.api.schemas import Ulid
from fastpad.knowledge.attachments import ATTACHMENTS_PATH, MAX_ATTACHMENT_BYTES
from fastpad.store.imports import AttachmentRow

router = APIRouter(prefix="/v1", tags=["attachments"])
_FILE = {"content": {"image/*": {"schema": {"type": "string", "format": "binary"}},
                     "application/pdf": {"schema": {"type": "string", "format": "binary"}}}}


@router.post(
    "/attachments", status_code=201,
    summary=f"Upload an image or a PDF (at most {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MiB): the body is the file, "
            "Content-Type its type; the same content uploaded again is the same attachment",
    openapi_extra={"requestBody": {"required": True, **_FILE}},
    responses=problems(_413="payload-too-large", _415="unsupported-media-type: images and PDFs only",
                       _422="validation-failed: empty, a bad name, or bytes that are not the declared type"),
)
async def upload_attachment(request: Request, caller: Authenticated,
                            name: Annotated[str, Query(max_length=255, description="the file's name",
                                                       json_schema_extra={"pattern": r"^[^/\\]+$"})] = "file"
                            ) -> Response:
    data = await request.body()

    def execute() -> Response:
        stored = request.app.state.deployment.attachments.upload(
            caller.principal, data, media_type=request.headers.get("content-type", ""), name=name)
        return json_response(_as_dict(stored), 201, {"location": f"/v1/attachments/{stored.id}"})

    return await mutate(request, caller, key=key_from(request, None), execute=execute,
                        fingerprint_body={"name": name, "sha256": hashlib.sha256(data).hexdigest()})


@router.get(
    "/attachments/{attachment_id}",
    summary="An attachment (an image or a PDF), uploaded or stored by an import",
    responses={200: _FILE, **problems(_404="not-found")},
)
def get_attachment(request: Request, attachment_id: Annotated[Ulid, Path()], caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere()
    row = request.app.state.deployment.attachments.get(caller.principal, attachment_id)
    return Response(row.content, media_type=row.media_type, headers={
        "content-disposition": f"inline; filename*=UTF-8''{quote(row.name, safe='')}",
        "x-content-type-options": "nosniff", "content-security-policy": "default-src 'none'; sandbox",
        "cache-control": "private, max-age=31536000, immutable",
    })


def _as_dict(row: AttachmentRow) -> dict[str, object]:
    return {"id": row.id, "url": f"{ATTACHMENTS_PATH}{row.id}", "media_type": row.media_type, "name": row.name,
            "size": row.size, "sha256": row.sha256, "created_at": row.created_at.isoformat()}
