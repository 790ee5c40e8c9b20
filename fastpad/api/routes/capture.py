"""``POST /v1/capture``: text from outside a keystroke, as a new note in the inbox. Parse, call CaptureService, render.

What ``fp capture`` and ``fp add --last`` send, and replay from their spool:
the idempotency key is required, and a replay — within a day through the
generic idempotency records, after that through the capture's own receipt —
acknowledges the note the first delivery created (``replayed: true``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response, mutate
from fastpad.api.schemas import IdempotencyKey
from fastpad.errors import FieldError, ValidationFailed
from fastpad.knowledge.capture import MAX_TEXT, MAX_TITLE, CaptureService

router = APIRouter(prefix="/v1", tags=["capture"])


class CaptureIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_TEXT, description="Markdown or plain text; kept as inbound_untrusted")
    title: str | None = Field(default=None, max_length=MAX_TITLE, description="default: the frontmatter's title, "
                                                                              "else the first line")
    properties: dict[str, Any] | None = Field(default=None, description="note properties, e.g. the command a "
                                                                        "shell capture ran")
    idempotencyKey: IdempotencyKey | None = Field(default=None, description="required here (or Idempotency-Key)")


class CaptureOut(BaseModel):
    note_id: str
    created_at: str
    replayed: bool = Field(description="true when this key had already created its note")


@router.post(
    "/capture",
    status_code=201,
    response_model=CaptureOut,
    summary="Capture text into the inbox: one new note typed Inbox, idempotent for good per key",
    responses=problems(_409="idempotency-conflict: the key was first used for a different capture",
                       _422="validation-failed: blank text, or no idempotency key"),
)
async def capture(request: Request, caller: Authenticated, body: CaptureIn) -> Response:
    deployment = request.app.state.deployment
    key = key_from(request, body.idempotencyKey)
    if key is None:
        raise ValidationFailed(
            detail="a capture needs an idempotency key, so a replay never captures twice",
            field_errors=[FieldError("idempotencyKey", "required", "send idempotencyKey or Idempotency-Key")],
        )
    service = CaptureService(deployment.store, deployment.notes)

    def execute() -> Response:
        result = service.capture(caller.principal, text=body.text, key=key, title=body.title,
                                 properties=body.properties)
        return json_response(result.as_dict(), 200 if result.replayed else 201,
                     {"location": f"/v1/notes/{result.note_id}"})

    fingerprint = body.model_dump(exclude={"idempotencyKey"})
    return await mutate(request, caller, key=key, fingerprint_body=fingerprint, execute=execute)
