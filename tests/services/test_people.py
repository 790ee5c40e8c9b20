"""People: argon2id passwords, web sessions with CSRF tokens, workspace switching."""

from __future__ import annotations

import pytest

from fastpad.errors import Conflict, PolicyDenied, Unauthenticated, ValidationFailed
from fastpad.notes.provenance import Origin
from fastpad.security.audit import AuditService
from fastpad.security.scopes import SESSION_SCOPES


def test_passwords_are_argon2id_hashes(svc, ws) -> None:
    with svc.store.read(ws.id) as tx:
        stored = tx.person(ws.owner_id).password_hash
    assert stored.startswith("$argon2id$") and "correct horse" not in stored


def test_sign_in_with_a_password(svc, ws) -> None:
    p = svc.people.authenticate_password(ws.owner_email.upper() + "  ", "correct horse")
    assert (p.workspace_id, p.kind, p.principal_id, p.token_id) == (ws.id, "person", ws.owner_id, None)
    assert p.scopes == SESSION_SCOPES and "turns:accept" not in p.scopes
    assert (p.origin, p.rate_limit_per_minute, p.rate_key) == (Origin.HUMAN_TYPED, 1200, f"person:{ws.owner_id}")


@pytest.mark.parametrize("email,password", [
    ("owner", "correct horse"), (None, "wrong horse"), ("nobody@example.com", "correct horse"), (None, ""),
])
def test_every_sign_in_failure_looks_the_same(svc, ws, email, password) -> None:
    with pytest.raises(Unauthenticated) as caught:
        svc.people.authenticate_password(email or ws.owner_email, password)
    assert caught.value.detail == "wrong email or password"


def test_sign_ins_and_failed_ones_are_audited_where_the_account_belongs(svc, ws) -> None:
    other = svc.workspace("Beta")
    svc.people.create_person(other.id, ws.owner_email, role="member")
    with pytest.raises(Unauthenticated):
        svc.people.authenticate_password(ws.owner_email, "wrong horse")
    with pytest.raises(Unauthenticated):
        svc.people.authenticate_password("nobody@example.com", "wrong horse")  # an account of no workspace
    svc.people.authenticate_password(ws.owner_email, "correct horse", workspace_id=other.id)

    def signins(workspace) -> list[tuple[str, str, str | None]]:
        entries = AuditService(svc.store).page(workspace.owner).entries
        return [(e.action, e.actor_kind, e.target) for e in entries if e.action.startswith("session.")]

    # The wrong password is in both of the account's workspaces; the sign-in only where it went.
    assert signins(ws) == [("session.sign_in_failed", "anonymous", ws.owner_id)]
    assert signins(other) == [("session.signed_in", "person", ws.owner_id),
                              ("session.sign_in_failed", "anonymous", ws.owner_id)]


def test_people_and_memberships(svc, ws) -> None:
    with pytest.raises(ValidationFailed):
        svc.people.create_person(ws.id, "not-an-email")
    with pytest.raises(ValidationFailed):
        svc.people.create_person(ws.id, "short@example.com", password="short")
    with pytest.raises(Conflict):
        svc.people.create_person(ws.id, ws.owner_email)
    other = svc.workspace("Beta")
    # Joining a second workspace keeps the person (and their password).
    joined = svc.people.create_person(other.id, ws.owner_email, role="member")
    assert joined.id == ws.owner_id
    assert [w["id"] for w in svc.people.workspaces(ws.owner_id)] == [ws.id, other.id]
    assert svc.people.authenticate_password(ws.owner_email, "correct horse", workspace_id=other.id).workspace_id == other.id
    assert {m.email for m in svc.people.members(other.id)} == {ws.owner_email, other.owner_email}


def test_sessions_store_only_a_hash_and_end(svc, ws) -> None:
    session_id, csrf = svc.people.create_session(ws.owner)
    p = svc.people.session_principal(session_id)
    assert (p.workspace_id, p.principal_id, p.token_id) == (ws.id, ws.owner_id, None)
    with svc.store.read(ws.id) as tx:
        rows = [tx.session(s) for s in [svc.store.resolve_credential("session", _sha(session_id))[1]]]
    assert rows[0].session_hash == _sha(session_id) and session_id not in repr(rows)
    assert svc.people.check_csrf(session_id, csrf)
    assert not svc.people.check_csrf(session_id, csrf[:-1] + ("A" if csrf[-1] != "A" else "B"))
    other_session, _ = svc.people.create_session(ws.owner)
    assert not svc.people.check_csrf(other_session, csrf)
    svc.people.end_session(session_id)
    svc.people.end_session(session_id)  # twice is fine
    with pytest.raises(Unauthenticated):
        svc.people.session_principal(session_id)
    svc.people.session_principal(other_session)
    for bad in ("", "fps_nope", "x" * 300):
        with pytest.raises(Unauthenticated):
            svc.people.session_principal(bad)


def test_sessions_expire(svc, ws) -> None:
    session_id, _ = svc.people.create_session(ws.owner)
    svc.clock.advance(days=13)
    svc.people.session_principal(session_id)
    svc.clock.advance(days=1)
    with pytest.raises(Unauthenticated):
        svc.people.session_principal(session_id)
    assert svc.people.session_max_age_s == 14 * 24 * 3600


def test_only_a_person_has_a_session(svc, ws) -> None:
    agent = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:read"])[0])
    with pytest.raises(PolicyDenied):
        svc.people.create_session(agent)


def test_switching_workspace_needs_membership(svc, ws) -> None:
    other = svc.workspace("Beta")
    theirs = svc.notes.create(other.owner, title="theirs")
    session_id, _ = svc.people.create_session(ws.owner)
    outsider = svc.people.session_principal(session_id, workspace_id=other.id)
    assert outsider.note_ids == frozenset() and svc.notes.list(outsider).items == []
    assert not outsider.has("notes:write")
    svc.people.create_person(other.id, ws.owner_email)
    member = svc.people.session_principal(session_id, workspace_id=other.id)
    assert member.workspace_id == other.id and member.note_ids is None
    assert [n.id for n in svc.notes.list(member).items] == [theirs.id]


def test_a_removed_member_loses_their_sessions(svc, ws) -> None:
    person = svc.people.create_person(ws.id, "temp@example.com", password="long enough")
    p = svc.people.authenticate_password("temp@example.com", "long enough")
    session_id, _ = svc.people.create_session(p)
    svc.people.remove_member(ws.id, person.id)
    with pytest.raises(Unauthenticated):
        svc.people.session_principal(session_id)
    with pytest.raises(Unauthenticated):
        svc.people.authenticate_password("temp@example.com", "long enough")


def _sha(value: str) -> str:
    import hashlib

    return hashlib.sha256(value.encode()).hexdigest()
