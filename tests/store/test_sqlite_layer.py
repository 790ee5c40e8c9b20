"""SQLite has no row-level security, so the rule lives in the data-access layer:
every statement it runs against a workspace-scoped table filters on workspace_id.

This test does not trust a reading of the code: it traces every statement
SQLite actually executes while the services do a bit of everything, and checks
each one. The only statements allowed without a workspace filter are the
pre-workspace lookups, named here.
"""

from __future__ import annotations

import re

from fastpad.store import IdempotencyRecord
from tests.helpers_store import edit_ops, make_services

SCOPED = {"workspaces", "workspace_members", "agents", "tokens", "web_sessions", "notes", "note_updates", "blocks",
          "links", "idempotency_keys", "change_feed"}
# Statements that run before a workspace is known, each filtered by something else exact.
PRE_WORKSPACE = [
    re.compile(r"^SELECT workspace_id, subject_id FROM credential_index WHERE kind = .* AND hash = "),
    re.compile(r"^SELECT id, password_hash FROM people WHERE email = "),
    re.compile(r"^SELECT w\.id, w\.name, w\.created_at, m\.role FROM workspace_members m JOIN workspaces w .* WHERE m\.person_id = "),
]
_FILTER = re.compile(r"workspace_id = '[0-7][0-9A-HJKMNP-TV-Z]{25}'")
_TABLE = re.compile(r"\b(?:FROM|JOIN|UPDATE|INTO)\s+(\w+)", re.I)


def test_every_workspace_scoped_statement_carries_the_workspace_filter(sqlite_store, fast_hasher) -> None:
    statements: list[str] = []
    for conn in sqlite_store._all:  # noqa: SLF001 - tracing the real connections
        conn.set_trace_callback(statements.append)
    original_connect = sqlite_store._connect

    def traced_connect():
        conn = original_connect()
        conn.set_trace_callback(statements.append)
        return conn

    sqlite_store._connect = traced_connect  # type: ignore[method-assign]

    svc = make_services(sqlite_store, fast_hasher)
    ws = svc.workspace()
    other = svc.workspace("other")
    note = svc.notes.create(ws.owner, markdown="# Title\n\nSome words.\n")
    ops, frontier = edit_ops(sqlite_store, ws.id, note.id, lambda d: d.replace_text(note.blocks[1]["id"], "New words"))
    svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id="1", expected_frontier=frontier)
    svc.notes.list(ws.owner, limit=1)
    svc.notes.markdown(ws.owner, note.id)
    svc.notes.archive(ws.owner, note.id)
    svc.notes.trash(ws.owner, note.id)
    svc.notes.restore(ws.owner, note.id)
    plaintext, info = svc.tokens.create(ws.id, scopes=["notes:read"], note_ids=[note.id])
    svc.tokens.create(ws.id, scopes=["notes:read"], parent_token_id=info.id)
    svc.tokens.authenticate(plaintext)
    svc.tokens.list(ws.id)
    svc.tokens.revoke(ws.id, info.id)
    svc.people.create_person(other.id, ws.owner_email)
    principal = svc.people.authenticate_password(ws.owner_email, "correct horse")
    session, _ = svc.people.create_session(principal)
    svc.people.session_principal(session, workspace_id=other.id)
    svc.people.end_session(session)
    with sqlite_store.write(ws.id) as tx:
        tx.lexical_search("words")
        tx.changes()
        tx.op_log(note.id)
        tx.idempotency_put("k", "key", IdempotencyRecord("h", 200, {}, b""))
        tx.idempotency_get("k", "key")

    checked = 0
    for statement in statements:
        flat = " ".join(statement.split())
        if flat.startswith(("--", "BEGIN", "COMMIT", "ROLLBACK", "PRAGMA")):
            continue
        tables = {t.lower() for t in _TABLE.findall(flat)}
        if not tables & SCOPED:
            continue
        checked += 1
        if any(p.search(flat) for p in PRE_WORKSPACE):
            continue
        if tables <= {"workspaces"}:
            assert re.search(r"WHERE id = |INSERT INTO workspaces \(id,", flat), flat
            continue
        if flat.startswith("INSERT"):
            columns = flat.split("VALUES", 1)[0]
            assert "workspace_id" in columns, f"insert without its workspace: {flat}"
        else:
            # The trace shows the bound values: the filter names an actual workspace id.
            assert _FILTER.search(flat), f"no workspace filter: {flat}"
    assert checked > 40
