"""The production backend: PostgreSQL through psycopg 3 and a connection pool.

Two connections, two roles:

- The URL the operator configures is the *owner* (it creates tables and roles).
  It is used once per start, to apply migrations and to bootstrap the
  application role, then closed.
- Every request runs as the *application role*, a login role that owns
  nothing, is not a superuser and has no BYPASSRLS, so the forced row-level
  security policies (migrations/postgres/0001_init.sql) bind it. Each
  transaction sets ``app.workspace_id`` (``set_config(..., true)``: local to the
  transaction, gone at COMMIT) before its first statement; a connection that
  skips that sees zero rows.

The application role's name and password are kept in ``fastpad_settings``, a
table only the owner can read, so every process that opens the same database
with the owner URL connects as the same role with the same password. The role
name is derived from the database name (roles are cluster-wide; two Fastpad
databases in one cluster get two roles).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from fastpad.store.base import Store, migrations
from fastpad.store.tx_core import Dialect, utcnow

_MIGRATION_LOCK = 0x6661737470616401  # pg_advisory lock key: "fastpad" + 1
# SECURITY DEFINER functions the application role calls before it knows a workspace.
_PRE_WORKSPACE_LOOKUPS = ("fastpad_resolve_credential(text, text)", "fastpad_login_lookup(text)",
                          "fastpad_published_workspace(text)", "fastpad_workspace_ids()")
_TEXT_CONFIG = "english"


class PostgresDialect(Dialect):
    name = "postgres"
    for_update = " FOR UPDATE"

    def sql(self, text: str) -> str:
        converted = self._cache.get(text)
        if converted is None:
            if "%" in text:
                raise ValueError("write % as a bound parameter, never inside SQL text")
            converted = self._cache[text] = text.replace("?", "%s")
        return converted

    def ts(self, value: datetime | None) -> Any:
        if value is not None and value.tzinfo is None:
            raise ValueError("timestamps must carry a time zone")
        return value

    def ts_out(self, value: Any) -> datetime | None:
        return None if value is None else value.astimezone(timezone.utc)

    def js(self, value: Any) -> Any:
        return Jsonb(value)

    def in_ids(self, column: str) -> str:
        return f"{column} = ANY(?)"

    def json_text(self, column: str) -> str:
        return f"({column} ->> CAST(? AS text))"


class PostgresStore(Store):
    backend = "postgres"
    integrity_errors = (psycopg.errors.IntegrityError,)

    def __init__(self, url: str, *, migrate_to: int | None = None, pool_size: int = 8) -> None:
        self.owner_url = url
        self.dialect = PostgresDialect()
        self.app_role, app_password = self._bootstrap(migrate_to)
        self.app_conninfo = make_conninfo(url, user=self.app_role, password=app_password)
        self._pool = ConnectionPool(
            self.app_conninfo,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            open=True,
            name="fastpad",
        )
        try:
            self._pool.wait(timeout=10.0)
        except BaseException:
            self._pool.close()
            raise

    # ------------------------------------------------------------------ bootstrap (as the owner)

    def _bootstrap(self, migrate_to: int | None) -> tuple[str, str]:
        known = migrations("postgres")
        target = len(known) if migrate_to is None else migrate_to
        with psycopg.connect(self.owner_url, autocommit=True) as conn:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations ("
                    " version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)"
                )
                conn.execute("CREATE TABLE IF NOT EXISTS fastpad_settings (key text PRIMARY KEY, value text NOT NULL)")
                conn.execute("REVOKE ALL ON schema_migrations, fastpad_settings FROM PUBLIC")
            for version, name, script in known:
                if version > target:
                    break
                with conn.transaction():
                    # Under the lock, re-check: another process may have just applied it.
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                    if conn.execute("SELECT 1 FROM schema_migrations WHERE version = %s", (version,)).fetchone():
                        continue
                    conn.execute(script)  # type: ignore[arg-type]  # no parameters: a multi-statement script
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                        (version, name, utcnow()),
                    )
            current = self._version(conn)
            if current > len(known):
                raise RuntimeError(
                    f"the database is at schema version {current}, newer than this Fastpad ({len(known)}); "
                    "upgrade Fastpad"
                )
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                return self._ensure_app_role(conn)

    def _ensure_app_role(self, conn: psycopg.Connection) -> tuple[str, str]:
        settings = dict(conn.execute("SELECT key, value FROM fastpad_settings").fetchall())
        dbname = conn.execute("SELECT current_database()").fetchone()[0]
        role = settings.get("app_role") or app_role_name(dbname)
        password = settings.get("app_password") or secrets.token_urlsafe(32)
        exists = conn.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        if exists is None:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )
        else:
            if exists[0] or exists[1]:
                raise RuntimeError(f"role {role!r} is a superuser or bypasses row-level security; refusing to use it")
            conn.execute(sql.SQL("ALTER ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(password)))
        for key, value in (("app_role", role), ("app_password", password)):
            conn.execute(
                "INSERT INTO fastpad_settings (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        ident = sql.Identifier(role)
        conn.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(dbname), ident))
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(ident))
        # Everything in the schema (so a later migration's table is covered),
        # then take back what the role must not have.
        conn.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {}").format(ident))
        conn.execute(sql.SQL("REVOKE ALL ON schema_migrations, fastpad_settings FROM {}").format(ident))
        conn.execute(sql.SQL("REVOKE SELECT, UPDATE, DELETE ON credential_index FROM {}").format(ident))
        conn.execute(sql.SQL("REVOKE DELETE ON people FROM {}").format(ident))
        # The pre-workspace lookups, each once the migration that makes it has run (a store
        # opened at an older version, as upgrade tests do, has fewer).
        for function in _PRE_WORKSPACE_LOOKUPS:
            if conn.execute("SELECT to_regprocedure(%s)", (function,)).fetchone()[0] is not None:
                conn.execute(sql.SQL("GRANT EXECUTE ON FUNCTION {} TO {}").format(sql.SQL(function), ident))
        return role, password

    @staticmethod
    def _version(conn: psycopg.Connection) -> int:
        return int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0])

    def schema_version(self) -> int:
        with psycopg.connect(self.owner_url, autocommit=True) as conn:
            return self._version(conn)

    # ------------------------------------------------------------------ transactions (as the application role)

    @contextmanager
    def _transaction(self, *, write: bool, settings: Mapping[str, str]) -> Iterator[psycopg.Connection]:
        with self._pool.connection() as conn:
            with conn.transaction():
                for name, value in settings.items():
                    conn.execute("SELECT set_config(%s, %s, true)", (name, value))
                yield conn

    def resolve_credential(self, kind: str, credential_hash: str) -> tuple[str, str] | None:
        with self._transaction(write=False, settings={}) as conn:
            row = conn.execute(
                "SELECT workspace_id, subject_id FROM fastpad_resolve_credential(%s, %s)", (kind, credential_hash)
            ).fetchone()
        return (row[0], row[1]) if row else None

    def login_lookup(self, email: str) -> tuple[str, str | None] | None:
        with self._transaction(write=False, settings={}) as conn:
            row = conn.execute("SELECT person_id, password_hash FROM fastpad_login_lookup(%s)", (email,)).fetchone()
        return (row[0], row[1]) if row else None

    def published_workspace(self, note_id: str) -> str | None:
        with self._transaction(write=False, settings={}) as conn:
            row = conn.execute("SELECT workspace_id FROM fastpad_published_workspace(%s)", (note_id,)).fetchone()
        return row[0] if row else None

    def workspace_ids(self) -> list[str]:
        with self._transaction(write=False, settings={}) as conn:
            return [r[0] for r in conn.execute("SELECT id FROM fastpad_workspace_ids()")]

    def ping(self) -> None:
        with self._pool.connection() as conn:
            conn.execute("SELECT 1").fetchone()

    def close(self) -> None:
        self._pool.close()


def app_role_name(dbname: str) -> str:
    """The application role a database gets by default (roles are cluster-wide, so one per database)."""
    base = "fastpad_app_" + re.sub(r"[^a-z0-9_]", "_", dbname.lower())
    if len(base) > 63:
        base = base[:50] + "_" + hashlib.sha256(dbname.encode()).hexdigest()[:12]
    return base


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))
