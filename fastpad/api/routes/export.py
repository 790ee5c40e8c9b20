"""``GET /v1/export``: every note the credential sees, as NDJSON — one line per note with its
canonical Markdown — for ``fp pull`` and backups. The ``export`` scope gates it; without it a
credential reads notes one at a time. Parse, call NoteService.export, render."""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated

NDJSON = "application/x-ndjson"

router = APIRouter(prefix="/v1", tags=["notes"])


@router.get(
    "/export",
    summary="Every note this credential sees (archived too, trashed not) as NDJSON: id, title, frontier, "
            "archived and canonical Markdown, one consistent version of the workspace",
    responses={200: {"content": {NDJSON: {"schema": {"type": "string"}}}},
               **problems(_403="insufficient-scope: export (bulk reads) and notes:read")},
)
async def export_notes(request: Request, caller: Authenticated) -> Response:
    if caller.elsewhere:
        return Response(b"", media_type=NDJSON)
    notes = await run_in_threadpool(request.app.state.deployment.notes.export, caller.principal)
    body = "".join(json.dumps(note, ensure_ascii=False, separators=(",", ":")) + "\n" for note in notes)
    return Response(body.encode(), media_type=NDJSON, headers={"cache-control": "no-store"})
