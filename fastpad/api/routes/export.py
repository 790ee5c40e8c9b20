"""``GET /v1/export``: every note the credential sees, as NDJSON — one line per note with its
canonical Markdown, and for a person the note's comment threads (``comments``, when it has any;
comments are not note content) — for ``fp pull`` and backups. The ``export`` scope gates it; without it a
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
            "archived and canonical Markdown, one consistent version of the workspace; for a person, "
            "each note's comment threads too",
    responses={200: {"content": {NDJSON: {"schema": {"type": "string"}}}},
               **problems(_403="insufficient-scope: export (bulk reads) and notes:read")},
)
async def export_notes(request: Request, caller: Authenticated) -> Response:
    if caller.elsewhere:
        return Response(b"", media_type=NDJSON)
    deployment = request.app.state.deployment
    notes = await run_in_threadpool(deployment.notes.export, caller.principal)
    if caller.principal.is_person:  # an agent reads comments through fastpad_fetch, at its floor
        threads = await run_in_threadpool(deployment.comments.export, caller.principal)
        notes = [{**note, "comments": threads[note["id"]]} if note["id"] in threads else note for note in notes]
    body = "".join(json.dumps(note, ensure_ascii=False, separators=(",", ":")) + "\n" for note in notes)
    return Response(body.encode(), media_type=NDJSON, headers={"cache-control": "no-store"})
