"""`oauth_clients` is read before any workspace is known: every statement names its client by id, and on
PostgreSQL forced row-level security enforces exactly that. The grants and refresh tokens are workspace
tables (their filters are checked with every other table's in test_sqlite_layer / test_isolation)."""

from __future__ import annotations

import re

import psycopg
import pytest

from fastpad.security.oauth import OAuthService, pkce_challenge
from tests.helpers_store import make_services

CALLBACK = "http://127.0.0.1:8000/callback"
_BY_ID = re.compile(r"WHERE client_id = 'fpc_[A-Za-z0-9_-]+'")
_SWEEP = re.compile(r"^DELETE FROM oauth_clients WHERE approved_at IS NULL AND created_at < '")


def test_every_client_statement_names_its_client(sqlite_store, fast_hasher) -> None:
    statements: list[str] = []
    original_connect = sqlite_store._connect

    def traced_connect():
        conn = original_connect()
        conn.set_trace_callback(statements.append)
        return conn

    for conn in sqlite_store._all:  # noqa: SLF001 - tracing the real connections
        conn.set_trace_callback(statements.append)
    sqlite_store._connect = traced_connect  # type: ignore[method-assign]
    svc = make_services(sqlite_store, fast_hasher)
    ws = svc.workspace()
    oauth = OAuthService(svc.store, svc.tokens, base_url="http://127.0.0.1:8765", clock=svc.clock)
    client = oauth.register({"redirect_uris": [CALLBACK], "grant_types": ["authorization_code", "refresh_token"]})
    request = oauth.authorization_request(*oauth.redirect_target(client.client_id, CALLBACK), {
        "response_type": "code", "code_challenge_method": "S256", "code_challenge": pkce_challenge("v" * 43)})
    code = oauth.approve(ws.owner, request, request.scopes)
    issued = oauth.exchange_code(client_id=client.client_id, code=code, redirect_uri=CALLBACK, code_verifier="v" * 43)
    oauth.refresh(client_id=client.client_id, refresh_token=issued.refresh_token)
    oauth.revoke(client_id=client.client_id, token=issued.refresh_token)
    touching = [" ".join(s.split()) for s in statements if "oauth_clients" in s]
    assert len(touching) >= 6
    for flat in touching:
        assert flat.startswith("INSERT") or _BY_ID.search(flat) or _SWEEP.search(flat), flat


def test_postgres_shows_a_transaction_only_the_client_it_names(pg_store, fast_hasher) -> None:
    svc = make_services(pg_store, fast_hasher)
    oauth = OAuthService(svc.store, svc.tokens, base_url="http://127.0.0.1:8765", clock=svc.clock)
    first = oauth.register({"redirect_uris": [CALLBACK]})
    second = oauth.register({"redirect_uris": [CALLBACK]})
    with psycopg.connect(pg_store.app_conninfo, autocommit=True) as app:
        with app.transaction():
            assert app.execute("SELECT count(*) FROM oauth_clients").fetchone()[0] == 0, "names nothing: sees nothing"
        with app.transaction():
            app.execute("SELECT set_config('app.oauth_client_id', %s, true)", (first.client_id,))
            assert app.execute("SELECT client_id FROM oauth_clients").fetchall() == [(first.client_id,)]
            changed = app.execute("UPDATE oauth_clients SET client_name = 'renamed'").rowcount
            assert changed == 1, "an unfiltered update still reaches only the named client"
        with app.transaction():
            app.execute("SELECT set_config('app.oauth_client_id', %s, true)", (second.client_id,))
            assert app.execute("SELECT client_name FROM oauth_clients").fetchall() == [("Unnamed client",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            with app.transaction():
                app.execute("SELECT set_config('app.oauth_client_id', 'fpc_mine', true)")
                app.execute("INSERT INTO oauth_clients (client_id, client_name, redirect_uris, grant_types, created_at)"
                            " VALUES ('fpc_someone_elses', 'x', '[]', '[]', now())")
