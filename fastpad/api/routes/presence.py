"""``/v1/notes/{id}/presence``: who is in a note now. Post your tab's state, follow everyone's
(a long poll). Parse, call PresenceService, render."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field
from starlette.responses import Response

from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, NoteId, json_response, nowhere
from fastpad.api.schemas import _Strict
from fastpad.errors import FieldError, ValidationFailed
from fastpad.knowledge.presence import MAX_STATE_BYTES, MAX_WAIT_S, TAB_ID

router = APIRouter(prefix="/v1/notes", tags=["presence"])

_PERSON_ONLY = "policy-denied (reason person_only): presence is people's, an agent's token is refused"


class PresenceIn(_Strict):
    tab: str = Field(pattern=TAB_ID.pattern, description="the tab's id, the key of its state (a new one per tab)")
    state: str | None = Field(default=None, max_length=4 * ((MAX_STATE_BYTES + 2) // 3),
                              description=f"base64 of the tab's Loro EphemeralStore update for its own key, at most "
                                          f"{MAX_STATE_BYTES} bytes decoded")
    leave: bool = Field(default=False, description="the tab closed: drop it now instead of at its expiry")


class PresencePersonOut(BaseModel):
    id: str
    name: str


class PresenceEntryOut(BaseModel):
    tab: str
    person: PresencePersonOut
    state: str = Field(description="base64 of the tab's EphemeralStore update: apply it to your own store")


class PresenceOut(BaseModel):
    generation: str = Field(description="send it back as ?seen= to wait for the next change")
    ttl_ms: int = Field(description="a tab is dropped this long after its last post: post again well before")
    tabs: list[PresenceEntryOut]


@router.post("/{note_id}/presence", status_code=204,
             summary="Your tab's presence in a note (caret, selection), kept in memory for ttl_ms; or leave",
             responses=problems(_403=_PERSON_ONLY, _404="not-found",
                                _422="validation-failed: tab pattern, state base64, too_long or keys"))
def post_presence(request: Request, note_id: NoteId, caller: Authenticated, body: PresenceIn) -> Response:
    if caller.elsewhere:
        raise nowhere()
    presence = request.app.state.deployment.presence
    if body.leave:
        presence.leave(caller.principal, note_id, body.tab)
        return Response(status_code=204)
    if body.state is None:
        raise ValidationFailed(detail="send state, or leave: true",
                               field_errors=[FieldError("state", "missing", "required unless leave is true")])
    try:
        state = base64.b64decode(body.state, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValidationFailed(detail="state must be standard base64",
                               field_errors=[FieldError("state", "base64", "not valid base64")]) from exc
    presence.post(caller.principal, note_id, body.tab, state)
    return Response(status_code=204)


@router.get("/{note_id}/presence", response_model=PresenceOut,
            summary="The tabs in a note now; with seen and wait_ms, answers once that changes (long poll)",
            responses=problems(_403=_PERSON_ONLY, _404="not-found"))
async def follow_presence(
    request: Request,
    note_id: NoteId,
    caller: Authenticated,
    seen: Annotated[str | None, Query(max_length=64, description="the generation you last received")] = None,
    wait_ms: Annotated[int, Query(ge=0, le=int(MAX_WAIT_S * 1000), description="wait up to this long for "
                                  "a change past seen")] = 0,
) -> Response:
    if caller.elsewhere:
        raise nowhere()
    presence = request.app.state.deployment.presence
    await run_in_threadpool(presence.admit, caller.principal, note_id)
    snapshot = await presence.follow(caller.principal, note_id, seen, wait_ms / 1000)
    return json_response({
        "generation": snapshot.generation,
        "ttl_ms": int(snapshot.ttl_s * 1000),
        "tabs": [{"tab": e.tab, "person": {"id": e.person_id, "name": e.name},
                  "state": base64.b64encode(e.state).decode()} for e in snapshot.entries],
    }, headers={"cache-control": "no-store"})
