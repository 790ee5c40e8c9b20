"""``fp login``: the two device-login routes (RFC 8628) and the approval page.

* ``POST /v1/device/code`` — a terminal starts a login: ``device_code``,
  ``user_code``, ``verification_uri(_complete)``, ``expires_in``, ``interval``.
* ``POST /v1/device/token`` — the terminal polls with its device code until a
  person decided: an OAuth token response carrying a person CLI token, or a
  problem document whose ``error`` member is the RFC 8628 code
  (``authorization_pending``, ``slow_down``, ``access_denied``, ``expired_token``).
* ``GET/POST /device`` — the page a signed-in person approves it on (signed
  out, it sends the browser to the site's ``/signin`` and back).

Both routes take OAuth's form encoding or JSON. Nobody holds a credential yet,
so each is rate limited per client address (20 starts, 60 polls a minute).
The page checks the session's CSRF token (a hidden field) and that a POST
comes from this origin.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, RedirectResponse, Response

from fastpad.api import device_page
from fastpad.api.auth import SESSION_COOKIE
from fastpad.api.openapi import problems
from fastpad.errors import FastpadError, FieldError, NotFound, RateLimited, Unauthenticated, ValidationFailed
from fastpad.security.device import DeviceLoginService
from fastpad.security.scopes import ALL_SCOPES
from fastpad.web.common import cross_site_refusal, same_origin

router = APIRouter(tags=["device login"])

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code"
FORM = "application/x-www-form-urlencoded"
_MAX_FIELDS = 20
_DEVICE_ERRORS = {"authorization-pending", "slow-down", "access-denied", "expired-token", "invalid-grant"}


def _service(request: Request) -> DeviceLoginService:
    state = request.app.state
    return DeviceLoginService(state.deployment.store, state.deployment.tokens,
                              interval_s=state.limits.device_poll_interval_s)


def _address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


async def _fields(request: Request) -> dict[str, str]:
    """A form-encoded or JSON body as single-valued string fields."""
    raw = await request.body()
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == "application/json":
        try:
            data = json.loads(raw or b"{}")
        except ValueError as exc:
            raise ValidationFailed(detail="the body is not valid JSON",
                                   field_errors=[FieldError("body", "json_invalid", str(exc))]) from exc
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()) or len(data) > _MAX_FIELDS:
            raise ValidationFailed(detail="the body is an object of string fields",
                                   field_errors=[FieldError("body", "type", "an object of strings")])
        return data
    try:
        parsed = parse_qs(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=_MAX_FIELDS, strict_parsing=False)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValidationFailed(detail=f"the body is not {FORM}",
                               field_errors=[FieldError("body", "form_invalid", str(exc))]) from exc
    return {name: values[-1] for name, values in parsed.items()}


def _oauth(error: FastpadError) -> FastpadError:
    """Add OAuth's ``error`` member (RFC 6749 §5.2 / RFC 8628 §3.5) to a problem from these routes."""
    if error.slug in _DEVICE_ERRORS:
        code = error.slug.replace("-", "_")
    elif isinstance(error, RateLimited):
        code = "slow_down"
    elif any(fe.field == "scope" for fe in error.field_errors):
        code = "invalid_scope"
    else:
        code = "invalid_request"
    error.extra.setdefault("error", code)
    return error


_ONE_SCOPE = "(?:" + "|".join(re.escape(scope) for scope in ALL_SCOPES) + ")"
_SCOPE_LIST = rf"^\s*{_ONE_SCOPE}(?:\s+{_ONE_SCOPE})*\s*$"  # what parse_scopes takes
_FORM_BODY = {
    "requestBody": {
        "required": False,  # every field has a default
        "content": {
            FORM: {"schema": {"type": "object", "properties": {
                "client_id": {"type": "string", "description": "any name for the client, e.g. fp"},
                "scope": {"type": "string", "pattern": _SCOPE_LIST, "description": "space-separated scopes; "
                                                                               "default: a person's own grant, never "
                                                                               "turns:accept"},
                "client_name": {"type": "string", "maxLength": 100, "pattern": r"^[^\x00-\x1f\x7f-\x9f\xad]*$",
                                "description": "shown on the approval page: printable characters"},
            }}},
            "application/json": {"schema": {"type": "object"}},
        },
    }
}


@router.post(
    "/v1/device/code",
    summary="Start a device login (RFC 8628 §3.1): a device code to poll with and a user code to show",
    openapi_extra=_FORM_BODY,
    responses=problems(_422="validation-failed (error: invalid_scope or invalid_request)",
                       _429="rate-limited: 20 starts a minute per address"),
)
async def start(request: Request) -> Response:
    state = request.app.state
    try:
        state.rate_limiter.hit(f"device-start:{_address(request)}", state.limits.device_starts_per_window,
                               what="device login starts")
        fields = await _fields(request)
        scope = fields.get("scope")
        started = await run_in_threadpool(
            _service(request).start,
            scopes=scope.split() if scope is not None else None,
            client_name=fields.get("client_name", ""),
        )
    except FastpadError as exc:
        raise _oauth(exc) from None
    verification = f"{state.base_url}/device"
    return JSONResponse(
        {
            "device_code": started.device_code,
            "user_code": started.user_code,
            "verification_uri": verification,
            "verification_uri_complete": f"{verification}?user_code={quote(started.user_code)}",
            "expires_in": started.expires_in,
            "interval": started.interval,
        },
        headers={"cache-control": "no-store"},
    )


@router.post(
    "/v1/device/token",
    summary="Poll a device login (RFC 8628 §3.4): the credential once a person approved it",
    openapi_extra={"requestBody": {"required": True, "content": {FORM: {"schema": {
        "type": "object", "required": ["grant_type", "device_code"], "properties": {
        "grant_type": {"type": "string", "enum": [GRANT_TYPE]},
        "device_code": {"type": "string"},
        "client_id": {"type": "string"},
    }}}, "application/json": {"schema": {"type": "object"}}}}},
    responses=problems(
        _400="authorization-pending, slow-down (interval grew), access-denied, expired-token or invalid-grant; "
             "the `error` member carries the RFC 8628 code",
        _429="rate-limited: 60 polls a minute per address (error: slow_down)",
    ),
)
async def poll(request: Request) -> Response:
    state = request.app.state
    try:
        state.rate_limiter.hit(f"device-poll:{_address(request)}", state.limits.device_polls_per_window,
                               what="device login polls")
        fields = await _fields(request)
        if fields.get("grant_type") != GRANT_TYPE:
            raise ValidationFailed(
                detail=f"grant_type must be {GRANT_TYPE}",
                field_errors=[FieldError("grant_type", "unsupported_grant_type", f"must be {GRANT_TYPE}")],
                extra={"error": "unsupported_grant_type"},
            )
        issued = await run_in_threadpool(_service(request).poll, fields.get("device_code", ""))
    except FastpadError as exc:
        raise _oauth(exc) from None
    info = issued.info
    return JSONResponse(
        {
            "access_token": issued.token,
            "token_type": "Bearer",
            "expires_in": int((info.expires_at - info.created_at).total_seconds()),
            "scope": " ".join(info.scopes),
            "workspace_id": issued.workspace_id,
            "token_id": info.id,
            "expires_at": info.expires_at.isoformat(),
        },
        headers={"cache-control": "no-store", "pragma": "no-cache"},
    )


# ---------------------------------------------------------------------- the approval page


def _signed_in(request: Request) -> tuple[Any, str] | None:
    """(principal, session id) of the web session, or None."""
    session_id = request.cookies.get(SESSION_COOKIE)
    if not session_id:
        return None
    try:
        return request.app.state.deployment.people.session_principal(session_id), session_id
    except Unauthenticated:
        return None


def _approver(request: Request, principal: Any) -> tuple[str, str]:
    """(email, workspace name) of the signed-in person, for the page."""
    people = request.app.state.deployment.people
    email = next((m.email for m in people.members(principal.workspace_id) if m.id == principal.principal_id), "")
    workspace = next((w["name"] for w in people.workspaces(principal.principal_id)
                      if w["id"] == principal.workspace_id), principal.workspace_id)
    return email, workspace


def _to_signin(user_code: str) -> RedirectResponse:
    back = f"/device?user_code={quote(user_code)}" if user_code else "/device"
    return RedirectResponse(f"/signin?next={quote(back, safe='/')}", status_code=303,
                            headers={"cache-control": "no-store"})


@router.get("/device", include_in_schema=False)
def approval_page(request: Request, user_code: str = "") -> Response:
    session = _signed_in(request)
    if session is None:
        return _to_signin(user_code)
    if not user_code:
        return device_page.enter_code()
    principal, session_id = session
    try:
        pending = _service(request).pending(user_code)
    except (NotFound, ValidationFailed) as exc:
        return device_page.enter_code(error=str(exc), status=404 if isinstance(exc, NotFound) else 422)
    if pending.state != "pending":
        return device_page.decided(pending)
    email, workspace = _approver(request, principal)
    csrf = request.app.state.deployment.people.csrf_token(session_id)
    return device_page.approve(pending, csrf_token=csrf, email=email, workspace=workspace)


@router.post("/device", include_in_schema=False)
async def decide(request: Request) -> Response:
    state = request.app.state
    if not same_origin(request):  # the pages' own check: this form is one of them
        return cross_site_refusal(request, "/device")
    try:
        fields = await _fields(request)
    except ValidationFailed as exc:
        return device_page.refused(str(exc), status=422)
    user_code = fields.get("user_code", "")
    session = await run_in_threadpool(_signed_in, request)
    if session is None:
        return _to_signin(user_code)
    principal, session_id = session
    if not state.deployment.people.check_csrf(session_id, fields.get("csrf_token", "")):
        return device_page.refused("The form's CSRF token is missing or wrong; reload the page.", status=403)
    decision = fields.get("decision")
    if decision not in ("approve", "deny"):
        return device_page.refused("Choose Approve or Deny.", status=422)
    try:
        # A person may try only so many codes a minute: a guessed code would sign someone else's terminal in.
        state.rate_limiter.hit(f"device-approve:{principal.principal_id}", state.limits.device_starts_per_window,
                               what="device approvals")
        decided = await run_in_threadpool(_service(request).decide, principal, user_code,
                                          approve=decision == "approve")
    except (NotFound, ValidationFailed) as exc:
        return device_page.enter_code(error=str(exc), status=404 if isinstance(exc, NotFound) else 422)
    except RateLimited as exc:
        return device_page.refused(str(exc), status=429)
    return device_page.decided(decided)
