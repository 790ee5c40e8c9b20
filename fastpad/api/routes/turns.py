"""Proposals over HTTP: agent sessions, reading with handles, proposing, and ``/v1/turns``.

Parse, call ``ReviewService``, render. Who may call what is the service's rule
(a signed-in person reviews; a token proposes, and accepts only under
``turns:accept``); cookie-authenticated mutations carry ``x-csrf-token`` as
everywhere. An HTTP agent opens a session with ``POST /v1/agent-sessions`` and
sends it as ``x-fastpad-session`` (MCP clients get theirs from
``fastpad_capabilities``).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.responses import Response

from fastpad.api.auth import Caller, authenticate
from fastpad.api.routes.common import (JSON, FloorQuery, NoteId, invalid_json, json_response, media_type,
                                       mutate, mutate_with, nowhere)
from fastpad.api.idempotency import REPLAYED_HEADER, key_from
from fastpad.api.openapi import problems
from fastpad.api.problems import field_errors_from_validation
from fastpad.api.schemas import IdempotencyKey, Ulid
from fastpad.errors import FieldError, UnsupportedMediaType, ValidationFailed
from fastpad.knowledge.trust import floor_for
from fastpad.review.turns import STATUS_FILTERS, Decision, TurnReview, conflict_as_dict

router = APIRouter(tags=["turns"])

SESSION_HEADER = "x-fastpad-session"
Authenticated = Annotated[Caller, Depends(authenticate)]
TurnId = Annotated[Ulid, Path(description="the turn's ULID")]
AgentSession = Annotated[str, Header(alias=SESSION_HEADER, max_length=96,
                                     description="the session from POST /v1/agent-sessions")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProposalIn(_Strict):
    """A proposal against the note in the path. Ops address blocks by handle (GET …/handles)."""

    ops: list[dict[str, Any]] = Field(description="insert_after, insert_before, replace_block, delete, add_edge, "
                                                  "add_event, move_event")
    expected_frontier: str = Field(description="the frontier GET …/handles returned")
    idempotencyKey: IdempotencyKey | None = Field(
        default=None, description="required here or as the Idempotency-Key header: a retry under the same key "
                                  "returns the same turn")
    idempotency_key: IdempotencyKey | None = Field(
        default=None, description="the same key under its earlier spelling (fastpad_propose's), still read")
    dry_run: bool = False
    source_block_ids: list[Ulid] = Field(default_factory=list, description="blocks the proposal draws from")

    def key(self, request: Request) -> str:
        """The one key the body's two spellings and the header name (they must agree), or a 422."""
        spellings = {k for k in (self.idempotencyKey, self.idempotency_key) if k is not None}
        if len(spellings) > 1:
            raise ValidationFailed(detail="idempotencyKey and idempotency_key differ",
                                   field_errors=[FieldError("idempotency_key", "mismatch", "must equal idempotencyKey")])
        key = key_from(request, next(iter(spellings), None))
        if key is None:
            raise ValidationFailed(
                detail="A proposal needs an idempotency key: a retry under it returns the same turn.",
                field_errors=[FieldError("idempotencyKey", "required", "idempotencyKey or the Idempotency-Key header")])
        return key


class AcceptIn(_Strict):
    resolutions: dict[str, str] | None = Field(
        default=None, description="merge conflicts: block id -> mine | proposal | suggestion")
    idempotencyKey: IdempotencyKey | None = None


class AcceptSomeIn(AcceptIn):
    block_ids: list[Ulid] = Field(default_factory=list, description="the pending blocks to accept")
    op_indexes: list[int] = Field(default_factory=list, description="the pending edge/calendar ops to accept")


class DecisionIn(_Strict):
    idempotencyKey: IdempotencyKey | None = None


async def _body(request: Request, model: type[BaseModel], *, required: bool) -> Any:
    """The JSON body checked against ``model`` (None when absent and optional); the shape
    limits were checked on the way in (``api/body_limits.py``)."""
    raw = await request.body()
    if not raw and not required:
        return None
    if raw and media_type(request) not in (JSON, ""):
        raise UnsupportedMediaType(detail=f"This route reads {JSON}, not {media_type(request)}.",
                                   extra={"accepted": [JSON]})
    try:
        data = json.loads(raw or b"null")
    except ValueError as exc:
        raise invalid_json(exc) from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = field_errors_from_validation(exc.errors())
        raise ValidationFailed(detail=f"{len(errors)} field(s) failed validation", field_errors=errors) from exc


def _review(request: Request) -> Any:
    return request.app.state.deployment.review


# ---------------------------------------------------------------------- sessions, handles, proposals


@router.post("/v1/agent-sessions", status_code=201, summary="Open an agent session (handles and proposals need one)")
async def open_agent_session(request: Request, caller: Authenticated) -> Response:
    def execute() -> Response:
        review = _review(request)
        session = review.open_session(caller.principal)
        claims = review.check_session(caller.principal, session)
        return json_response({"session": session, "expires_at": claims.expires_at.isoformat()}, 201,
                             {"cache-control": "no-store"})

    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)


@router.get(
    "/v1/notes/{note_id}/handles",
    summary="A note's blocks with anchor handles (valid five minutes) and its frontier, for proposing",
    responses=problems(_404="not-found", _422="validation-failed: no valid x-fastpad-session"),
)
def note_handles(request: Request, note_id: NoteId, caller: Authenticated, session: AgentSession,
                 floor: FloorQuery = None) -> Response:
    if caller.elsewhere:
        raise nowhere("No such turn or note in the named workspace.")
    # The floor this read ran at, for the outbound path too (fastpad/api/agent_outbound.py).
    request.state.floor = at = floor_for(caller.principal, floor)
    fetched = _review(request).fetch_with_handles(caller.principal, session, note_id, floor=at)
    return json_response({
        "note_id": fetched.note_id, "title": fetched.title, "frontier": fetched.frontier,
        "handles_expire_at": fetched.handles_expire_at.isoformat(), "markdown": fetched.markdown(),
        "blocks": [{"id": b.id, "type": b.type, "text": b.text, "attrs": b.attrs, "origin": b.origin,
                    "review_state": b.review_state, "handle": b.handle} for b in fetched.blocks],
    }, headers={"cache-control": "no-store"})


def _json_body(model: type[BaseModel], *, required: bool) -> dict[str, Any]:
    """``openapi_extra`` for a route that reads its body itself (``_body``): the model it reads."""
    return {"requestBody": {"required": required, "content": {JSON: {"schema": model.model_json_schema()}}}}


@router.post(
    "/v1/notes/{note_id}/proposals",
    status_code=201,
    summary="Propose ops against a note: a durable turn and its review URL (dry_run: diff only)",
    openapi_extra=_json_body(ProposalIn, required=True),
    responses=problems(
        _403="out-of-scope (a handle this session does not hold) or insufficient-scope",
        _409="stale-frontier (re-read and propose again) or idempotency-conflict",
        _422="validation-failed, handle-expired or cross-note-copy-denied",
    ),
)
async def propose(request: Request, note_id: NoteId, caller: Authenticated, session: AgentSession) -> Response:
    if caller.elsewhere:
        raise nowhere("No such turn or note in the named workspace.")
    body: ProposalIn = await _body(request, ProposalIn, required=True)
    key = body.key(request)

    def execute() -> Response:
        turn = _review(request).propose(
            caller.principal, session, note_id, body.ops, body.expected_frontier, key,
            dry_run=body.dry_run, source_block_ids=body.source_block_ids,
        )
        if turn.dry_run:
            return json_response(turn.as_dict())
        headers = {"location": f"/v1/turns/{turn.id}"}
        if turn.replayed:
            headers[REPLAYED_HEADER] = "true"
        return json_response(turn.as_dict(), 200 if turn.replayed else 201, headers)

    if body.dry_run:  # writes nothing, so nothing to replay: the same key may then store it
        return await run_in_threadpool(execute)
    # The turn is the service's once per key (across surfaces); the first answer is this route's, verbatim.
    return await mutate(request, caller, key=key, execute=execute,
                        fingerprint_body=body.model_dump(exclude={"idempotencyKey", "idempotency_key"}))


# ---------------------------------------------------------------------- /v1/turns


@router.get("/v1/turns", summary="Turns, newest first (an agent sees its own; activity: the Agent activity queue)")
def list_turns(
    request: Request,
    caller: Authenticated,
    status: Annotated[str | None, Query(description=" | ".join(STATUS_FILTERS))] = None,
    mine: bool = False,
    activity: bool = False,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Response:
    if caller.elsewhere:
        return json_response({"items": [], "next_cursor": None})
    page = _review(request).list(caller.principal, status=status, mine=mine, activity=activity, cursor=cursor,
                                 limit=limit)
    return json_response({"items": [t.as_dict() for t in page.items], "next_cursor": page.next_cursor})


@router.get("/v1/turns/{turn_id}", summary="One turn", responses=problems(_404="not-found"))
def get_turn(request: Request, turn_id: TurnId, caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere("No such turn or note in the named workspace.")
    return json_response(_review(request).get(caller.principal, turn_id).as_dict())


@router.get(
    "/v1/turns/{turn_id}/diff",
    summary="The per-block diff, its sources, and the three-way merge when the note moved",
    responses=problems(_404="not-found"),
)
def turn_diff(request: Request, turn_id: TurnId, caller: Authenticated) -> Response:
    if caller.elsewhere:
        raise nowhere("No such turn or note in the named workspace.")
    return json_response(review_as_dict(_review(request).review(caller.principal, turn_id)))


def review_as_dict(review: TurnReview) -> dict[str, Any]:
    merge = review.merge
    return {
        "turn": review.turn.as_dict(), "note_title": review.note_title, "author": review.author_name,
        "note_moved": review.note_moved,
        "merge": None if merge is None else {
            "clean": not merge.conflicts, "conflicts": [conflict_as_dict(c) for c in merge.conflicts],
        },
        "sources": {block_id: {"note_id": s.note_id, "note_title": s.note_title, "text": s.text}
                    for block_id, s in review.sources.items()},
    }


def decision_as_dict(decision: Decision) -> dict[str, Any]:
    return {
        "turn": decision.turn.as_dict(), "frontier": decision.frontier,
        "landed_block_ids": list(decision.landed_block_ids), "merged": decision.merged,
        "kept": [{"block_id": b, "why": why} for b, why in decision.kept],
        "undone": [{"kind": kind, "id": thing_id, "outcome": outcome} for kind, thing_id, outcome in decision.undone],
    }


_DECISION_PROBLEMS = problems(
    _403="approve-not-permitted (names review_url) or policy-denied (a person's alone)",
    _404="not-found",
    _409="conflict: the turn is closed, or the merge has conflicts (listed; nothing applied)",
)


@router.post("/v1/turns/{turn_id}/accept", summary="Accept everything still waiting", responses=_DECISION_PROBLEMS)
async def accept(request: Request, turn_id: TurnId, caller: Authenticated) -> Response:
    body: AcceptIn = await _body(request, AcceptIn, required=False) or AcceptIn()

    def execute() -> Response:
        return json_response(decision_as_dict(_review(request).accept(caller.principal, turn_id,
                                                              resolutions=body.resolutions)))

    return await mutate_with(request, caller, body, execute)


@router.post("/v1/turns/{turn_id}/accept-some", summary="Accept some blocks (and ops); the rest stay pending",
             responses=_DECISION_PROBLEMS, openapi_extra=_json_body(AcceptSomeIn, required=True))
async def accept_some(request: Request, turn_id: TurnId, caller: Authenticated) -> Response:
    body: AcceptSomeIn = await _body(request, AcceptSomeIn, required=True)

    def execute() -> Response:
        return json_response(decision_as_dict(_review(request).accept(
            caller.principal, turn_id, block_ids=body.block_ids, op_indexes=body.op_indexes,
            resolutions=body.resolutions,
        )))

    return await mutate_with(request, caller, body, execute)


class RejectSomeIn(_Strict):
    block_ids: list[Ulid] = Field(default_factory=list, description="the pending blocks to reject")
    op_indexes: list[int] = Field(default_factory=list, description="the pending edge/calendar ops to reject")
    idempotencyKey: IdempotencyKey | None = None


@router.post("/v1/turns/{turn_id}/reject-some", summary="Reject some blocks (and ops); the rest stay pending "
             "(a signed-in person)", responses=_DECISION_PROBLEMS, openapi_extra=_json_body(RejectSomeIn, required=True))
async def reject_some(request: Request, turn_id: TurnId, caller: Authenticated) -> Response:
    body: RejectSomeIn = await _body(request, RejectSomeIn, required=True)

    def execute() -> Response:
        return json_response(_review(request).reject(caller.principal, turn_id, block_ids=body.block_ids,
                                                     op_indexes=body.op_indexes).as_dict())

    return await mutate_with(request, caller, body, execute)


def _simple(action: str, method: str, summary: str) -> None:
    async def endpoint(request: Request, turn_id: TurnId, caller: Authenticated) -> Response:
        body: DecisionIn = await _body(request, DecisionIn, required=False) or DecisionIn()

        def execute() -> Response:
            result = getattr(_review(request), method)(caller.principal, turn_id)
            return json_response(decision_as_dict(result) if isinstance(result, Decision) else result.as_dict())

        return await mutate_with(request, caller, body, execute)

    endpoint.__name__ = f"{method}_turn"
    router.add_api_route(f"/v1/turns/{{turn_id}}/{action}", endpoint, methods=["POST"], summary=summary,
                         responses=_DECISION_PROBLEMS)


_simple("reject", "reject", "Reject what still waits (a signed-in person)")
_simple("abandon", "abandon", "Abandon your own turn")
_simple("revert", "revert", "Revert everything the turn landed, keeping later edits (a signed-in person)")
_simple("mark-reviewed", "mark_reviewed", "Mark a turn on Agent activity reviewed (a signed-in person)")


# ---------------------------------------------------------------------- sources


class RetractIn(_Strict):
    reason: str = Field(default="", max_length=2000)
    idempotencyKey: IdempotencyKey | None = None


def _uses(uses: Any) -> list[dict[str, Any]]:
    return [{"turn_id": u.turn_id, "note_id": u.note_id, "block_id": u.block_id,
             "landed_at": u.landed_at.isoformat()} for u in uses]


@router.get("/v1/sources/{block_id}/accepted", summary="Every block accepted citing this source block",
            responses=problems(_422="validation-failed: not a block id"))
def accepted_from(request: Request, block_id: Annotated[Ulid, Path()], caller: Authenticated) -> Response:
    if caller.elsewhere:
        return json_response({"block_id": block_id, "accepted": []})
    return json_response({"block_id": block_id, "accepted": _uses(_review(request).accepted_from(caller.principal, block_id))})


@router.post("/v1/sources/{block_id}/retract",
             summary="Mark a source block retracted (a signed-in person); lists every block accepted from it",
             responses=problems(_403="policy-denied: a person's alone", _404="not-found"))
async def retract_source(request: Request, block_id: Annotated[Ulid, Path()], caller: Authenticated) -> Response:
    body: RetractIn = await _body(request, RetractIn, required=False) or RetractIn()

    def execute() -> Response:
        retraction = _review(request).retract_source(caller.principal, block_id, reason=body.reason)
        return json_response({"block_id": retraction.block_id, "note_id": retraction.note_id,
                      "accepted": _uses(retraction.accepted)})

    return await mutate_with(request, caller, body, execute)
