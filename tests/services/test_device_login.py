"""DeviceLoginService on both backends: the RFC 8628 states, what the credential carries, and who may approve."""

from __future__ import annotations

import pytest

from fastpad.errors import (
    AccessDenied,
    AuthorizationPending,
    ExpiredToken,
    InvalidGrant,
    NotFound,
    PolicyDenied,
    SlowDown,
    ValidationFailed,
)
from fastpad.security.device import DEFAULT_SCOPES, DeviceLoginService, normalize_user_code
from fastpad.security.principals import Principal
from fastpad.store.device import device_transaction
from tests.helpers_store import Services, Workspace


@pytest.fixture
def logins(svc: Services) -> DeviceLoginService:
    return DeviceLoginService(svc.store, svc.tokens, clock=svc.clock, interval_s=5)


def test_an_approved_login_yields_one_person_token_in_the_approvers_workspace(svc, ws: Workspace, logins):
    started = logins.start(client_name="fp on laptop")
    assert normalize_user_code(started.user_code.lower().replace("-", " ")) is not None
    with pytest.raises(AuthorizationPending):
        logins.poll(started.device_code)
    request = logins.pending(started.user_code)
    assert request.scopes == DEFAULT_SCOPES and not request.grants_accept and request.state == "pending"

    assert logins.decide(ws.owner, started.user_code, approve=True).state == "approved"
    with pytest.raises(SlowDown) as too_soon:  # polled again within the interval
        logins.poll(started.device_code)
    assert too_soon.value.extra["interval"] == 10
    svc.clock.advance(seconds=10)
    issued = logins.poll(started.device_code)
    assert issued.workspace_id == ws.id and issued.info.kind == "person" and issued.info.person_id == ws.owner_id
    assert issued.info.scopes == DEFAULT_SCOPES and "turns:accept" not in issued.info.scopes
    assert issued.info.label == "fp login: fp on laptop"
    principal = svc.tokens.authenticate(issued.token)
    assert principal.workspace_id == ws.id and principal.is_person
    svc.clock.advance(seconds=10)
    with pytest.raises(InvalidGrant):
        logins.poll(started.device_code)  # the credential is handed out once
    with pytest.raises(NotFound):
        logins.pending(started.user_code)


def test_turns_accept_only_when_asked_for_and_unknown_scopes_are_refused(svc, ws, logins):
    started = logins.start(scopes="notes:read turns:accept".split())
    assert logins.pending(started.user_code).grants_accept
    logins.decide(ws.owner, started.user_code, approve=True)
    assert logins.poll(started.device_code).info.scopes == ("notes:read", "turns:accept")
    with pytest.raises(ValidationFailed) as bad:
        logins.start(scopes=["notes:fly"])
    assert bad.value.field_errors[0].field == "scope"


def test_denied_expired_and_unknown(svc, ws, logins):
    denied = logins.start()
    logins.decide(ws.owner, denied.user_code, approve=False)
    with pytest.raises(AccessDenied):
        logins.poll(denied.device_code)
    with pytest.raises(NotFound):  # decided already
        logins.decide(ws.owner, denied.user_code, approve=True)

    late = logins.start()
    svc.clock.advance(minutes=11)
    with pytest.raises(ExpiredToken):
        logins.poll(late.device_code)
    with pytest.raises(NotFound):
        logins.decide(ws.owner, late.user_code, approve=True)
    with pytest.raises(InvalidGrant):
        logins.poll("fpd_never-issued")
    with pytest.raises(ValidationFailed):
        logins.pending("not a code")


def test_only_a_signed_in_session_approves_never_a_token(svc, ws, logins):
    started = logins.start()
    plaintext, _ = svc.tokens.create(ws.id, scopes=["notes:read"], person_email=ws.owner_email)
    with pytest.raises(PolicyDenied):
        logins.decide(svc.tokens.authenticate(plaintext), started.user_code, approve=True)
    agent = Principal(ws.id, "agent", "A" * 26, None, frozenset({"notes:read"}))
    with pytest.raises(PolicyDenied):
        logins.decide(agent, started.user_code, approve=True)


def test_a_request_names_only_its_own_row_and_long_expired_rows_are_swept(svc, ws, logins):
    first = logins.start()
    svc.clock.advance(days=2)
    second = logins.start()  # sweeps requests expired for more than a day
    with device_transaction(svc.store, write=False, user_code=first.user_code.replace("-", "")) as devices:
        assert devices.by_user_code(first.user_code.replace("-", "")) is None
    with device_transaction(svc.store, write=False, user_code=second.user_code.replace("-", "")) as devices:
        assert devices.by_user_code(second.user_code.replace("-", "")) is not None
        assert devices.by_device_code("0" * 64) is None
