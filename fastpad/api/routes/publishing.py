"""Published notes: a signed-in person publishes and unpublishes (``/v1/notes/{id}/publication``);
anyone reads a published note at ``/n/{id}`` (HTML to a browser, canonical Markdown to
``Accept: text/markdown``) and at ``/v1/public/notes/{id}`` (JSON or Markdown).

Every case that is not a published note — never published, unpublished, trashed, deleted, an
id that never existed or is not an id at all — gets one response, built once per app: the same
bytes, status and headers, after the same single lookup (``PublishingService.public``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.concurrency import run_in_threadpool
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.negotiation import choose
from fastpad.api.openapi import problems
from fastpad.api.problems import problem_response
from fastpad.api.routes.common import Authenticated, NoteId, json_response, mutate, nowhere
from fastpad.errors import NotFound
from fastpad.knowledge.publishing import PublicNote, Publication
from fastpad.web.public_page import public_page

MARKDOWN = "text/markdown"
HTML = "text/html"
JSON = "application/json"
# A published page may change or be unpublished at any time: caches keep it, and ask again.
PUBLIC_CACHE = "public, max-age=0, must-revalidate"
AnyId = Annotated[str, Path(description="a note id; anything else reads as a note that is not published")]

router = APIRouter(tags=["publishing"])


def _publishing(request: Request):  # type: ignore[no-untyped-def]
    return request.app.state.deployment.publishing


@router.get("/v1/notes/{note_id}/publication", summary="Whether the note is published, and its public URL",
            responses=problems(_404="not-found"))
async def publication(request: Request, note_id: NoteId, caller: Authenticated) -> Response:
    return await _publication(request, note_id, caller, _publishing(request).status)


@router.put("/v1/notes/{note_id}/publication", summary="Publish the note (a signed-in person only; no token can)",
            responses=problems(_403="policy-denied: publishing is for a signed-in person, never a bearer credential",
                               _404="not-found", _409="conflict: the note is in the trash"))
async def publish(request: Request, note_id: NoteId, caller: Authenticated) -> Response:
    return await _change_publication(request, note_id, caller, _publishing(request).publish)


@router.delete("/v1/notes/{note_id}/publication", summary="Unpublish the note (a signed-in person only)",
               responses=problems(_403="policy-denied: unpublishing is for a signed-in person", _404="not-found"))
async def unpublish(request: Request, note_id: NoteId, caller: Authenticated) -> Response:
    return await _change_publication(request, note_id, caller, _publishing(request).unpublish)


async def _publication(request: Request, note_id: str, caller: Any, act: Callable[..., Publication]) -> Response:
    """A person's look at, or change to, whether the note is published: the publication after it."""
    if caller.elsewhere:
        raise nowhere("No such note in the named workspace.")
    shown = await run_in_threadpool(act, caller.principal, note_id)
    return json_response(shown.as_dict(request.app.state.base_url))


async def _change_publication(request: Request, note_id: str, caller: Any, act: Callable[..., Publication]) -> Response:
    """Publish or unpublish under the request's ``Idempotency-Key`` (these routes take no body)."""
    def execute() -> Response:
        return json_response(act(caller.principal, note_id).as_dict(request.app.state.base_url))

    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)


@router.get("/n/{note_id}", summary="A published note: HTML, or its canonical Markdown (Accept: text/markdown)",
            responses={200: {"content": {"text/html": {}, "text/markdown": {}}}, **problems(_404="not-found")})
async def public_note_page(request: Request, note_id: AnyId) -> Response:
    return await _public(request, note_id, [HTML, MARKDOWN])


@router.get("/v1/public/notes/{note_id}", summary="A published note as JSON, or its canonical Markdown",
            responses={200: {"content": {JSON: {}, "text/markdown": {}}}, **problems(_404="not-found")})
async def public_note(request: Request, note_id: AnyId) -> Response:
    return await _public(request, note_id, [JSON, MARKDOWN])


async def _public(request: Request, note_id: str, offered: list[str]) -> Response:
    note = await run_in_threadpool(_publishing(request).public, note_id)
    if note is None:
        return _not_published(request)
    headers = {"etag": note.etag, "cache-control": PUBLIC_CACHE, "vary": "accept"}
    if note.etag in (request.headers.get("if-none-match") or "").replace(" ", "").split(","):
        return Response(status_code=304, headers=headers)
    media = choose(request.headers.get("accept"), offered)
    if media == MARKDOWN:
        return Response(note.markdown.encode(), media_type=f"{MARKDOWN}; charset=utf-8", headers=headers)
    if media == HTML:
        return Response(public_page(note).encode(), media_type=f"{HTML}; charset=utf-8", headers=headers)
    return json_response(_as_dict(note), headers=headers)


def _as_dict(note: PublicNote) -> dict[str, str]:
    return {"id": note.note_id, "title": note.title, "markdown": note.markdown,
            "published_at": note.published_at.isoformat()}


def _not_published(request: Request) -> Response:
    """The one answer for everything that is not a published note (built once per app)."""
    state = request.app.state
    if not hasattr(state, "not_published"):
        error = NotFound(detail="There is no published note at this address.", next_call="ask its author for a link")
        state.not_published = problem_response(error, state.base_url)
    cached: Response = state.not_published
    return Response(cached.body, status_code=cached.status_code, headers=dict(cached.headers))

