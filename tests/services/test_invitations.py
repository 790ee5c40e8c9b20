"""Invitations, members and roles, and your account, at the service layer on both backends:
the link's single use, its 7-day expiry (the services share the test's movable clock), revocation,
password checks, who may manage whom, and a viewer refused every write with the role named."""

from __future__ import annotations

import socket

import pytest

from fastpad.errors import Conflict, NotFound, PolicyDenied, Unauthenticated, ValidationFailed
from fastpad.security.invitations import INVITATION_TTL, InvitationGone, InvitationService
from fastpad.security.mail import Mailer
from fastpad.security.team import TeamService
from tests.helpers_store import Services, Workspace

BASE = "https://pad.example"


@pytest.fixture
def invitations(svc: Services) -> InvitationService:
    return InvitationService(svc.store, svc.people, clock=svc.clock)


@pytest.fixture
def team(svc: Services) -> TeamService:
    return TeamService(svc.store, svc.people)


def _secret(link: str) -> str:
    assert link.startswith(f"{BASE}/invite/fpi_")
    return link.rsplit("/", 1)[1]


def _join(invitations: InvitationService, ws: Workspace, email: str, role: str = "member",
          password: str = "a long enough pass"):
    issued = invitations.invite(ws.owner, email, role=role, base_url=BASE)
    return invitations.accept(_secret(issued.link), display_name=email.split("@")[0], password=password)


def test_a_link_is_used_once_and_only_its_hash_is_stored(svc, ws, invitations) -> None:
    issued = invitations.invite(ws.owner, "Bea@Example.com", base_url=BASE)
    secret = _secret(issued.link)
    assert issued.invitation.email == "bea@example.com" and issued.invitation.status == "pending"
    with svc.store.read(ws.id) as tx:
        row = tx.team.invitation(issued.invitation.id)
    assert row is not None and secret not in row.token_hash and len(row.token_hash) == 64
    bea = invitations.accept(secret, display_name="Bea", password="a long enough pass")
    assert (bea.workspace_id, bea.role, bea.is_signed_in_person) == (ws.id, "member", True)
    with pytest.raises(InvitationGone):
        invitations.accept(secret, display_name="Bea again", password="a long enough pass")
    assert [i.status for i in invitations.list(ws.owner)] == ["accepted"]
    # The new person signs in with the password they chose.
    assert svc.people.authenticate_password("bea@example.com", "a long enough pass").principal_id == bea.principal_id


def test_a_link_expires_after_seven_days(svc, ws, invitations) -> None:
    secret = _secret(invitations.invite(ws.owner, "late@example.com", base_url=BASE).link)
    svc.clock.advance(seconds=INVITATION_TTL.total_seconds() - 1)
    assert invitations.open(secret).email == "late@example.com"
    svc.clock.advance(seconds=1)
    with pytest.raises(InvitationGone) as expired:
        invitations.accept(secret, display_name="Late", password="a long enough pass")
    assert [i.status for i in invitations.list(ws.owner)] == ["expired"]
    # Used, expired, revoked and made-up links are one and the same answer.
    revoked = invitations.invite(ws.owner, "gone@example.com", base_url=BASE)
    invitations.revoke(ws.owner, revoked.invitation.id)
    answers = set()
    for link in (secret, _secret(revoked.link), "fpi_" + "x" * 43, "not a link"):
        with pytest.raises(InvitationGone) as gone:
            invitations.open(link)
        answers.add((gone.value.status, gone.value.detail))
    assert answers == {(expired.value.status, expired.value.detail)}
    with pytest.raises(Conflict):
        invitations.revoke(ws.owner, revoked.invitation.id)


def test_inviting_a_member_is_a_conflict_and_only_owners_and_admins_invite(svc, ws, invitations) -> None:
    with pytest.raises(Conflict) as member:
        invitations.invite(ws.owner, ws.owner_email, base_url=BASE)
    assert member.value.status == 409
    bea = _join(invitations, ws, "bea@example.com")
    with pytest.raises(PolicyDenied) as refused:
        invitations.invite(bea, "carl@example.com", base_url=BASE)
    assert refused.value.extra["required_role"] == ["owner", "admin"]
    with pytest.raises(ValidationFailed):
        invitations.invite(ws.owner, "carl@example.com", role="owner", base_url=BASE)
    # A person's CLI token is a token: no scope reaches the people of the workspace.
    plaintext, _ = svc.tokens.create(ws.id, scopes=["notes:read"], person_email=ws.owner_email)
    with pytest.raises(PolicyDenied) as token:
        invitations.invite(svc.tokens.authenticate(plaintext), "carl@example.com", base_url=BASE)
    assert token.value.extra["reason"] == "person_only"


def test_passwords_are_checked_for_length_and_against_the_email(svc, ws, invitations) -> None:
    secret = _secret(invitations.invite(ws.owner, "dana.smith@example.com", base_url=BASE).link)
    for weak, code in (("short", "length"), ("DANA.SMITH@example.com1", "contains_email"),
                       ("my dana.smith pass", "contains_email")):
        with pytest.raises(ValidationFailed) as refused:
            invitations.accept(secret, display_name="Dana", password=weak)
        assert refused.value.field_errors[0].code == code
    # Refusals leave the link usable.
    assert invitations.accept(secret, display_name="Dana", password="a long enough pass").role == "member"


def test_changing_your_password_needs_the_current_one_and_ends_your_other_sessions(svc, ws) -> None:
    kept, _ = svc.people.create_session(ws.owner, user_agent="Firefox")
    other, _ = svc.people.create_session(ws.owner, user_agent="Chromium")
    with pytest.raises(ValidationFailed) as wrong:
        svc.people.change_password(ws.owner, "not it", "a new long password", keep_session=kept)
    assert wrong.value.field_errors[0].field == "current_password"
    with pytest.raises(ValidationFailed):
        svc.people.change_password(ws.owner, "correct horse", ws.owner_email, keep_session=kept)
    assert svc.people.change_password(ws.owner, "correct horse", "a new long password", keep_session=kept) == 1
    svc.people.session_principal(kept)
    with pytest.raises(Unauthenticated):
        svc.people.session_principal(other)
    assert svc.people.authenticate_password(ws.owner_email, "a new long password").principal_id == ws.owner_id
    sessions = svc.people.sessions(ws.owner, kept)
    assert [(s["user_agent"], s["current"]) for s in sessions] == [("Firefox", True)]


def test_roles_change_only_by_owner_or_admin_and_the_last_owner_stays(svc, ws, invitations, team) -> None:
    bea = _join(invitations, ws, "bea@example.com")
    carl = _join(invitations, ws, "carl@example.com", role="admin")
    with pytest.raises(PolicyDenied) as member:
        team.set_role(bea, carl.principal_id, "viewer")
    assert member.value.extra["required_role"] == ["owner", "admin"] and member.value.extra["role"] == "member"
    assert team.set_role(carl, bea.principal_id, "viewer").role == "viewer"
    with pytest.raises(PolicyDenied) as admin:
        team.set_role(carl, bea.principal_id, "owner")
    assert admin.value.extra["required_role"] == ["owner"]
    with pytest.raises(Conflict):
        team.set_role(ws.owner, ws.owner_id, "admin")
    with pytest.raises(Conflict):
        team.remove(ws.owner, ws.owner_id)
    with pytest.raises(NotFound):
        team.set_role(ws.owner, "01" + "0" * 24, "member")


def test_a_viewer_reads_and_is_refused_every_write_with_the_role_named(svc, ws, invitations, team) -> None:
    note = svc.notes.create(ws.owner, title="Shared", markdown="one\n\ntwo")
    viewer = _join(invitations, ws, "vic@example.com", role="viewer")
    assert svc.notes.get(viewer, note.id).title == "Shared"
    attempts = {
        "create": lambda p: svc.notes.create(p, title="mine"),
        "trash": lambda p: svc.notes.trash(p, note.id),
    }
    for name, attempt in attempts.items():
        with pytest.raises(PolicyDenied) as refused:
            attempt(viewer)
        assert refused.value.extra == {"reason": "role", "role": "viewer", "required_role": "member"}, name
    # Their CLI token and an agent token they minted while a member only read, too.
    vic_token, _ = svc.tokens.create(ws.id, scopes=["notes:read", "notes:write"], person_email="vic@example.com")
    team.set_role(ws.owner, viewer.principal_id, "member")
    member = svc.people.principal_for(ws.id, viewer.principal_id)
    agent_token, _ = svc.tokens.create(ws.id, scopes=["notes:read", "notes:propose"], minted_by=member)
    team.set_role(ws.owner, viewer.principal_id, "viewer")
    for plaintext in (vic_token, agent_token):
        principal = svc.tokens.authenticate(plaintext)
        with pytest.raises(PolicyDenied) as refused:
            svc.notes.create(principal, title="mine")
        assert refused.value.extra["required_role"] == "member"


def test_removal_ends_sessions_and_revokes_every_token_answering_to_the_person(svc, ws, invitations, team) -> None:
    bea = _join(invitations, ws, "bea@example.com")
    note = svc.notes.create(bea, title="Bea's note")
    session, _ = svc.people.create_session(bea)
    cli, cli_info = svc.tokens.create(ws.id, scopes=["notes:read", "notes:propose"], person_email="bea@example.com")
    delegated, _ = svc.tokens.create(ws.id, scopes=["notes:read"], minted_by=svc.tokens.authenticate(cli))
    minted, _ = svc.tokens.create(ws.id, scopes=["notes:read"], minted_by=bea)
    removed = team.remove(ws.owner, bea.principal_id)
    assert removed.sessions_ended == 1 and len(removed.tokens_revoked) == 3
    with pytest.raises(Unauthenticated):
        svc.people.session_principal(session)
    for plaintext in (cli, delegated, minted):
        with pytest.raises(Unauthenticated):
            svc.tokens.authenticate(plaintext)
    kept = svc.notes.get(ws.owner, note.id)
    assert kept.title == "Bea's note"
    assert [m.email for m in team.members(ws.owner)] == [ws.owner_email]
    assert cli_info.person_id == bea.principal_id


def test_closing_sign_up_refuses_even_a_link_issued_before(svc, ws, invitations) -> None:
    secret = _secret(invitations.invite(ws.owner, "early@example.com", base_url=BASE).link)
    closed = InvitationService(svc.store, svc.people, signup="closed", clock=svc.clock)
    for attempt in (lambda: closed.accept(secret, display_name="Early", password="a long enough pass"),
                    lambda: closed.invite(ws.owner, "later@example.com", base_url=BASE),
                    lambda: closed.sign_up("new@example.com", "a long enough pass", display_name="New")):
        with pytest.raises(PolicyDenied) as refused:
            attempt()
        assert refused.value.extra["reason"] == "signup_closed"
    with pytest.raises(PolicyDenied) as invite_only:
        invitations.sign_up("new@example.com", "a long enough pass", display_name="New")
    assert invite_only.value.extra["reason"] == "signup_by_invitation"
    assert invitations.accept(secret, display_name="Early", password="a long enough pass").role == "member"


def test_a_removed_person_invited_again_joins_with_their_own_password(svc, ws, invitations, team) -> None:
    bea = _join(invitations, ws, "bea@example.com", password="bea's own password")
    team.remove(ws.owner, bea.principal_id)
    with pytest.raises(Unauthenticated):
        svc.people.authenticate_password("bea@example.com", "bea's own password")  # in no workspace now
    secret = _secret(invitations.invite(ws.owner, "bea@example.com", role="viewer", base_url=BASE).link)
    with pytest.raises(Unauthenticated):
        invitations.accept(secret, display_name="Bea", password="not her password")
    back = invitations.accept(secret, display_name="ignored", password="bea's own password")
    assert (back.principal_id, back.role) == (bea.principal_id, "viewer")


def test_a_mail_that_cannot_go_leaves_the_link_valid_and_says_why(svc, ws) -> None:
    with socket.socket() as probe:  # a port nothing listens on: the connection is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mailer = Mailer.from_config({"host": "127.0.0.1", "port": port, "from": "fastpad@example.com"})
    invitations = InvitationService(svc.store, svc.people, mailer=mailer, clock=svc.clock)
    issued = invitations.invite(ws.owner, "offline@example.com", base_url=BASE)
    assert issued.mailed is False and issued.mail_error and "Connection" in issued.mail_error
    assert invitations.open(_secret(issued.link)).email == "offline@example.com"


@pytest.mark.parametrize("config, field", [
    ("smtp.example.com", "mail"), ({"port": 25, "from": "a@example.com"}, "mail.host"),
    ({"host": "smtp.example.com", "from": "nobody"}, "mail.from"),
    ({"host": "smtp.example.com", "from": "a@example.com", "port": 0}, "mail.port"),
    ({"host": "smtp.example.com", "from": "a@example.com", "username": "u"}, "mail.username"),
])
def test_a_malformed_mail_setting_names_its_field(config, field) -> None:
    with pytest.raises(ValueError) as refused:
        Mailer.from_config(config)
    assert field in str(refused.value)
