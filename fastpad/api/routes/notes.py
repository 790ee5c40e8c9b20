"""``/v1/notes``: create, list, get, lifecycle and CRDT ops. Parse, call NoteService, render."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import ValidationError
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.negotiation import choose
from fastpad.api.routes.common import (
    Authenticated,
    JSON,
    MARKDOWN,
    NoteId,
    invalid_json,
    json_response,
    media_type,
    mutate,
    nowhere,
)
from fastpad.api.openapi import problems
from fastpad.api.problems import UnsupportedMediaType, field_errors_from_validation, problem_body
from fastpad.api.schemas import (
    LifecycleIn,
    NoteBatchIn,
    NoteCreate,
    NoteCreatedOut,
    NoteOut,
    NotePageOut,
    OpsIn,
    OpsOut,
)
from fastpad.errors import FastpadError, FieldError, ValidationFailed
from fastpad.knowledge.note_reads import MAX_FOLDER
from fastpad.notes.frontier import PATTERN as FRONTIER_PATTERN
from fastpad.notes import Block
from fastpad.review.turns import Turn

router = APIRouter(prefix="/v1/notes", tags=["notes"])

_CREATE_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            JSON: {"schema": {"$ref": "#/components/schemas/NoteCreate"}},
            MARKDOWN: {
                "schema": {"type": "string"},
                "example": "---\ntitle: Groceries\n---\n\n- eggs\n- coffee\n",
            },
        },
    }
}


@router.post(
    "",
    status_code=201,
    response_model=NoteCreatedOut,
    summary="Create a note from JSON, or from a Markdown body (Content-Type: text/markdown)",
    openapi_extra=_CREATE_BODY,
    responses={202: {"description": "An agent's new note, as a proposal (a turn) waiting for a person's review; "
                                    "Location names the turn. A token with auto-apply gets 201: the note landed "
                                    "unreviewed and is listed on Agent activity"},
               **problems(_403="insufficient-scope: an agent's new note is a proposal and needs notes:propose",
                          _409="conflict: the id given is a note's already (reason exists: this workspace's; "
                               "id_taken: another's), or idempotency-conflict: the key was used with another body",
                          _415="unsupported-media-type: neither JSON nor Markdown")},
)
async def create_note(request: Request, caller: Authenticated) -> Response:
    notes = request.app.state.deployment.notes
    media = media_type(request)
    raw = await request.body()
    if media == MARKDOWN:
        try:
            markdown = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationFailed(
                detail="A Markdown body must be UTF-8",
                field_errors=[FieldError("body", "encoding", "not valid UTF-8")],
            ) from exc
        kwargs: dict[str, Any] = {"markdown": markdown}
        key = key_from(request, None)
        fingerprint: Any = raw
    elif media == JSON:
        try:
            data = json.loads(raw or b"{}")
        except ValueError as exc:
            raise invalid_json(exc) from exc
        try:
            body = NoteCreate.model_validate(data)
        except ValidationError as exc:
            errors = field_errors_from_validation(exc.errors())
            raise ValidationFailed(detail=f"{len(errors)} field(s) failed validation", field_errors=errors) from exc
        kwargs = _create_kwargs(body)
        key = key_from(request, body.idempotencyKey)
        fingerprint = {k: v for k, v in data.items() if k != "idempotencyKey"} if isinstance(data, dict) else data
    else:
        raise UnsupportedMediaType(
            detail=f"POST /v1/notes reads {JSON} or {MARKDOWN}, not {media or 'a body without Content-Type'}.",
            extra={"accepted": [JSON, MARKDOWN]},
        )

    def execute() -> Response:
        outcome = notes.create(caller.principal, **kwargs)
        if isinstance(outcome, Turn):  # an agent's note waits for a person's review
            return json_response(outcome.as_dict(), 202, {"location": f"/v1/turns/{outcome.id}"})
        return _created(outcome)

    def recover(written: list[list[str | None]]) -> Response | None:
        # The note it created (for an auto-apply agent too), else the turn proposing it.
        created = [note_id for kind, note_id, _ in written if kind == "create" and note_id]
        if created:
            return _created(notes.get(caller.principal, created[0]))
        turns = [subject for kind, _, subject in written if kind == "proposal" and subject]
        if turns:
            turn = request.app.state.deployment.review.get(caller.principal, turns[0])
            return json_response(turn.as_dict(), 202, {"location": f"/v1/turns/{turn.id}"})
        return None

    return await mutate(request, caller, key=key, fingerprint_body=fingerprint, execute=execute, recover=recover)


def _created(note: Any) -> Response:
    payload = note.as_dict()
    return json_response(payload, 201, {"location": f"/v1/notes/{payload['id']}"})


@router.post(
    ":batch",
    summary="Create up to 100 notes; every item gets its own result (the note, as POST /v1/notes answers it, "
            "or a problem document)",
    responses=problems(_409="idempotency-conflict: the key was used with another body"),
)
async def create_notes(request: Request, caller: Authenticated, body: NoteBatchIn) -> Response:
    notes = request.app.state.deployment.notes
    base_url = request.app.state.base_url

    def execute() -> Response:
        prepared: list[dict[str, Any] | FastpadError] = []
        for item in body.items:
            try:
                prepared.append(_create_kwargs(item))
            except FastpadError as error:
                prepared.append(error)
        valid = [item for item in prepared if not isinstance(item, FastpadError)]
        created = iter(notes.create_many(caller.principal, valid) if valid else [])
        results = []
        for index, item in enumerate(prepared):
            outcome = item if isinstance(item, FastpadError) else next(created)
            if isinstance(outcome, FastpadError):
                results.append({"index": index, "ok": False, "problem": problem_body(outcome, base_url)})
            elif isinstance(outcome, Turn):
                results.append({"index": index, "ok": True, "turn": outcome.as_dict()})
            else:
                results.append({"index": index, "ok": True, "note": outcome.as_dict()})
        created_count = sum(1 for r in results if "note" in r)
        proposed_count = sum(1 for r in results if "turn" in r)
        return json_response({"created": created_count, "proposed": proposed_count,
                              "refused": len(results) - created_count - proposed_count, "results": results})

    fingerprint = body.model_dump(exclude={"idempotencyKey"})
    return await mutate(request, caller, key=key_from(request, body.idempotencyKey), fingerprint_body=fingerprint,
                         execute=execute)


def _create_kwargs(body: NoteCreate) -> dict[str, Any]:
    if body.markdown is not None and body.blocks is not None:
        raise ValidationFailed(
            detail="Send either markdown or blocks, not both",
            field_errors=[FieldError("markdown", "exclusive", "markdown and blocks are mutually exclusive")],
        )
    kwargs: dict[str, Any] = {"title": body.title, "types": tuple(body.types), "properties": body.properties}
    if body.id is not None:
        kwargs["note_id"] = body.id
    if body.markdown is not None:
        kwargs["markdown"] = body.markdown
    if body.blocks is not None:
        blocks: list[Block] = []
        errors: list[FieldError] = []
        for index, item in enumerate(body.blocks):
            try:
                blocks.append(Block(item.id, item.type, item.text, item.attrs))
            except ValueError as exc:
                errors.append(FieldError(f"blocks[{index}].type", "unknown_block_type", str(exc)))
        if errors:
            raise ValidationFailed(detail="Some blocks are invalid", field_errors=errors)
        kwargs["blocks"] = blocks
    return kwargs


@router.get("", response_model=NotePageOut, summary="List notes (keyset pagination: follow next_cursor)")
def list_notes(
    request: Request,
    caller: Authenticated,
    cursor: Annotated[str | None, Query(max_length=512, description="next_cursor from the previous page")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    include_archived: bool = False,
    include_trashed: bool = False,
    folder: Annotated[str | None, Query(max_length=MAX_FOLDER, description=(
        "only notes an import placed in this folder of its archive, or beneath it (their source_folder "
        "property), such as Projects/Alpha"))] = None,
) -> Response:
    if caller.elsewhere:
        return json_response({"items": [], "next_cursor": None})
    page = request.app.state.deployment.notes.list(
        caller.principal,
        cursor=cursor,
        limit=limit,
        include_archived=include_archived,
        include_trashed=include_trashed,
        folder=folder,
    )
    return json_response({"items": [_summary(item) for item in page.items], "next_cursor": page.next_cursor})


def _summary(item: Any) -> dict[str, Any]:
    return item.as_dict() if hasattr(item, "as_dict") else dict(item)


@router.get(
    "/{note_id}",
    response_model=NoteOut,
    summary="Get a note as JSON, or as canonical Markdown with Accept: text/markdown; with `at`, the note as "
            "it was at that version (read-only, with each block against now; for people)",
    responses={200: {"content": {MARKDOWN: {"schema": {"type": "string"}}}},
               **problems(_403="policy-denied: agents do not read earlier versions",
                          _404="not-found: no such note, or not visible to this credential",
                          _406="not-acceptable: Accept allows neither JSON nor Markdown",
                          _422="validation-failed: at is malformed (malformed_frontier) or a version this note "
                               "never had (unknown_frontier)")},
)
def get_note(request: Request, note_id: NoteId, caller: Authenticated,
             at: Annotated[str | None, Query(description="a frontier (\"fp1:…\") from the note's history",
                                             pattern=FRONTIER_PATTERN)] = None,
             ) -> Response:
    representation = choose(request.headers.get("accept"), [JSON, MARKDOWN])
    if caller.elsewhere:
        raise nowhere()
    notes = request.app.state.deployment.notes
    vary = {"vary": "accept"}
    if at is not None:
        version = request.app.state.deployment.note_history.version(caller.principal, note_id, at).as_dict()
        if representation == MARKDOWN:
            return Response(version["markdown"], media_type="text/markdown; charset=utf-8", headers=vary)
        return json_response(version, headers=vary)
    if representation == MARKDOWN:
        text = notes.markdown(caller.principal, note_id)
        return Response(text, media_type="text/markdown; charset=utf-8", headers=vary)
    return json_response(notes.get(caller.principal, note_id).as_dict(), headers=vary)


@router.get(
    "/{note_id}/updates",
    summary="The note's Loro updates since a frontier (all of them without `since`), for an editor acting for a person",
    responses={200: {"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
               **problems(_403="policy-denied: agents read notes through fastpad_fetch", _404="not-found",
                          _422="validation-failed: since is malformed or unknown to this note")},
)
def note_updates(request: Request, note_id: NoteId, caller: Authenticated, since: str | None = None) -> Response:
    if caller.elsewhere:
        raise nowhere()
    blob, frontier = request.app.state.deployment.notes.export_updates(caller.principal, note_id, since=since)
    return Response(blob, media_type="application/octet-stream", headers={"x-fastpad-frontier": frontier})


@router.get(
    "/{note_id}/snapshot",
    summary="The note as one Loro snapshot (history and state), for an editor acting for a person to open it",
    responses={200: {"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
               **problems(_403="policy-denied: agents read notes through fastpad_fetch", _404="not-found")},
)
def note_snapshot(request: Request, note_id: NoteId, caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere()
    blob, frontier = request.app.state.deployment.notes.snapshot(caller.principal, note_id)
    return Response(blob, media_type="application/octet-stream", headers={"x-fastpad-frontier": frontier})


def _lifecycle(action: str, summary: str) -> None:
    async def endpoint(
        request: Request,
        note_id: NoteId,
        caller: Authenticated,
        body: LifecycleIn | None = None,
    ) -> Response:
        notes = request.app.state.deployment.notes
        key = key_from(request, body.idempotencyKey if body else None)

        def execute() -> Response:
            return json_response(getattr(notes, action)(caller.principal, note_id).as_dict())

        return await mutate(request, caller, key=key, fingerprint_body={}, execute=execute)

    endpoint.__name__ = f"{action}_note"
    router.add_api_route(
        f"/{{note_id}}/{action}", endpoint, methods=["POST"], response_model=NoteOut, summary=summary,
        responses=problems(_404="not-found", _409="idempotency-conflict, or conflict (e.g. the note is in the trash)"),
    )


_lifecycle("archive", "Archive a note (hidden from lists unless include_archived)")
_lifecycle("unarchive", "Bring an archived note back")
_lifecycle("trash", "Move a note to the trash (reversible)")
_lifecycle("restore", "Restore a note from the trash")


@router.post(
    "/{note_id}/ops",
    response_model=OpsOut,
    summary="Apply a batch of CRDT operations (a base64 Loro update) computed against expectedFrontier",
    responses=problems(
        _403="policy-denied: an agent's token proposes instead (POST /v1/notes/{id}/proposals)",
        _404="not-found",
        _409="stale-frontier (names expected_frontier and current_frontier; re-read and recompute) "
             "or idempotency-conflict",
        _422="validation-failed, not retryable: field_errors name ops with code max_bytes, max_atoms or mode",
    ),
)
async def apply_ops(
    request: Request, note_id: NoteId, caller: Authenticated, body: OpsIn
) -> Response:
    notes = request.app.state.deployment.notes
    try:
        blob = base64.b64decode(body.ops, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValidationFailed(
            detail="ops must be standard base64 of a Loro update export",
            field_errors=[FieldError("ops", "base64", "not valid base64")],
        ) from exc
    key = key_from(request, body.idempotencyKey)

    def execute() -> Response:
        result = notes.apply_ops(
            caller.principal, note_id, ops=blob, peer_id=body.peerId, expected_frontier=body.expectedFrontier
        )
        return json_response({"note_id": result.note_id, "frontier": result.frontier})

    def recover(written: list[list[str | None]]) -> Response:
        # The ops landed; the note's frontier now includes them (and anything written since).
        return json_response({"note_id": note_id, "frontier": notes.get(caller.principal, note_id).frontier})

    fingerprint = body.model_dump(exclude={"idempotencyKey"})
    return await mutate(request, caller, key=key, fingerprint_body=fingerprint, execute=execute, recover=recover)
