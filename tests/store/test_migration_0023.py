"""Migration 23 on a database that already holds people and credentials: SQLite rebuilds the
credential index and the members table to widen their CHECKs, so a token minted before still
resolves, the owner keeps their role, and afterwards a member can be made a viewer and an
invitation resolves through the same index."""

from __future__ import annotations

from fastpad.security.invitations import InvitationService
from fastpad.security.team import TeamService
from tests.helpers_store import make_services


def test_people_and_tokens_from_before_version_23_survive_it(make_store, fast_hasher) -> None:
    old = make_store(migrate_to=22)
    url = make_store.last_url()
    svc = make_services(old, fast_hasher)
    ws = svc.workspace()
    bea = svc.people.create_person(ws.id, "bea@example.com", password="a long enough pass")
    token, _ = svc.tokens.create(ws.id, scopes=["notes:read", "notes:write"], person_email="bea@example.com")
    old.close()

    store = make_store(url=url)
    svc = make_services(store, fast_hasher)
    assert svc.tokens.authenticate(token).role == "member"
    assert svc.people.principal_for(ws.id, ws.owner_id).role == "owner"
    TeamService(store, svc.people).set_role(ws.owner, bea.id, "viewer")
    assert svc.tokens.authenticate(token).role == "viewer"
    session, _ = svc.people.create_session(ws.owner, user_agent="Firefox")
    assert svc.people.session_principal(session).principal_id == ws.owner_id
    invitations = InvitationService(store, svc.people, clock=svc.clock)
    link = invitations.invite(ws.owner, "carl@example.com", base_url="http://x").link
    assert invitations.open(link.rsplit("/", 1)[1]).email == "carl@example.com"
