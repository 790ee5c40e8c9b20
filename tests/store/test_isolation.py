"""One workspace never sees another's data; on PostgreSQL, RLS fails closed.

The first half runs on both backends through the data-access layer (on SQLite
that layer *is* the isolation rule). The second half talks raw SQL to
PostgreSQL as the application role, to show the database itself refuses.
"""

from __future__ import annotations

import psycopg
import pytest

from fastpad.errors import NotFound
from fastpad.knowledge.comments import CommentService
from fastpad.notes import Block
from fastpad.notes.mentions import person_mention
from fastpad.store import Actor, NoteWrite
from fastpad.store.audit import AuditFilter
from tests.helpers_store import feed_rows, lexical, make_services

WORKSPACE_TABLES = [
    "workspaces", "workspace_members", "agents", "tokens", "web_sessions", "notes", "note_snapshots", "note_updates",
    "blocks",
    "links", "note_titles", "supersessions", "idempotency_keys", "change_feed",
    "memory_topics",
    "chunks", "chunk_vectors",
    "turns", "turn_sources", "source_retractions", "turn_events", "session_reads",
    "type_defs", "note_type_tags", "property_values", "collections",
    "capture_receipts",
    "imports", "import_ledger", "import_items", "attachments",
    "oauth_grants", "oauth_refresh_tokens",
    "audit_log",
    "invitations",
    "mentions",
    "comments",
]


@pytest.fixture
def two(store, fast_hasher):
    svc = make_services(store, fast_hasher)
    a, b = svc.workspace("A"), svc.workspace("B")
    note_a = svc.notes.create(a.owner, title="A's", blocks=[Block(None, "paragraph", "shared word alpha")])
    note_b = svc.notes.create(b.owner, title="B's", blocks=[Block(None, "paragraph", "shared word beta")])
    svc.tokens.create(a.id, scopes=["notes:read"], label="a-token")
    svc.tokens.create(b.id, scopes=["notes:read"], label="b-token")
    return svc, a, b, note_a, note_b


def test_a_workspace_transaction_sees_only_its_own_rows(two) -> None:
    svc, a, b, note_a, note_b = two
    with svc.store.read(a.id) as tx:
        assert tx.note(note_b.id) is None
        assert tx.note(note_a.id) is not None
        assert [n.id for n in tx.list_notes(include_archived=True, include_trashed=True)] == [note_a.id]
        assert tx.blocks(note_b.id) == []
        assert tx.op_log(note_b.id) == []
        assert {c.note_id for c in feed_rows(tx)} == {note_a.id}
        assert [h.note_id for h in lexical(tx, "shared word")] == [note_a.id]
        assert tx.existing_note_ids([note_a.id, note_b.id]) == {note_a.id}
        assert [t.label for t in tx.tokens()] == ["a-token"]
        assert [e.details["label"] for e in tx.audit.page(AuditFilter(), before_seq=None, limit=50)] == ["a-token"]
        assert [p.id for p, _ in tx.members()] == [a.owner_id]
        assert tx.person(b.owner_id) is None
        assert tx.workspace().id == a.id


def test_a_write_aimed_at_another_workspace_note_finds_nothing(two) -> None:
    svc, a, b, note_a, note_b = two
    with pytest.raises(NotFound):
        with svc.store.write(a.id) as tx:
            tx.write_note(NoteWrite(note_id=note_b.id, kind="archive", at=svc.clock(),
                                    actor=Actor("person", a.owner_id, None, "human_typed"),
                                    expected_frontier=note_b.frontier, archived_at=svc.clock()))
    assert svc.notes.get(b.owner, note_b.id).archived is False


def test_services_never_cross_workspaces(two) -> None:
    svc, a, b, note_a, note_b = two
    with pytest.raises(NotFound):
        svc.notes.get(a.owner, note_b.id)
    with pytest.raises(NotFound):
        svc.notes.trash(a.owner, note_b.id)
    assert [n.id for n in svc.notes.list(a.owner).items] == [note_a.id]
    # Naming a workspace you are not in: nothing, never someone else's notes.
    outsider = svc.people.switch_workspace(a.owner, b.id)
    assert outsider.workspace_id == b.id
    assert svc.notes.list(outsider).items == []
    with pytest.raises(NotFound):
        svc.notes.get(outsider, note_b.id)


def test_comments_never_cross_workspaces(two) -> None:
    svc, a, b, note_a, note_b = two
    comments = CommentService(svc.store)
    thread = comments.create(b.owner, note_b.id, block_id=note_b.blocks[0]["id"], body="B's remark")
    with svc.store.read(a.id) as tx:
        assert tx.comments.get(thread.first.id) is None and tx.comments.in_note(note_b.id) == []
    for attempt in (lambda: comments.threads(a.owner, note_b.id),
                    lambda: comments.create(a.owner, note_b.id, thread_id=thread.first.id, body="A's reply"),
                    lambda: comments.resolve(a.owner, thread.first.id, resolved=True)):
        with pytest.raises(NotFound):
            attempt()
    assert [t.resolved for t in comments.threads(b.owner, note_b.id)] == [False]


def test_no_transaction_without_a_workspace(store) -> None:
    for bad in (None, ""):
        with pytest.raises(ValueError):
            with store.read(bad):  # type: ignore[arg-type]
                pass


# ---------------------------------------------------------------------- PostgreSQL: the database refuses


@pytest.fixture
def pg_two(pg_store, fast_hasher):
    svc = make_services(pg_store, fast_hasher)
    a, b = svc.workspace("A"), svc.workspace("B")
    bea = svc.people.create_person(a.id, "bea@example.com", display_name="Bea")  # mentioned: a row in `mentions`
    note_a = svc.notes.create(a.owner, blocks=[Block(None, "paragraph", f"alpha {person_mention(bea.id, 'Bea')}")])
    note_b = svc.notes.create(b.owner, blocks=[Block(None, "paragraph", "beta")])
    CommentService(pg_store).create(a.owner, note_a.id, block_id=note_a.blocks[0]["id"], body="a row in `comments`")
    svc.tokens.create(a.id, scopes=["notes:read"])
    session, _ = svc.people.create_session(a.owner)
    return svc, a, b, note_a, note_b


def test_postgres_raw_query_without_a_workspace_returns_zero_rows(pg_two) -> None:
    svc, a, b, note_a, note_b = pg_two
    store = svc.store
    # The rows exist (the owner — a superuser here — sees them)...
    with psycopg.connect(store.owner_url) as owner:
        assert owner.execute("SELECT count(*) FROM notes").fetchone()[0] == 2
        assert owner.execute("SELECT count(*) FROM mentions").fetchone()[0] == 1
        assert owner.execute("SELECT count(*) FROM comments").fetchone()[0] == 1
    # ...but the application role, without app.workspace_id, sees none of them, in any table.
    with psycopg.connect(store.app_conninfo, autocommit=True) as app:
        assert app.execute("SELECT current_user").fetchone()[0] == store.app_role
        for table in WORKSPACE_TABLES + ["people"]:
            assert app.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
        # An empty setting is no better than none.
        with app.transaction():
            app.execute("SELECT set_config('app.workspace_id', '', true)")
            assert app.execute("SELECT count(*) FROM notes").fetchone()[0] == 0
        # Acting for A: A's rows only.
        with app.transaction():
            app.execute("SELECT set_config('app.workspace_id', %s, true)", (a.id,))
            assert [r[0] for r in app.execute("SELECT id FROM notes")] == [note_a.id]
            assert app.execute("SELECT count(*) FROM blocks WHERE note_id = %s", (note_b.id,)).fetchone()[0] == 0
        # The setting was transaction-local: gone again.
        assert app.execute("SELECT count(*) FROM notes").fetchone()[0] == 0


def test_postgres_refuses_writes_outside_the_workspace(pg_two) -> None:
    svc, a, b, note_a, note_b = pg_two
    with psycopg.connect(svc.store.app_conninfo, autocommit=True) as app:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # no workspace: WITH CHECK fails
            app.execute("INSERT INTO change_feed (workspace_id, seq, note_id, kind, at) VALUES (%s, 99, 'x', 'k', now())",
                        (a.id,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # acting for A, writing B's row
            with app.transaction():
                app.execute("SELECT set_config('app.workspace_id', %s, true)", (a.id,))
                app.execute("INSERT INTO change_feed (workspace_id, seq, note_id, kind, at) VALUES (%s, 99, 'x', 'k', now())",
                            (b.id,))
        with app.transaction():
            app.execute("SELECT set_config('app.workspace_id', %s, true)", (a.id,))
            assert app.execute("UPDATE notes SET title = 'pwned' WHERE id = %s", (note_b.id,)).rowcount == 0
            assert app.execute("DELETE FROM blocks").rowcount == 1  # A's one block, never B's
            raise psycopg.Rollback()
    assert svc.notes.get(b.owner, note_b.id).title == ""
    assert len(svc.notes.get(b.owner, note_b.id).blocks) == 1
    assert len(svc.notes.get(a.owner, note_a.id).blocks) == 1


def test_postgres_credential_index_is_not_readable_by_the_application(pg_two) -> None:
    svc, *_ = pg_two
    with psycopg.connect(svc.store.app_conninfo, autocommit=True) as app:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            app.execute("SELECT * FROM credential_index")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            app.execute("SELECT * FROM fastpad_settings")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            app.execute("SELECT * FROM schema_migrations")
        # The narrow path: an exact hash in, (workspace, id) out; a wrong hash, nothing.
        assert app.execute("SELECT * FROM fastpad_resolve_credential('token', 'nope')").fetchall() == []


def test_postgres_every_workspace_table_has_forced_rls_and_the_app_role_is_powerless(pg_store) -> None:
    with psycopg.connect(pg_store.owner_url) as owner:
        tables = [r[0] for r in owner.execute(
            "SELECT DISTINCT c.table_name FROM information_schema.columns c JOIN information_schema.tables t"
            " ON t.table_name = c.table_name AND t.table_schema = c.table_schema"
            " WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'"
            " AND c.column_name = 'workspace_id' AND c.table_name NOT IN ('credential_index', 'published_notes')"
        )]
        assert set(tables) | {"workspaces"} == set(WORKSPACE_TABLES)
        # The two lookups made before a workspace is known run as the owner through a SECURITY
        # DEFINER function, so their tables' row security is enabled but not forced; the app
        # role still sees only its own workspace's published notes through the policy.
        for table in ("credential_index", "published_notes"):
            enabled, forced = owner.execute(
                "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = %s", (table,)).fetchone()
            assert (enabled, forced) == (True, False), table
        for table in WORKSPACE_TABLES:
            enabled, forced, policies = owner.execute(
                "SELECT c.relrowsecurity, c.relforcerowsecurity,"
                " (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid)"
                " FROM pg_class c WHERE c.relname = %s AND c.relnamespace = 'public'::regnamespace", (table,)
            ).fetchone()
            assert (enabled, forced, policies > 0) == (True, True, True), table
        role = owner.execute(
            "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = %s",
            (pg_store.app_role,),
        ).fetchone()
        assert role == (False, False, False, False)
        owned = owner.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = %s",
            (pg_store.app_role,),
        ).fetchone()[0]
        assert owned == 0
