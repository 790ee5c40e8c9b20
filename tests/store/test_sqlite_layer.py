"""SQLite has no row-level security, so the rule lives in the data-access layer:
every statement it runs against a workspace-scoped table filters on workspace_id.

This test does not trust a reading of the code: it traces every statement
SQLite actually executes while the services do a bit of everything, and checks
each one. The only statements allowed without a workspace filter are the
pre-workspace lookups, named here.
"""

from __future__ import annotations

import re

import pytest

from fastpad.knowledge.graph import GraphService
from fastpad.notes import Block
from fastpad.store import IdempotencyRecord
from tests.helpers_store import edit_ops, feed_rows, lexical, make_services

SCOPED = {"workspaces", "workspace_members", "agents", "tokens", "web_sessions", "notes", "note_snapshots",
          "note_updates", "blocks",
          "links", "note_titles", "supersessions", "idempotency_keys", "change_feed",
          "memory_topics",
          "chunks", "chunk_vectors",
          "turns", "turn_sources", "source_retractions", "turn_events", "session_reads",
          "type_defs", "note_type_tags", "property_values", "collections",
          "capture_receipts",
          "imports", "import_ledger", "import_items", "attachments",
          "oauth_grants", "oauth_refresh_tokens"}
# Statements that run before a workspace is known, each filtered by something else exact.
PRE_WORKSPACE = [
    re.compile(r"^SELECT workspace_id, subject_id FROM credential_index WHERE kind = .* AND hash = "),
    re.compile(r"^SELECT id, password_hash FROM people WHERE email = "),
    re.compile(r"^SELECT w\.id, w\.name, w\.created_at, m\.role FROM workspace_members m JOIN workspaces w .* WHERE m\.person_id = "),
]
# Statements that read no row of any workspace: only the blocks table's rowid
# span, which the lexical ranking splits to score in parallel, and whether any
# workspace but this one exists (a yes or no, never which: the ranking leaves out
# the workspace's own scope token when it is alone) — search_index.py.
ROW_FREE = [re.compile(r"^SELECT \(SELECT min\(rid\) FROM blocks\), \(SELECT max\(rid\) FROM blocks\)$"),
            re.compile(r"^SELECT NOT EXISTS \(SELECT 1 FROM workspaces WHERE id <> '[0-7][0-9A-HJKMNP-TV-Z]{25}'\)$")]
_FILTER = re.compile(r"workspace_id = '[0-7][0-9A-HJKMNP-TV-Z]{25}'")
_TABLE = re.compile(r"\b(?:FROM|JOIN|UPDATE|INTO)\s+(\w+)", re.I)


def test_every_workspace_scoped_statement_carries_the_workspace_filter(sqlite_store, fast_hasher, tmp_path) -> None:
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
    graph = GraphService(sqlite_store, clock=svc.clock)
    linked = svc.notes.create(ws.owner, title="Linked", blocks=[Block(None, "paragraph", "[[Title]] [[Later]]")])
    svc.notes.rename(ws.owner, note.id, "Renamed")
    bot = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:write"])[0])
    edge = graph.create_link(bot, source_note_id=linked.id, type="cites", target_title="Renamed")
    graph.promote(ws.owner, edge.id)
    graph.supersede(ws.owner, note.id, by=linked.id)
    graph.successor_chain(ws.owner, note.id)
    graph.neighbors(ws.owner, linked.id)
    graph.links(ws.owner, linked.id)
    graph.delete_link(ws.owner, edge.id)
    exercise_feed_history_memory_and_purge(svc, ws, note)
    exercise_search(svc, ws, note)
    exercise_review(svc, ws)
    exercise_types_query_and_collections(svc, ws)
    exercise_capture_and_device_login(svc, ws)
    exercise_imports(svc, ws, tmp_path)
    exercise_oauth(svc, ws)
    with sqlite_store.write(ws.id) as tx:
        lexical(tx, "words")
        feed_rows(tx)
        tx.op_log(note.id)
        tx.idempotency.put("k", "key", IdempotencyRecord("h", 200, {}, b""))
        tx.idempotency.get("k", "key")

    checked = 0
    for statement in statements:
        flat = " ".join(statement.split())
        if flat.startswith(("--", "BEGIN", "COMMIT", "ROLLBACK", "PRAGMA")):
            continue
        tables = {t.lower() for t in _TABLE.findall(flat)}
        if not tables & SCOPED:
            continue
        checked += 1
        if any(p.search(flat) for p in PRE_WORKSPACE + ROW_FREE):
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


def exercise_feed_history_memory_and_purge(svc, ws, note) -> None:
    """The change feed (whole workspace and a note set), block history, memory topics and the purge."""
    import asyncio
    from datetime import timedelta

    from fastpad.knowledge.changes import ChangeFeedService
    from fastpad.knowledge.history import HistoryService
    from fastpad.knowledge.memory import MemoryService
    from fastpad.knowledge.trash import TrashService

    feed = ChangeFeedService(svc.store, recheck_s=0.01)
    feed.changes(ws.owner)
    scoped, _ = svc.tokens.create(ws.id, scopes=["notes:read"], note_ids=[note.id])
    feed.changes(svc.tokens.authenticate(scoped), limit=1)
    asyncio.run(feed.long_poll(ws.owner, feed.changes(ws.owner).next_cursor, wait_ms=20))
    HistoryService(svc.store).block(ws.owner, note.id, note.blocks[0]["id"])
    memory = MemoryService(svc.store, svc.notes)
    memory.designate(ws.owner, note.id, name="Topic")
    memory.index(ws.owner)
    memory.topic(ws.owner, "topic")
    memory.undesignate(ws.owner, note.id)
    doomed = svc.notes.create(ws.owner, title="doomed")
    svc.notes.trash(ws.owner, doomed.id)
    assert TrashService(svc.store, retention=timedelta(0), clock=svc.clock).purge_expired(ws.id).purged == [doomed.id]


def exercise_search(svc, ws, note) -> None:
    """Chunks in the write path, the embedding worker (backfill, embed, sweep), and every strategy's reads."""
    from fastpad.search.service import SearchService
    from fastpad.search.vectors import StoredVectors
    from fastpad.search.worker import EmbeddingWorker
    from tests.search.helpers import WordHashProvider

    vectors = StoredVectors(svc.store, WordHashProvider())
    worker = EmbeddingWorker(svc.store, vectors)
    service = SearchService(svc.store, vectors=vectors, clock=svc.clock)
    assert worker.catch_up(ws.id, sweep=True) > 0
    agent = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["search:read"], note_ids=[note.id])[0])
    service.search(ws.owner, "words Linked", include_archived=True)
    service.search(agent, '"new words" renamed')
    svc.notes.trash(ws.owner, note.id)
    worker.catch_up(ws.id, sweep=True)


def exercise_review(svc, ws) -> None:
    """Proposals: sessions, handles, propose (auto-apply too), review, accept, reject, revert, activity."""
    from fastpad.review.service import ReviewService

    review = ReviewService(svc.store, b"r" * 32, svc.notes, clock=svc.clock)
    source = svc.notes.create(ws.owner, title="Source", blocks=[Block(None, "paragraph", "Cited words.")])
    target = svc.notes.create(ws.owner, title="Target", blocks=[Block(None, "paragraph", "Old."),
                                                                Block(None, "paragraph", "Kept.")])
    for auto_apply in (False, True):
        agent = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:read", "notes:propose"],
                                                          auto_apply=auto_apply)[0])
        session = review.open_session(agent)
        cited = review.fetch_with_handles(agent, session, source.id).blocks[0].id
        fetched = review.fetch_with_handles(agent, session, target.id)
        turn = review.propose(agent, session, target.id, [
            {"op": "replace_block", "handle": fetched.blocks[0].handle, "text": "New.", "source_block_ids": [cited]},
        ], fetched.frontier, "key")
        review.list(agent)
        review.review(ws.owner, turn.id)
    review.mark_reviewed(ws.owner, turn.id)
    review.revert(ws.owner, turn.id)
    fetched = review.fetch_with_handles(agent, session, target.id)
    turn = review.propose(agent, session, target.id, [{"op": "delete", "handle": fetched.blocks[1].handle}],
                          fetched.frontier, "other")
    review.revert(ws.owner, turn.id)
    person_session = review.open_session(ws.owner)
    fetched = review.fetch_with_handles(ws.owner, person_session, target.id)
    turn = review.propose(ws.owner, person_session, target.id, [
        {"op": "insert_after", "handle": None, "text": "Mine."}], fetched.frontier, "p")
    review.accept(ws.owner, turn.id)
    fetched = review.fetch_with_handles(ws.owner, person_session, target.id)
    turn = review.propose(ws.owner, person_session, target.id, [
        {"op": "insert_after", "handle": None, "text": "Again."}], fetched.frontier, "q")
    review.reject(ws.owner, turn.id)
    review.activity(ws.owner)
    review.audit_log(ws.owner)
    review.accepted_from(ws.owner, cited)
    review.retract_source(ws.owner, cited)


def exercise_types_query_and_collections(svc, ws) -> None:
    """Type definitions, typed notes (one and bulk), both query strategies, collections."""
    from fastpad.knowledge.property_index import load_schema
    from fastpad.knowledge.query import parse_definition
    from fastpad.store.typed_query import RowQuery
    from tests.services.typed_helpers import Typed

    typed = Typed.over(svc)
    typed.types.define(ws.owner, name="Book", properties=[{"name": "pages", "kind": "number"}])
    typed.types.update(ws.owner, "Book", properties=[{"name": "pages", "kind": "number"},
                                                     {"name": "genre", "kind": "select", "options": ["sf"]}])
    book = svc.notes.create(ws.owner, title="Dune").id
    typed.notes.apply(ws.owner, book, add=["Book"], properties={"Book.pages": 412, "Book.genre": "sf"})
    typed.notes.apply_many(ws.owner, [{"note_id": book, "properties": {"Book.pages": 413}}])
    query = {"type": "Book", "filters": [{"property": "Book.genre", "op": "eq", "value": "sf"}],
             "sort": [{"property": "Book.pages", "direction": "desc"}]}
    with svc.store.read(ws.id) as tx:
        parsed = parse_definition(query, load_schema(tx))
        for strategy in ("walk", "candidates"):
            tx.typed.query(RowQuery(parsed.type_names, parsed.filters, parsed.keys, ((413.0,), book),
                                    types_on_every_note=parsed.types_on_every_note),
                           strategy=strategy)
    view = typed.collections.create(ws.owner, name="Books", query=query)
    typed.collections.rows(ws.owner, view.row.id, limit=1)
    typed.collections.update(ws.owner, view.row.id, name="All books")
    typed.collections.list(ws.owner)
    typed.collections.delete(ws.owner, view.row.id)


def exercise_capture_and_device_login(svc, ws) -> None:
    """A capture and its replay (receipts), and a device login from start to credential (tokens it mints)."""
    from fastpad.knowledge.capture import CaptureService
    from fastpad.security.device import DeviceLoginService

    captures = CaptureService(svc.store, svc.notes, clock=svc.clock)
    captures.capture(ws.owner, text="captured words", key="capture-1")
    captures.capture(ws.owner, text="captured words", key="capture-1")
    logins = DeviceLoginService(svc.store, svc.tokens, clock=svc.clock)
    started = logins.start(client_name="trace")
    logins.pending(started.user_code)
    logins.decide(ws.owner, started.user_code, approve=True)
    logins.poll(started.device_code)


def exercise_oauth(svc, ws) -> None:
    """An OAuth client approved, its code exchanged (a replay revokes), a refresh, its reuse, a revocation."""
    from fastpad.security.oauth import OAuthError, OAuthService, pkce_challenge

    oauth = OAuthService(svc.store, svc.tokens, base_url="http://127.0.0.1:8765", clock=svc.clock)
    callback = "http://127.0.0.1:8000/callback"
    client = oauth.register({"redirect_uris": [callback], "grant_types": ["authorization_code", "refresh_token"]})
    for _ in range(2):  # the second approval finds the first one's agent
        request = oauth.authorization_request(*oauth.redirect_target(client.client_id, callback), {
            "response_type": "code", "code_challenge_method": "S256", "code_challenge": pkce_challenge("v" * 43)})
        oauth.consent(ws.owner, request)
        code = oauth.approve(ws.owner, request, request.scopes)
        exchange = dict(client_id=client.client_id, code=code, redirect_uri=callback, code_verifier="v" * 43)
        issued = oauth.exchange_code(**exchange)
        renewed = oauth.refresh(client_id=client.client_id, refresh_token=issued.refresh_token)
        oauth.revoke(client_id=client.client_id, token=renewed.access_token)
        with pytest.raises(OAuthError):
            oauth.refresh(client_id=client.client_id, refresh_token=renewed.refresh_token)
        with pytest.raises(OAuthError):
            oauth.exchange_code(**exchange)


def exercise_imports(svc, ws, tmp_path) -> None:
    """An import run here (ids, titles, attachments, a Notion type, the ledger), a retry, and an upload
    from announcement to the background run, its status, ledger pages and a cancel."""
    from fastpad.importers.service import ImportService
    from fastpad.knowledge.attachments import AttachmentService
    from fastpad.knowledge.types import TypeService
    from tests.importers.fixtures import NOTION, OBSIDIAN, write_tree, zip_tree

    imports = ImportService(svc.store, svc.notes, TypeService(svc.store, clock=svc.clock),
                            spool_dir=tmp_path / "spool", clock=svc.clock)
    vault = write_tree(tmp_path / "vault", OBSIDIAN)
    done = imports.run(ws.owner, vault)
    imports.run(ws.owner, vault)
    imports.run(ws.owner, write_tree(tmp_path / "notion", NOTION))
    page = imports.ledger(ws.owner, done.id, limit=2)
    imports.ledger(ws.owner, done.id, cursor=page.next_cursor)
    attachment = next(r for r in page.items + imports.ledger(ws.owner, done.id, limit=100).items
                      if r.status == "stored").detail.rsplit("/", 1)[-1]
    AttachmentService(svc.store).get(ws.owner, attachment)
    data = zip_tree(tmp_path / "up.zip", {"a.md": "uploaded"}).read_bytes()
    upload = imports.begin_upload(ws.owner, size=len(data), label="up.zip")
    imports.append(ws.owner, upload.id, offset=0, data=data[:10])
    imports.append(ws.owner, upload.id, offset=10, data=data[10:])
    imports.join(upload.id, timeout=30)
    imports.status(ws.owner, upload.id)
    waiting = imports.begin_upload(ws.owner, size=10)
    imports.cancel(ws.owner, waiting.id)
