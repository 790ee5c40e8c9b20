"""OAuthService on both backends, where time matters: codes and refresh tokens expire, unapproved
registrations are swept; and what a grant becomes when its person leaves or reconnects."""

from __future__ import annotations

import secrets

import pytest

from fastpad.errors import PolicyDenied
from fastpad.security.oauth import (
    CODE_LIFETIME,
    REFRESH_TOKEN_LIFETIME,
    UNAPPROVED_CLIENT_LIFETIME,
    OAuthError,
    OAuthService,
    pkce_challenge,
)
from fastpad.security.audit import AuditService
from fastpad.store.audit import AuditFilter
from tests.helpers_store import Services, Workspace

CALLBACK = "http://127.0.0.1:8000/callback"


@pytest.fixture
def oauth(svc: Services) -> OAuthService:
    return OAuthService(svc.store, svc.tokens, base_url="http://127.0.0.1:8765", clock=svc.clock)


def _approved(oauth: OAuthService, ws: Workspace, *, scope: str | None = None, client_id: str | None = None):
    """A registered client the owner approved: (client_id, code, verifier)."""
    client_id = client_id or oauth.register({"client_name": "Claude", "redirect_uris": [CALLBACK],
                                             "grant_types": ["authorization_code", "refresh_token"]}).client_id
    client, redirect_uri = oauth.redirect_target(client_id, CALLBACK)
    verifier = secrets.token_urlsafe(48)
    params = {"response_type": "code", "code_challenge": pkce_challenge(verifier), "code_challenge_method": "S256",
              **({"scope": scope} if scope else {})}
    request = oauth.authorization_request(client, redirect_uri, params)
    return client_id, oauth.approve(ws.owner, request, request.scopes), verifier


def _exchange(oauth: OAuthService, client_id: str, code: str, verifier: str):
    return oauth.exchange_code(client_id=client_id, code=code, redirect_uri=CALLBACK, code_verifier=verifier)


def test_a_code_expires(svc: Services, ws: Workspace, oauth: OAuthService) -> None:
    client_id, code, verifier = _approved(oauth, ws)
    svc.clock.advance(seconds=CODE_LIFETIME.total_seconds())
    with pytest.raises(OAuthError) as expired:
        _exchange(oauth, client_id, code, verifier)
    assert expired.value.error == "invalid_grant" and "expired" in expired.value.detail


def test_a_refresh_token_expires_and_a_refresh_can_narrow_the_scopes(svc, ws, oauth) -> None:
    client_id, code, verifier = _approved(oauth, ws, scope="notes:read search:read")
    first = _exchange(oauth, client_id, code, verifier)
    narrowed = oauth.refresh(client_id=client_id, refresh_token=first.refresh_token, scope="notes:read")
    assert narrowed.scopes == ("notes:read",)
    assert svc.tokens.authenticate(narrowed.access_token).scopes == {"notes:read"}
    restored = oauth.refresh(client_id=client_id, refresh_token=narrowed.refresh_token)
    assert restored.scopes == ("notes:read", "search:read"), "the person's grant stays the ceiling"
    with pytest.raises(OAuthError) as wider:
        oauth.refresh(client_id=client_id, refresh_token=restored.refresh_token, scope="notes:read export")
    assert wider.value.error == "invalid_scope"
    svc.clock.advance(seconds=REFRESH_TOKEN_LIFETIME.total_seconds())
    with pytest.raises(OAuthError) as expired:
        oauth.refresh(client_id=client_id, refresh_token=restored.refresh_token)
    assert "expired" in expired.value.detail


def test_a_person_leaving_ends_their_grants(svc, ws, oauth) -> None:
    member = svc.people.create_person(ws.id, "member@example.com", password="correct horse")
    principal = svc.people.principal_for(ws.id, member.id)
    client = oauth.register({"redirect_uris": [CALLBACK], "grant_types": ["authorization_code", "refresh_token"]})
    verifier = secrets.token_urlsafe(48)
    request = oauth.authorization_request(client, CALLBACK, {"response_type": "code", "code_challenge_method": "S256",
                                                             "code_challenge": pkce_challenge(verifier)})
    assert request.client.client_name == "Unnamed client"
    issued = _exchange(oauth, client.client_id, oauth.approve(principal, request, request.scopes), verifier)
    svc.people.remove_member(ws.id, member.id)
    with pytest.raises(OAuthError) as gone:
        oauth.refresh(client_id=client.client_id, refresh_token=issued.refresh_token)
    # Removal revokes every token that answers to the person, this connection's included.
    assert "revoked" in gone.value.detail
    assert svc.tokens.get(ws.id, issued.token_id).revoked_at is not None, "its token is revoked with it"


def test_reconnecting_the_same_client_keeps_one_agent(svc, ws, oauth) -> None:
    client_id, code, verifier = _approved(oauth, ws)
    first = _exchange(oauth, client_id, code, verifier)
    _, code, verifier = _approved(oauth, ws, client_id=client_id)
    second = _exchange(oauth, client_id, code, verifier)
    first_info, second_info = svc.tokens.get(ws.id, first.token_id), svc.tokens.get(ws.id, second.token_id)
    assert first_info.agent_id == second_info.agent_id and first.token_id != second.token_id
    assert second_info.label == "Claude (OAuth)" and second_info.kind == "agent"


def test_only_a_signed_in_session_approves(svc, ws, oauth) -> None:
    client = oauth.register({"redirect_uris": [CALLBACK]})
    assert client.grant_types == ("authorization_code",)
    request = oauth.authorization_request(client, CALLBACK, {"response_type": "code", "code_challenge_method": "S256",
                                                             "code_challenge": pkce_challenge("v" * 43)})
    person_token = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:read"],
                                                             person_email=ws.owner_email)[0])
    with pytest.raises(PolicyDenied):
        oauth.approve(person_token, request, request.scopes)
    issued = _exchange(oauth, client.client_id, oauth.approve(ws.owner, request, request.scopes), "v" * 43)
    assert issued.refresh_token is None, "a client that did not register refresh_token gets none"
    with pytest.raises(OAuthError) as refused:
        oauth.refresh(client_id=client.client_id, refresh_token="fprt_x")
    assert refused.value.error == "unauthorized_client"


def test_a_registration_nobody_approves_is_swept(svc, ws, oauth) -> None:
    approved, _, _ = _approved(oauth, ws)
    forgotten = oauth.register({"redirect_uris": [CALLBACK]}).client_id
    svc.clock.advance(seconds=UNAPPROVED_CLIENT_LIFETIME.total_seconds() + 1)
    oauth.register({"redirect_uris": [CALLBACK]})  # each registration sweeps
    assert oauth.client(approved).client_id == approved
    with pytest.raises(OAuthError) as unknown:
        oauth.client(forgotten)
    assert unknown.value.error == "invalid_client"


def test_a_connection_minted_and_revoked_is_in_the_audit_log_once_each(svc, ws, oauth) -> None:
    client_id, code, verifier = _approved(oauth, ws)
    issued = _exchange(oauth, client_id, code, verifier)
    oauth.revoke(client_id=client_id, token=issued.access_token)
    entries = AuditService(svc.store).page(ws.owner, AuditFilter()).entries
    about = [(e.action, e.actor_kind, e.actor_id) for e in entries if e.target == issued.token_id]
    assert about == [("token.revoked", "system", None), ("token.minted", "person", ws.owner.principal_id)]
    revoked = next(e for e in entries if e.action == "token.revoked")
    assert revoked.details["client"] == "Claude" and revoked.details["revoked"] == [issued.token_id]
