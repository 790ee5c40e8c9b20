"""What every route module shares: the credential dependency, JSON responses, and the
idempotent mutation wrapper. (The JSON shape limits are checked on every body before any
route reads it: ``api/body_limits.py``.)"""

from __future__ import annotations

from typing import Annotated, Any, Callable

from fastapi import Depends, Path, Query, Request
from pydantic import BaseModel
from starlette.responses import JSONResponse, Response

from fastpad.api.auth import Caller, authenticate
from fastpad.api.idempotency import Recover, key_from, request_hash
from fastpad.api.schemas import Ulid
from fastpad.errors import FieldError, NotFound, ValidationFailed
from fastpad.knowledge.trust import FLOORS

NoteId = Annotated[Ulid, Path(description="the note's ULID")]

JSON = "application/json"
MARKDOWN = "text/markdown"


FLOOR_PARAMETER = "trust floor: human, reviewed or all (default: human for an agent, all for a person)"
# What the OpenAPI document says of a value the service checks itself (with its own field error):
# the same rule, so a schema-valid request is one the server accepts.
FLOOR_SCHEMA = {"enum": [floor.value for floor in FLOORS]}
FloorQuery = Annotated[str | None, Query(description=FLOOR_PARAMETER, json_schema_extra=FLOOR_SCHEMA)]


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def invalid_json(exc: Exception) -> ValidationFailed:
    return ValidationFailed(
        detail="The body is not valid JSON",
        field_errors=[FieldError("body", "json_invalid", str(exc))],
    )


Authenticated = Annotated[Caller, Depends(authenticate)]


def nowhere(detail: str = "No such note in the named workspace.") -> NotFound:
    # x-fastpad-workspace named a workspace this credential is not in.
    return NotFound(detail=detail)


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse(payload, status_code=status, headers=headers)


async def mutate(
    request: Request, caller: Caller, *, key: str | None, fingerprint_body: Any, execute: Callable[[], Response],
    recover: Recover | None = None,
) -> Response:
    """Run a mutation under its idempotency key: a replay returns the first response. ``recover``
    rebuilds that response from what the call wrote, for a retry after the server stopped between
    the commit and the answer (``api/idempotency.py``)."""
    if caller.elsewhere:
        raise nowhere()
    return await request.app.state.idempotency.run(
        workspace_id=caller.principal.workspace_id,
        principal_key=caller.idempotency_principal,
        key=key,
        fingerprint=request_hash(request.method, request.url.path, media_type(request) or JSON, fingerprint_body),
        execute=execute,
        recover=recover,
    )


async def mutate_with(request: Request, caller: Caller, body: BaseModel, execute: Callable[[], Response]) -> Response:
    """``mutate`` for a JSON body model carrying ``idempotencyKey``: the key comes from
    the body (or the header), the fingerprint from the rest of the body."""
    return await mutate(
        request, caller, key=key_from(request, getattr(body, "idempotencyKey", None)),
        fingerprint_body=body.model_dump(exclude={"idempotencyKey"}), execute=execute,
    )
