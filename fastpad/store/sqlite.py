"""The embedded backend: one SQLite file per deployment, WAL, FTS5 (the SQLite
library is chosen in fastpad/store/engine.py).

Writers take the database's write lock up front (``BEGIN IMMEDIATE``), so a
write transaction never fails half-way on a lock upgrade; readers run
concurrently under WAL. Connections come from a small pool shared across threads.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fastpad.store.engine import sqlite3
from fastpad.store.base import Store, WorkspaceTx, js_dumps, migrations
from fastpad.store.tx_core import Dialect, utcnow


MMAP_BYTES = 256 * 1024 * 1024


class SqliteDialect(Dialect):
    name = "sqlite"

    def ts(self, value: datetime | None) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("timestamps must carry a time zone")
        # Fixed width, UTC: text order is time order.
        return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")

    def ts_out(self, value: Any) -> datetime | None:
        return None if value is None else datetime.fromisoformat(value)

    def js(self, value: Any) -> Any:
        return js_dumps(value)

    def js_out(self, value: Any) -> Any:
        return None if value is None else json.loads(value)

    def ids(self, values: Iterable[str]) -> Any:
        return json.dumps(list(values))

    def in_ids(self, column: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(?))"

    def json_text(self, column: str) -> str:
        return f"json_extract({column}, ?)"

    def json_key(self, key: str) -> Any:
        return "$." + json.dumps(key)


class SqliteWorkspaceTx(WorkspaceTx):
    _store: SqliteStore

    @property
    def parallel_reads(self) -> int:
        # A write transaction's own changes are invisible to other connections.
        return 1 if self.writable else 1 + self._store.side_readers

    def fan_out(self, sql: str, param_sets: Sequence[Sequence[Any]]) -> list[list[Any]]:
        """The first set runs here; each other set on an idle pooled connection,
        concurrently (sqlite3 releases the GIL while a statement steps), or here
        after the first when no connection is idle — a busy server never waits
        for a helper. A side read is its own read transaction, begun a moment
        after this one: callers join its rows back through this transaction, so
        a write committed in between is at most dropped or missed, the same as a
        statement issued a moment later."""
        if self.writable or len(param_sets) < 2:
            return super().fan_out(sql, param_sets)
        aside = [self._store.read_aside(self._d.sql(sql), params) for params in param_sets[1:]]
        rows = [self._x(sql, param_sets[0]).fetchall()]
        for params, pending in zip(param_sets[1:], aside):
            rows.append(self._x(sql, params).fetchall() if pending is None else pending.result())
        return rows


class SqliteStore(Store):
    backend = "sqlite"
    tx_class = SqliteWorkspaceTx
    integrity_errors = (sqlite3.IntegrityError,)

    def __init__(self, path: str | Path, *, migrate_to: int | None = None, pool_size: int = 8,
                 side_readers: int | None = None) -> None:
        self.path = Path(path)
        # Threads for WorkspaceTx.fan_out: one per core beyond the caller's, at most three.
        self.side_readers = max(0, min(3, (os.cpu_count() or 1) - 1)) if side_readers is None else side_readers
        self._side_threads: ThreadPoolExecutor | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.dialect = SqliteDialect()
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._all: list[sqlite3.Connection] = []
        self._slots = threading.BoundedSemaphore(pool_size)
        self._lock = threading.Lock()
        self._closed = False
        conn = self._connect()
        try:
            self._migrate(conn, migrate_to)
        finally:
            self._pool.put(conn)

    # ------------------------------------------------------------------ connections

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 10000")
        # Read the database file through a memory map rather than copying pages into
        # each connection's small private cache: a search's hundreds of scattered row
        # reads cost a third less, and every pooled connection shares the OS's pages.
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        with self._lock:
            self._all.append(conn)
        return conn

    def _checkout(self, *, wait: bool) -> sqlite3.Connection | None:
        """A pooled connection (a new one while the pool is short), holding one of
        the pool's slots; None when ``wait`` is False and every slot is taken."""
        if self._closed:
            raise RuntimeError("store is closed")
        if not self._slots.acquire(blocking=wait):
            return None
        try:
            return self._pool.get_nowait()
        except queue.Empty:
            try:
                return self._connect()
            except BaseException:
                self._slots.release()
                raise

    def _checkin(self, conn: sqlite3.Connection) -> None:
        try:
            if conn.in_transaction:  # never hand a connection back mid-transaction
                conn.execute("ROLLBACK")
            self._pool.put(conn)
        finally:
            self._slots.release()

    @contextmanager
    def _borrow(self) -> Iterator[sqlite3.Connection]:
        conn = self._checkout(wait=True)
        assert conn is not None
        try:
            yield conn
        finally:
            self._checkin(conn)

    def read_aside(self, sql: str, params: Sequence[Any]) -> Future[list[Any]] | None:
        """Run one read-only statement on an idle pooled connection in a side
        thread; None when no connection is free right now (never waits)."""
        if self._closed or not self.side_readers:
            return None
        conn = self._checkout(wait=False)
        if conn is None:
            return None
        with self._lock:
            if self._side_threads is None:
                self._side_threads = ThreadPoolExecutor(self.side_readers, thread_name_prefix="fastpad-sqlite-aside")

        def run() -> list[Any]:
            try:
                return conn.execute(sql, params).fetchall()  # autocommit: its own read transaction
            finally:
                self._checkin(conn)

        try:
            return self._side_threads.submit(run)
        except BaseException:
            self._checkin(conn)
            raise

    @contextmanager
    def _transaction(self, *, write: bool, settings: Mapping[str, str]) -> Iterator[sqlite3.Connection]:
        # `settings` name the workspace/person; on SQLite the data-access layer
        # applies them as filters in every statement, so there is nothing to set here.
        with self._borrow() as conn:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # ------------------------------------------------------------------ migrations

    def _migrate(self, conn: sqlite3.Connection, migrate_to: int | None) -> None:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        known = migrations("sqlite")
        target = len(known) if migrate_to is None else migrate_to
        for version, name, script in known:
            if version > target:
                break
            # The version check happens under the write lock, so two processes
            # opening one file at once apply each migration exactly once. Foreign
            # keys are off while a migration runs (SQLite's way to rebuild a table
            # others reference: with them on, dropping the old table would cascade
            # into its dependents) and checked before it commits.
            conn.execute("PRAGMA foreign_keys = OFF")
            conn.execute("BEGIN IMMEDIATE")
            try:
                applied = conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone()
                if not applied:
                    for statement in _statements(script):
                        conn.execute(statement)
                    broken = conn.execute("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise RuntimeError(f"migration {version} ({name}) leaves broken references: {broken[:5]}")
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                        (version, name, self.dialect.ts(utcnow())),
                    )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            finally:
                conn.execute("PRAGMA foreign_keys = ON")
        current = self._version(conn)
        if current > len(known):
            raise RuntimeError(
                f"{self.path} is at schema version {current}, newer than this Fastpad ({len(known)}); upgrade Fastpad"
            )

    @staticmethod
    def _version(conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0])

    def schema_version(self) -> int:
        with self._borrow() as conn:
            return self._version(conn)

    # ------------------------------------------------------------------ before a workspace is known

    def resolve_credential(self, kind: str, credential_hash: str) -> tuple[str, str] | None:
        with self._transaction(write=False, settings={}) as conn:
            row = conn.execute(
                "SELECT workspace_id, subject_id FROM credential_index WHERE kind = ? AND hash = ?",
                (kind, credential_hash),
            ).fetchone()
        return (row[0], row[1]) if row else None

    def login_lookup(self, email: str) -> tuple[str, str | None] | None:
        with self._transaction(write=False, settings={}) as conn:
            row = conn.execute("SELECT id, password_hash FROM people WHERE email = ?", (email,)).fetchone()
        return (row[0], row[1]) if row else None

    def published_workspace(self, note_id: str) -> str | None:
        with self._transaction(write=False, settings={}) as conn:
            row = conn.execute("SELECT workspace_id FROM published_notes WHERE note_id = ?", (note_id,)).fetchone()
        return row[0] if row else None

    def workspace_ids(self) -> list[str]:
        with self._transaction(write=False, settings={}) as conn:
            return [r[0] for r in conn.execute("SELECT id FROM workspaces ORDER BY id")]

    def ping(self) -> None:
        with self._borrow() as conn:
            conn.execute("SELECT 1").fetchone()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._side_threads is not None:
            self._side_threads.shutdown(wait=True)
        with self._lock:
            for conn in self._all:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._all.clear()


def _statements(script: str) -> Iterator[str]:
    """Split a migration into statements (trigger bodies stay whole)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""
    if buffer.strip():
        raise RuntimeError(f"incomplete statement at the end of a migration: {buffer[:80]!r}")
