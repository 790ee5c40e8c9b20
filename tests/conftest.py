"""Shared fixtures: one PostgreSQL server per test session, fresh databases on demand.

PostgreSQL comes from ``FASTPAD_TEST_DATABASE_URL`` when it is set (a URL whose
user may CREATE DATABASE and CREATE ROLE; the tests create databases named
``fastpad_test_*`` and drop them, and their application roles, at the end),
otherwise from a throwaway server the ``pgserver`` package starts in a temp
directory (PostgreSQL 16, ~0.6 s). If neither works the Postgres tests fail:
they are never skipped.

A migrated *template* database is built once per session; a test's database
is a copy of it (``CREATE DATABASE … TEMPLATE``, ~120 ms), and when the test
is done its database is emptied (``TRUNCATE``, ~25 ms) and handed to the next
test, so every test starts empty without re-running migrations.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from typing import Any
from pathlib import Path

import psycopg
import pytest
from argon2 import PasswordHasher
from psycopg import sql

from fastpad.store import Store, migrations, open_store, sqlite_url
from fastpad.store.postgres import app_role_name

BACKENDS = ["sqlite", "postgres"]


class PostgresCluster:
    """Creates databases on the session's server; cleans up what it created."""

    def __init__(self, admin_url: str, *, external: bool) -> None:
        self.admin_url = admin_url
        self.external = external
        self.prefix = f"fastpad_test_{secrets.token_hex(3)}"
        self.databases: list[str] = []
        self.roles: set[str] = set()
        self._template: str | None = None
        self._free: list[str] = []
        self._latest = len(migrations("postgres"))

    def url(self, dbname: str) -> str:
        return psycopg.conninfo.make_conninfo(self.admin_url, dbname=dbname)

    def _create(self, template: str | None = None) -> str:
        name = f"{self.prefix}_{len(self.databases)}"
        stmt = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template:
            stmt = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(template))
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(stmt)
        self.databases.append(name)
        return name

    def blank_database(self) -> str:
        """An empty database (no migrations): its URL."""
        name = self._create()
        self.roles.add(app_role_name(name))  # whoever migrates it creates this role
        return _as_url(self.url(name))

    def migrated_database(self) -> str:
        """An empty database with every migration applied and the application role set up: its URL."""
        if self._free:
            return self._free.pop()
        if self._template is None:
            name = self._create()
            store = open_store(_as_url(self.url(name)))
            self.roles.add(store.app_role)  # type: ignore[attr-defined]
            store.close()
            self._template = name
        return _as_url(self.url(self._create(template=self._template)))

    def release(self, url: str) -> None:
        """Empty a test's database for the next test; one whose schema a test changed is dropped from reuse."""
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("SET lock_timeout = '2s'")
                versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
                if versions != list(range(1, self._latest + 1)):
                    return
                tables = [r[0] for r in conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                    " AND tablename NOT IN ('schema_migrations', 'fastpad_settings')")]
                conn.execute(sql.SQL("TRUNCATE {}").format(sql.SQL(", ").join(map(sql.Identifier, tables))))
        except psycopg.Error:
            return
        self._free.append(url)

    def note_role(self, store: Store) -> None:
        role = getattr(store, "app_role", None)
        if role:
            self.roles.add(role)

    def cleanup(self) -> None:
        if not self.external:
            return  # the throwaway server is deleted whole
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            for name in self.databases:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            for role in self.roles:
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def _as_url(conninfo: str) -> str:
    """open_store takes a postgresql:// URL; turn a key=value conninfo back into one."""
    if conninfo.startswith(("postgresql://", "postgres://")):
        return conninfo
    from urllib.parse import quote, urlencode

    params = psycopg.conninfo.conninfo_to_dict(conninfo)
    user = quote(str(params.pop("user", "")), safe="")
    password = params.pop("password", None)
    dbname = quote(str(params.pop("dbname", "")), safe="")
    host = params.pop("host", "")
    port = params.pop("port", None)
    auth = user + (":" + quote(str(password), safe="") if password else "")
    netloc = f"{auth}@" if auth else ""
    query: dict[str, str] = {k: str(v) for k, v in params.items()}
    if host and str(host).startswith("/"):
        query["host"] = str(host)
        host = ""
    netloc += str(host) + (f":{port}" if port else "")
    return f"postgresql://{netloc}/{dbname}" + (f"?{urlencode(query)}" if query else "")


@pytest.fixture(scope="session")
def pg_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresCluster]:
    external = os.environ.get("FASTPAD_TEST_DATABASE_URL")
    if external:
        cluster = PostgresCluster(external, external=True)
        yield cluster
        cluster.cleanup()
        return
    import pgserver  # dev dependency; a missing package is a failure, not a skip

    # A private directory, not pytest's basetemp: pytest prunes old basetemps, and a
    # concurrent pytest session must not delete a running server's data directory.
    root = Path(tempfile.mkdtemp(prefix="fastpad-pg-"))
    server = pgserver.get_server(root / "data", cleanup_mode="delete")
    # A throwaway server: durability buys nothing here, and fsync dominates CREATE DATABASE and shutdown.
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(sql.SQL("ALTER SYSTEM SET {} = off").format(sql.Identifier(setting)))
        conn.execute("SELECT pg_reload_conf()")
    try:
        yield PostgresCluster(server.get_uri(), external=False)
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def api_database_url(pg_cluster: PostgresCluster) -> str:
    """An empty database for the HTTP tests' Postgres server (``fp init`` migrates it)."""
    return pg_cluster.blank_database()


@pytest.fixture(scope="session", params=BACKENDS)
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The adversarial suites' servers (``tests/security``, ``tests/hostile``): one ``fp serve`` per
    backend — PostgreSQL from the session's cluster, so a missing database fails, never skips —
    started by ``tests/mcp/conftest.py``'s helper (the deployment opened in this process too, dense
    search off) and shared by every test of both suites."""
    from tests.mcp.conftest import start_mcp_server, stop_mcp_server

    database_url = request.getfixturevalue("pg_cluster").blank_database() if request.param == "postgres" else None
    server = start_mcp_server(tmp_path_factory.mktemp(f"adversarial-{request.param}"), request.param, database_url)
    yield server
    stop_mcp_server(server)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., Store]]:
    """``make_store(migrate_to=None, url=None)`` → an open store on this test's backend.
    Without ``url`` each call makes a new database; ``database_url()`` gives
    the URL of the last one so a test can reopen it."""
    opened: list[Store] = []
    urls: list[str] = []
    reusable: list[str] = []

    def factory(*, migrate_to: int | None = None, url: str | None = None) -> Store:
        if url is None:
            if backend == "sqlite":
                url = sqlite_url(tmp_path / f"db{len(urls)}.sqlite")
            else:
                cluster = request.getfixturevalue("pg_cluster")
                if migrate_to is None:
                    url = cluster.migrated_database()
                    reusable.append(url)
                else:
                    url = cluster.blank_database()
            urls.append(url)
        store = open_store(url, migrate_to=migrate_to, pool_size=4)
        if backend == "postgres":
            request.getfixturevalue("pg_cluster").note_role(store)
        opened.append(store)
        return store

    factory.last_url = lambda: urls[-1]  # type: ignore[attr-defined]
    yield factory
    for store in opened:
        store.close()
    if reusable:
        cluster = request.getfixturevalue("pg_cluster")
        for url in reusable:
            cluster.release(url)


@pytest.fixture
def store(make_store: Callable[..., Store]) -> Store:
    """A fresh, fully migrated, empty store — once per backend."""
    return make_store()


@pytest.fixture(scope="session")
def fast_hasher() -> PasswordHasher:
    """argon2id with tiny costs: the same algorithm and format, without 50 ms per hash."""
    return PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    """For the few SQLite-only checks (not parametrized, so nothing is skipped)."""
    store = open_store(sqlite_url(tmp_path / "only.sqlite"), pool_size=4)
    yield store
    store.close()


@pytest.fixture
def pg_store(pg_cluster: PostgresCluster) -> Iterator[Store]:
    """For the PostgreSQL-only checks (row-level security)."""
    url = pg_cluster.migrated_database()
    store = open_store(url, pool_size=4)
    pg_cluster.note_role(store)
    yield store
    store.close()
    pg_cluster.release(url)
