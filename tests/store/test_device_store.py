"""`device_authorizations` is read before any workspace is known: every statement names its row by the
secret its caller holds, and on PostgreSQL forced row-level security enforces exactly that."""

from __future__ import annotations

import re

import psycopg
import pytest

from fastpad.errors import AccessDenied
from fastpad.security.device import DeviceLoginService, hash_device_code
from tests.helpers_store import make_services

_BY_SECRET = re.compile(r"WHERE (?:device_code_hash|user_code) = '[^']+'")
_SWEEP = re.compile(r"^DELETE FROM device_authorizations WHERE expires_at < '")


def test_every_device_statement_names_its_row_by_a_secret(sqlite_store, fast_hasher) -> None:
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
    logins = DeviceLoginService(svc.store, svc.tokens, clock=svc.clock, interval_s=0)
    for approve in (True, False):
        started = logins.start()
        logins.pending(started.user_code)
        logins.decide(ws.owner, started.user_code, approve=approve)
        if approve:
            logins.poll(started.device_code)
        else:
            with pytest.raises(AccessDenied):
                logins.poll(started.device_code)
    touching = [" ".join(s.split()) for s in statements if "device_authorizations" in s]
    assert len(touching) > 10
    for flat in touching:
        assert flat.startswith("INSERT") or _BY_SECRET.search(flat) or _SWEEP.search(flat), flat


def test_postgres_shows_a_transaction_only_the_request_it_names(pg_store, fast_hasher) -> None:
    svc = make_services(pg_store, fast_hasher)
    logins = DeviceLoginService(svc.store, svc.tokens, clock=svc.clock)
    first, second = logins.start(), logins.start()
    with psycopg.connect(pg_store.app_conninfo, autocommit=True) as app:
        with app.transaction():
            assert app.execute("SELECT count(*) FROM device_authorizations").fetchone()[0] == 0, "names nothing: sees nothing"
        with app.transaction():
            app.execute("SELECT set_config('app.user_code', %s, true)", (first.user_code.replace("-", ""),))
            assert app.execute("SELECT count(*) FROM device_authorizations").fetchone()[0] == 1
            changed = app.execute("UPDATE device_authorizations SET approved = true").rowcount
            assert changed == 1, "an unfiltered update still reaches only the named row"
        with app.transaction():
            app.execute("SELECT set_config('app.device_code_hash', %s, true)", (hash_device_code(second.device_code),))
            rows = app.execute("SELECT approved FROM device_authorizations").fetchall()
            assert rows == [(None,)], "the other request is untouched"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            with app.transaction():
                app.execute("SELECT set_config('app.device_code_hash', 'mine', true)")
                app.execute(
                    "INSERT INTO device_authorizations (device_code_hash, user_code, scopes, interval_s, created_at,"
                    " expires_at) VALUES ('someone-elses', 'BBBBBBBB', '[]', 5, now(), now())"
                )
