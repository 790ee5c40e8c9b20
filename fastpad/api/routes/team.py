"""A team in one workspace: invitations, members and roles, your account and your sessions; and,
before any credential, accepting an invitation and open sign-up. Parse, call the security
services (security/invitations.py, security/team.py, security/people.py), render.

Every state-changing route with a credential takes ``idempotencyKey`` (body) or
``Idempotency-Key`` (header). The two routes without one (accepting, signing up) are limited
per address and per account, as sign-in is, and answer like sign-in: the session cookie and its
CSRF token.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import Field
from starlette.responses import Response

from fastpad.api.idempotency import key_from
from fastpad.api.openapi import problems
from fastpad.api.routes.common import Authenticated, json_response, mutate, mutate_with
from fastpad.api.routes.session import limit_attempts, open_session
from fastpad.api.schemas import IdempotencyKey, SessionOut, Ulid, _Strict
from fastpad.security.invitations import INVITABLE_ROLES
from fastpad.security.people import ROLES

PREFIX = "/v1"
router = APIRouter(prefix=PREFIX, tags=["team"])

# The two routes without a credential (app.py lists them as public).
ACCEPT_PATH = PREFIX + "/invitations:accept"
SIGNUP_PATH = PREFIX + "/signup"
PersonId = Annotated[Ulid, Path(description="the member's person id (ULID)")]

_MANAGERS_ONLY = ("policy-denied: needs a signed-in owner or admin (the problem names the role); "
                  "no token of any scope reaches it")


# What the schema can say of the rules the services check (the rest is a 422 naming the field):
# an email holds an @, a display name is not blank, a new password has 8 characters or more.
EMAIL = r"^[^\x00]*@[^\x00]*$"
NOT_BLANK = r"^[^\x00]*[^\x00\s][^\x00]*$"
NEW_PASSWORD = {"min_length": 8, "max_length": 1024}


class InvitationIn(_Strict):
    email: str = Field(min_length=3, max_length=320, pattern=EMAIL, description="whom to invite")
    role: str = Field(default="member", json_schema_extra={"enum": list(INVITABLE_ROLES)})
    idempotencyKey: IdempotencyKey | None = None


class AcceptIn(_Strict):
    token: str = Field(min_length=1, max_length=100, description="the secret at the end of the invitation link")
    display_name: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK)
    password: str = Field(**NEW_PASSWORD,
                          description="a new password; for a person who has an account already, its password")


class SignupIn(_Strict):
    email: str = Field(min_length=3, max_length=320, pattern=EMAIL)
    password: str = Field(**NEW_PASSWORD)
    display_name: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK)
    workspace_name: str = Field(default="", max_length=200)


class RoleIn(_Strict):
    role: str = Field(json_schema_extra={"enum": list(ROLES)})
    idempotencyKey: IdempotencyKey | None = None


class AccountIn(_Strict):
    display_name: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK)
    idempotencyKey: IdempotencyKey | None = None


class PasswordIn(_Strict):
    current_password: str = Field(min_length=1, max_length=1024)
    new_password: str = Field(**NEW_PASSWORD)
    idempotencyKey: IdempotencyKey | None = None


def _services(request: Request):  # type: ignore[no-untyped-def]
    return request.app.state.deployment


# ---------------------------------------------------------------------- invitations


@router.post("/invitations", status_code=201,
             summary="Invite someone by email: a single-use link, valid 7 days, shown once (and mailed if SMTP is set)",
             responses=problems(_403=_MANAGERS_ONLY, _409="conflict: already a member of this workspace",
                                _422="validation-failed: not an email address, or not an invitable role"))
async def invite(request: Request, caller: Authenticated, body: InvitationIn) -> Response:
    def execute() -> Response:
        issued = _services(request).invitations.invite(caller.principal, body.email, role=body.role,
                                                       base_url=request.app.state.base_url)
        return json_response(issued.as_dict(), 201, headers={"cache-control": "no-store"})
    return await mutate_with(request, caller, body, execute)


@router.get("/invitations", summary="The workspace's invitations and their status (pending, accepted, revoked, expired)",
            responses=problems(_403=_MANAGERS_ONLY))
def list_invitations(request: Request, caller: Authenticated) -> Response:
    if caller.elsewhere:
        return json_response({"items": []})
    return json_response({"items": [i.as_dict() for i in _services(request).invitations.list(caller.principal)]})


@router.delete("/invitations/{invitation_id}", summary="Revoke a pending invitation: its link stops working",
               responses=problems(_403=_MANAGERS_ONLY, _404="not-found: no such invitation",
                                  _409="conflict: it was already accepted or revoked"))
async def revoke_invitation(request: Request, caller: Authenticated, invitation_id: Ulid) -> Response:
    def execute() -> Response:
        return json_response(_services(request).invitations.revoke(caller.principal, invitation_id).as_dict())
    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)


@router.post(ACCEPT_PATH.removeprefix(PREFIX), status_code=201, response_model=SessionOut,
             summary="Accept an invitation (no credential): choose a display name and password, and be signed in",
             responses=problems(_401="unauthenticated: the invitee has an account and this is not its password",
                                _403="policy-denied: sign-up is closed on this server",
                                _404="not-found: the link was used, expired or revoked (one answer for all three)",
                                _422="validation-failed: a password too short or holding the email",
                                _429="rate-limited: too many attempts from this address or at this invitation"))
async def accept_invitation(request: Request, body: AcceptIn) -> Response:
    limit_attempts(request, "invitation", body.token, request.app.state.limits.join_per_window)
    principal = await run_in_threadpool(lambda: _services(request).invitations.accept(
        body.token, display_name=body.display_name, password=body.password))
    return await open_session(request, principal)


@router.post(SIGNUP_PATH.removeprefix(PREFIX), status_code=201, response_model=SessionOut,
             summary="Create an account and a workspace of its own (no credential; only where sign-up is open)",
             responses=problems(_403="policy-denied: sign-up is by invitation or closed on this server",
                                _409="conflict: an account with this email exists; sign in",
                                _422="validation-failed: not an email, or a password too short or holding the email",
                                _429="rate-limited: too many attempts from this address or for this email"))
async def sign_up(request: Request, body: SignupIn) -> Response:
    limit_attempts(request, "sign-up", body.email, request.app.state.limits.join_per_window)
    principal = await run_in_threadpool(lambda: _services(request).invitations.sign_up(
        body.email, body.password, display_name=body.display_name, workspace_name=body.workspace_name))
    return await open_session(request, principal)


# ---------------------------------------------------------------------- members


@router.get("/members", summary="The workspace's people: id, name, email, role and last activity (a person only)",
            responses=problems(_403="policy-denied: an agent cannot list the workspace's people"))
def list_members(request: Request, caller: Authenticated) -> Response:
    if caller.elsewhere:
        return json_response({"items": []})
    return json_response({"items": [m.as_dict() for m in _services(request).team.members(caller.principal)]})


@router.patch("/members/{person_id}", summary="Change a member's role (owner or admin; only an owner touches owners)",
              responses=problems(_403=_MANAGERS_ONLY, _404="not-found: not a member",
                                 _409="conflict: the last owner stays an owner", _422="validation-failed: not a role"))
async def change_role(request: Request, caller: Authenticated, body: RoleIn, person_id: PersonId) -> Response:
    def execute() -> Response:
        return json_response(_services(request).team.set_role(caller.principal, person_id, body.role).as_dict())
    return await mutate_with(request, caller, body, execute)


@router.delete("/members/{person_id}",
               summary="Remove a member: their sessions end and every token answering to them is revoked at once",
               responses=problems(_403=_MANAGERS_ONLY, _404="not-found: not a member",
                                  _409="conflict: the last owner cannot be removed"))
async def remove_member(request: Request, caller: Authenticated, person_id: PersonId) -> Response:
    def execute() -> Response:
        return json_response(_services(request).team.remove(caller.principal, person_id).as_dict())
    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)


# ---------------------------------------------------------------------- your account


@router.get("/account", summary="Your account: id, email, display name and role here (a signed-in person)",
            responses=problems(_403="policy-denied: a token has no account page"))
def account(request: Request, caller: Authenticated) -> Response:
    return json_response(_services(request).people.me(caller.principal).as_dict())


@router.patch("/account", summary="Change your display name",
              responses=problems(_403="policy-denied: only a signed-in person", _422="validation-failed"))
async def change_account(request: Request, caller: Authenticated, body: AccountIn) -> Response:
    def execute() -> Response:
        return json_response(_services(request).people.set_display_name(caller.principal, body.display_name).as_dict())
    return await mutate_with(request, caller, body, execute)


@router.post("/account/password",
             summary="Change your password (give the current one); your other sessions are signed out",
             responses=problems(_403="policy-denied: only a signed-in person",
                                _422="validation-failed: the current password is wrong, or the new one is too short "
                                     "or holds your email"))
async def change_password(request: Request, caller: Authenticated, body: PasswordIn) -> Response:
    def execute() -> Response:
        ended = _services(request).people.change_password(
            caller.principal, body.current_password, body.new_password, keep_session=caller.session_id)
        return json_response({"sessions_ended": ended})
    return await mutate_with(request, caller, body, execute)


@router.get("/sessions", summary="Where you are signed in: browser, when it began, last seen",
            responses=problems(_403="policy-denied: only a signed-in person"))
def list_sessions(request: Request, caller: Authenticated) -> Response:
    return json_response({"items": _services(request).people.sessions(caller.principal, caller.session_id)})


@router.delete("/sessions/{session_id}", status_code=204, summary="Sign one of your sessions out",
               responses=problems(_403="policy-denied: only a signed-in person",
                                  _404="not-found: no open session of yours with this id"))
async def end_session(request: Request, caller: Authenticated, session_id: Ulid) -> Response:
    def execute() -> Response:
        _services(request).people.end_own_session(caller.principal, session_id)
        return Response(status_code=204)
    return await mutate(request, caller, key=key_from(request, None), fingerprint_body={}, execute=execute)
