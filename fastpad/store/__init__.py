"""Storage: one interface (``Store`` / ``WorkspaceTx``), two backends.

``open_store(url)`` picks the backend from the URL:

- ``sqlite:///absolute/path/fastpad.db`` (or ``sqlite:relative/path.db``): the
  embedded default, one file per deployment;
- ``postgresql://owner@host/db``: production. The URL's user must be able to
  create tables and roles; requests run as a separate, non-owner application
  role under forced row-level security (see ``fastpad.store.postgres``).

Migrations are applied on open (``migrate_to`` stops early; tests use it to
build an old database and upgrade it).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastpad.errors import missing_extra

from fastpad.store.base import Store, WorkspaceTx, migrations
from fastpad.store.tx_core import utcnow
from fastpad.store.records import (
    UNCHANGED,
    Actor,
    AgentRow,
    BlockEdits,
    BlockRow,
    IdempotencyRecord,
    MemberRow,
    NoteRow,
    NoteWrite,
    OpLogEntry,
    PersonRow,
    SessionRow,
    TokenRow,
    WorkspaceRow,
)

__all__ = [
    "UNCHANGED", "Actor", "AgentRow", "BlockEdits", "BlockRow", "IdempotencyRecord", "MemberRow",
    "NoteRow", "NoteWrite", "OpLogEntry", "PersonRow", "SessionRow", "Store", "TokenRow", "WorkspaceRow",
    "WorkspaceTx", "migrations", "open_store", "sqlite_url", "utcnow",
]


def sqlite_url(path: str | Path) -> str:
    return "sqlite:///" + str(Path(path).resolve()).lstrip("/")


def open_store(url: str, *, migrate_to: int | None = None, pool_size: int = 8) -> Store:
    if url.startswith(("postgresql://", "postgres://")):
        if importlib.util.find_spec("psycopg") is None or importlib.util.find_spec("psycopg_pool") is None:
            raise missing_extra("postgres", "a PostgreSQL database", field="database_url")
        from fastpad.store.postgres import PostgresStore

        return PostgresStore(url, migrate_to=migrate_to, pool_size=pool_size)
    if url.startswith("sqlite:///"):
        path = url[len("sqlite://"):]
    elif url.startswith("sqlite:"):
        path = url[len("sqlite:"):]
    else:
        raise ValueError(f"unsupported database URL {url.split(':', 1)[0]!r}: use sqlite:/// or postgresql://")
    if not path or path == ":memory:":
        raise ValueError("the SQLite store needs a file path")
    from fastpad.store.sqlite import SqliteStore

    return SqliteStore(path, migrate_to=migrate_to, pool_size=pool_size)
