"""Tokens: shown once, hash-only, always expiring, narrowing-only delegation, cascade revoke."""

from __future__ import annotations

import re
from datetime import timedelta

import psycopg
import pytest
from psycopg import sql

from fastpad.errors import NotFound, PolicyDenied, Unauthenticated, ValidationFailed
from fastpad.notes.provenance import Origin
from fastpad.security.principals import Principal
from fastpad.security.tokens import TOKEN_PREFIX, hash_secret, parse_duration


def all_database_text(store) -> bytes:
    """Every byte the database holds, as seen by its owner."""
    if store.backend == "sqlite":
        chunks = []
        for suffix in ("", "-wal"):
            try:
                chunks.append((store.path.parent / (store.path.name + suffix)).read_bytes())
            except FileNotFoundError:
                pass
        return b"".join(chunks)
    out = []
    with psycopg.connect(store.owner_url) as conn:
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        for table in tables:
            for (row,) in conn.execute(sql.SQL("SELECT t::text FROM {} t").format(sql.Identifier(table))):
                out.append(row)
    return "\n".join(out).encode()


def test_a_token_is_shown_once_and_stored_only_as_a_hash(svc, ws) -> None:
    plaintext, info = svc.tokens.create(ws.id, scopes=["notes:read"], label="ci")
    assert re.fullmatch(r"fpk_live_[0-9A-Za-z]{43}", plaintext)
    assert info.prefix == plaintext[:15] and info.prefix.startswith(TOKEN_PREFIX)
    assert plaintext not in repr(info.as_dict())
    svc.tokens.authenticate(plaintext)  # and it is usable
    dump = all_database_text(svc.store)
    secret = plaintext[len(TOKEN_PREFIX):]
    assert plaintext.encode() not in dump
    assert secret.encode() not in dump
    assert secret[10:30].encode() not in dump  # not even a piece beyond the display prefix
    assert hash_secret(plaintext).encode() in dump


def test_authenticate_gives_the_principal_the_token_stands_for(svc, ws) -> None:
    plaintext, info = svc.tokens.create(ws.id, scopes=["notes:read", "search:read"], label="bot")
    p = svc.tokens.authenticate(plaintext)
    assert isinstance(p, Principal)
    assert (p.workspace_id, p.kind, p.token_id, p.origin) == (ws.id, "agent", info.id, Origin.AGENT_WRITTEN)
    assert p.principal_id == info.agent_id and p.scopes == {"notes:read", "search:read"}
    assert (p.rate_limit_per_minute, p.rate_key, p.note_ids, p.auto_apply) == (120, f"token:{info.id}", None, False)
    person_token, person_info = svc.tokens.create(ws.id, scopes=["notes:read"], person_email=ws.owner_email.upper())
    q = svc.tokens.authenticate(person_token)
    assert (q.kind, q.principal_id, q.origin) == ("person", ws.owner_id, Origin.HUMAN_TYPED)
    assert (q.rate_limit_per_minute, q.rate_key) == (1200, f"person:{ws.owner_id}")
    assert person_info.kind == "person" and person_info.person_id == ws.owner_id
    # A custom rate limit.
    custom, _ = svc.tokens.create(ws.id, scopes=["notes:read"], rate_limit_per_minute=10)
    assert svc.tokens.authenticate(custom).rate_limit_per_minute == 10
    # A person's allowance is shared across their credentials, so no person token sets its own.
    with pytest.raises(ValidationFailed) as refused:
        svc.tokens.create(ws.id, scopes=["notes:read"], person_email=ws.owner_email, rate_limit_per_minute=10)
    assert refused.value.field_errors[0].code == "person_shared"


@pytest.mark.parametrize("presented", [
    "", "Bearer x", "fpk_live_short", "fpk_test_" + "a" * 43, "fpk_live_" + "a" * 43, None,
])
def test_unknown_and_malformed_tokens_are_unauthenticated(svc, ws, presented) -> None:
    with pytest.raises(Unauthenticated):
        svc.tokens.authenticate(presented)


def test_tokens_always_expire(svc, ws) -> None:
    plaintext, info = svc.tokens.create(ws.id, scopes=["notes:read"], expires_in=timedelta(hours=1))
    assert info.expires_at == svc.clock() + timedelta(hours=1)
    default_plain, default_info = svc.tokens.create(ws.id, scopes=["notes:read"])
    assert default_info.expires_at == svc.clock() + timedelta(days=30)
    svc.tokens.authenticate(plaintext)
    svc.clock.advance(hours=1)
    with pytest.raises(Unauthenticated, match="expired"):
        svc.tokens.authenticate(plaintext)
    svc.tokens.authenticate(default_plain)
    for bad in (timedelta(days=366), timedelta(0), timedelta(seconds=-1)):
        with pytest.raises(ValidationFailed):
            svc.tokens.create(ws.id, scopes=["notes:read"], expires_in=bad)
    svc.tokens.create(ws.id, scopes=["notes:read"], expires_in=timedelta(days=365))


def test_scopes_are_validated(svc, ws) -> None:
    with pytest.raises(ValidationFailed) as caught:
        svc.tokens.create(ws.id, scopes=["notes:read", "notes:admin", "root"])
    assert [e.code for e in caught.value.field_errors] == ["unknown_scope", "unknown_scope"]
    with pytest.raises(ValidationFailed):
        svc.tokens.create(ws.id, scopes=[])
    _, info = svc.tokens.create(ws.id, scopes="search:read, notes:read")
    assert info.scopes == ("notes:read", "search:read")


def test_a_note_set_is_concrete_note_ids_from_this_workspace(svc, ws) -> None:
    note = svc.notes.create(ws.owner, title="x")
    _, info = svc.tokens.create(ws.id, scopes=["notes:read"], note_ids=[note.id])
    assert info.note_ids == (note.id,)
    with pytest.raises(ValidationFailed) as caught:
        svc.tokens.create(ws.id, scopes=["notes:read"], note_ids=[note.id, "01JB2K7Q9XN4M8YV3TD0FZ5ERW"])
    assert caught.value.field_errors[0].code == "unknown_note"
    other = svc.workspace("other")
    foreign = svc.notes.create(other.owner, title="theirs")
    with pytest.raises(ValidationFailed):
        svc.tokens.create(ws.id, scopes=["notes:read"], note_ids=[foreign.id])
    with pytest.raises(ValidationFailed):
        svc.tokens.create(ws.id, scopes=["notes:read"], note_ids=["#Person"])


def test_a_delegated_token_only_narrows_its_parent(svc, ws) -> None:
    a, b = svc.notes.create(ws.owner, title="a"), svc.notes.create(ws.owner, title="b")
    _, parent = svc.tokens.create(ws.id, scopes=["notes:read", "search:read"], note_ids=[a.id],
                                  expires_in=timedelta(days=7), rate_limit_per_minute=60)
    # Narrower on every axis: fine. Unspecified note set and expiry inherit the parent's.
    _, child = svc.tokens.create(ws.id, scopes=["notes:read"], parent_token_id=parent.id)
    assert child.note_ids == (a.id,) and child.expires_at == parent.expires_at and child.parent_id == parent.id
    assert child.agent_id == parent.agent_id and child.rate_limit_per_minute == 60
    widenings = [
        dict(scopes=["notes:read", "notes:write"]),
        dict(scopes=["notes:read"], note_ids=[a.id, b.id]),
        dict(scopes=["notes:read"], expires_in=timedelta(days=8)),
        dict(scopes=["notes:read"], auto_apply=True),
        dict(scopes=["notes:read"], rate_limit_per_minute=61),
    ]
    for kwargs in widenings:
        with pytest.raises(PolicyDenied) as caught:
            svc.tokens.create(ws.id, parent_token_id=parent.id, **kwargs)
        assert caught.value.extra["parent_id"] == parent.id
    # A caller holding a token delegates from it, whatever it names.
    holder = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:read"])[0])
    with pytest.raises(PolicyDenied):
        svc.tokens.create(ws.id, scopes=["notes:read", "search:read"], minted_by=holder)
    _, grandchild = svc.tokens.create(ws.id, scopes=["notes:read"], minted_by=holder)
    assert grandchild.parent_id == holder.token_id
    # A delegation chain shares its root's rate bucket.
    assert svc.tokens.get(ws.id, grandchild.id).parent_id == holder.token_id


def test_revoking_a_token_revokes_every_descendant(svc, ws) -> None:
    root_plain, root = svc.tokens.create(ws.id, scopes=["notes:read", "search:read"])
    child_plain, child = svc.tokens.create(ws.id, scopes=["notes:read"], parent_token_id=root.id)
    grand_plain, grand = svc.tokens.create(ws.id, scopes=["notes:read"], parent_token_id=child.id)
    sibling_plain, sibling = svc.tokens.create(ws.id, scopes=["notes:read"])
    assert svc.tokens.authenticate(grand_plain).rate_key == f"token:{root.id}"

    assert svc.tokens.revoke(ws.id, child.id) == sorted([child.id, grand.id])
    for plain in (child_plain, grand_plain):
        with pytest.raises(Unauthenticated, match="revoked"):
            svc.tokens.authenticate(plain)
    svc.tokens.authenticate(root_plain)
    assert svc.tokens.revoke(ws.id, root.id) == [root.id]
    assert svc.tokens.revoke(ws.id, root.id) == []
    with pytest.raises(Unauthenticated):
        svc.tokens.authenticate(root_plain)
    svc.tokens.authenticate(sibling_plain)
    # A revoked parent cannot delegate.
    with pytest.raises(PolicyDenied):
        svc.tokens.create(ws.id, scopes=["notes:read"], parent_token_id=root.id)
    listed = {i.id: i for i in svc.tokens.list(ws.id)}
    assert all(listed[t].revoked_at is not None for t in (root.id, child.id, grand.id))
    assert listed[sibling.id].revoked_at is None
    assert [i.id for i in svc.tokens.list(ws.id, include_revoked=False)] == [sibling.id]
    with pytest.raises(NotFound):
        svc.tokens.revoke(ws.id, "01JB2K7Q9XN4M8YV3TD0FZ5ERW")


def test_an_agent_revokes_only_its_own_line(svc, ws) -> None:
    _, other = svc.tokens.create(ws.id, scopes=["notes:read"])
    agent = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:read"])[0])
    _, own_child = svc.tokens.create(ws.id, scopes=["notes:read"], minted_by=agent)
    with pytest.raises(NotFound):
        svc.tokens.revoke(ws.id, other.id, revoked_by=agent)
    assert svc.tokens.revoke(ws.id, own_child.id, revoked_by=agent) == [own_child.id]


def test_turns_accept_is_only_minted_by_a_person(svc, ws) -> None:
    # The operator counts as the owner person; a signed-in person may mint it for an agent.
    _, operator_minted = svc.tokens.create(ws.id, scopes=["notes:read", "turns:accept"])
    assert "turns:accept" in operator_minted.scopes
    svc.tokens.create(ws.id, scopes=["turns:accept"], minted_by=ws.owner)
    # A person's own session never holds it.
    assert "turns:accept" not in ws.owner.scopes
    # An agent can never mint it — not even by delegating from a token that has it.
    holder_plain, holder = svc.tokens.create(ws.id, scopes=["notes:read", "turns:accept"])
    agent = svc.tokens.authenticate(holder_plain)
    with pytest.raises(PolicyDenied) as caught:
        svc.tokens.create(ws.id, scopes=["turns:accept"], minted_by=agent)
    assert caught.value.extra == {"scope": "turns:accept"}
    with pytest.raises(PolicyDenied):
        svc.tokens.create(ws.id, scopes=["turns:accept"], parent_token_id=holder.id)
    # And no other scope implies it.
    everything_else = ["notes:read", "notes:propose", "notes:write", "notes:delete", "search:read", "graph:read",
                       "schema:write", "export"]
    p = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=everything_else)[0])
    assert not p.has("turns:accept")


def test_list_shows_everything_but_the_secret_and_tracks_last_use(svc, ws) -> None:
    plaintext, info = svc.tokens.create(ws.id, scopes=["notes:read"], label="laptop")
    assert svc.tokens.list(ws.id)[0].last_used_at is None
    svc.tokens.authenticate(plaintext)
    listed = svc.tokens.list(ws.id)
    assert [(i.id, i.label, i.kind, i.prefix) for i in listed] == [(info.id, "laptop", "agent", info.prefix)]
    assert listed[0].last_used_at == svc.clock()
    data = listed[0].as_dict()
    assert set(data) >= {"id", "label", "prefix", "scopes", "note_ids", "expires_at", "last_used_at", "revoked_at",
                         "parent_id", "kind"}
    assert plaintext not in str(data) and "hash" not in " ".join(data)


def test_a_token_naming_another_workspace_sees_nothing_there(svc, ws) -> None:
    other = svc.workspace("other")
    svc.notes.create(other.owner, title="theirs")
    plaintext, _ = svc.tokens.create(ws.id, scopes=["notes:read", "notes:write"])
    p = svc.tokens.authenticate(plaintext, workspace_id=other.id)
    assert p.workspace_id == other.id and p.note_ids == frozenset()
    assert svc.notes.list(p).items == []
    assert not p.has("notes:write")
    # Tokens of one workspace are invisible from another.
    assert svc.tokens.list(other.id) == []


def test_a_person_token_is_for_members_and_dies_with_the_membership(svc, ws) -> None:
    with pytest.raises(ValidationFailed):
        svc.tokens.create(ws.id, scopes=["notes:read"], person_email="stranger@example.com")
    member = svc.people.create_person(ws.id, "member@example.com", password="long enough")
    plaintext, _ = svc.tokens.create(ws.id, scopes=["notes:read"], person_email="member@example.com")
    assert svc.tokens.authenticate(plaintext).principal_id == member.id
    svc.people.remove_member(ws.id, member.id)
    with pytest.raises(Unauthenticated):
        svc.tokens.authenticate(plaintext)


def test_parse_duration() -> None:
    assert parse_duration("7d") == timedelta(days=7)
    assert parse_duration("90s") == timedelta(seconds=90)
    with pytest.raises(ValidationFailed):
        parse_duration("forever")
