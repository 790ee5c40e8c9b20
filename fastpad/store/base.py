"""The storage interface and the one data-access layer both backends share.

Every workspace-scoped statement in the project lives in ``WorkspaceTx``. A
``WorkspaceTx`` is bound to one workspace when it is opened and adds
``workspace_id = <that workspace>`` to every statement itself; there is no way
to hand it SQL or a workspace from outside. That is the isolation rule on
SQLite; on PostgreSQL the same statements additionally run under forced
row-level security keyed on the same workspace (``app.workspace_id``), so a
missing filter would still return nothing.

Statements are written once with ``?`` placeholders; the dialect converts them
and the values (timestamps, JSON, booleans) for its backend. Services never
build SQL: they call methods here with values, which are always bound as
parameters.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from fastpad.store import claims
from fastpad.store.credentials import CredentialRows
from fastpad.store.feed import FeedLog
from fastpad.store.feed_signal import feed_commits
from fastpad.store.idempotency import IdempotencyKeys
from fastpad.store.members import MemberRows
from fastpad.store.note_writes import NoteWrites
from fastpad.store.tx_core import Dialect
from fastpad.store.turns import TurnTables
from fastpad.store.links import LinkStore
from fastpad.store.search_index import SearchIndex
from fastpad.store.typed import TypedTables
from fastpad.store.captures import CaptureReceipts
from fastpad.store.imports import ImportTables
from fastpad.store.oauth import OAuthGrants
from fastpad.store.publications import Publications
from fastpad.store.audit import AuditLog
from fastpad.store.team import TeamTables
from fastpad.store.mentions import MentionTables
from fastpad.store.comments import CommentTables
from fastpad.store.records import (
    IdempotencyRecord,
    WorkspaceRow,
)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def migrations(backend: str) -> list[tuple[int, str, str]]:
    """(version, name, sql) for every migration file of ``backend``, in order."""
    found = []
    for path in sorted((MIGRATIONS_DIR / backend).glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if not match:
            raise RuntimeError(f"migration file {path.name!r} is not named NNNN_name.sql")
        found.append((int(match.group(1)), match.group(2), path.read_text(encoding="utf-8")))
    versions = [v for v, _, _ in found]
    if versions != list(range(1, len(versions) + 1)):
        raise RuntimeError(f"{backend} migrations must be numbered 1..n without gaps, got {versions}")
    return found


class WorkspaceTx(MemberRows, CredentialRows, NoteWrites):
    """One transaction acting for one workspace. Obtain it from ``Store.read``/``Store.write``.

    Its plumbing is ``TxCore`` (fastpad/store/tx_core.py); the rows most of the code reads and
    writes are its own methods, by concept: the workspace, people and agents
    (fastpad/store/members.py), tokens and sessions (credentials.py), notes and blocks read
    (note_reads.py) and written (note_writes.py, the single write path). Every other table is
    behind a cached property below, one module each."""

    @cached_property
    def feed(self) -> FeedLog:
        """The change feed (fastpad/store/feed.py)."""
        return FeedLog(self)

    @cached_property
    def turns(self) -> TurnTables:
        """Proposals, their sources, the audit log and session reads (fastpad/store/turns.py)."""
        return TurnTables(self)

    @cached_property
    def links(self) -> LinkStore:
        """Links, note titles and supersession (fastpad/store/links.py)."""
        return LinkStore(self)


    @cached_property
    def idempotency(self) -> IdempotencyKeys:
        """Idempotency keys: kept responses and the claims of keyed writes (fastpad/store/idempotency.py)."""
        return IdempotencyKeys(self)

    @cached_property
    def search_index(self) -> SearchIndex:
        """Search chunks, vectors and strategy reads (fastpad/store/search_index.py)."""
        return SearchIndex(self)

    @cached_property
    def typed(self) -> TypedTables:
        """Types, the typed property index, structured query and collections (fastpad/store/typed.py)."""
        return TypedTables(self)

    @cached_property
    def captures(self) -> CaptureReceipts:
        """Capture idempotency receipts (fastpad/store/captures.py)."""
        return CaptureReceipts(self)

    @cached_property
    def imports(self) -> ImportTables:
        """Imports, their ledgers, the ids they minted, and attachments (fastpad/store/imports.py)."""
        return ImportTables(self)

    @cached_property
    def publications(self) -> Publications:
        """Published notes (fastpad/store/publications.py)."""
        return Publications(self)

    @cached_property
    def audit(self) -> AuditLog:
        """The workspace audit log (fastpad/store/audit.py)."""
        return AuditLog(self)

    @cached_property
    def team(self) -> TeamTables:
        """Invitations, roles, display names, sessions and a person's credentials (fastpad/store/team.py)."""
        return TeamTables(self)

    @cached_property
    def mentions(self) -> MentionTables:
        """Each person's Inbox of mentions (fastpad/store/mentions.py)."""
        return MentionTables(self)

    @cached_property
    def comments(self) -> CommentTables:
        """Comments on notes, threads with replies (fastpad/store/comments.py)."""
        return CommentTables(self)

    @cached_property
    def oauth(self) -> OAuthGrants:
        """OAuth grants, their refresh tokens, and the secret of each grant's access token (fastpad/store/oauth.py)."""
        return OAuthGrants(self)


class Store(ABC):
    """A Fastpad database. Workspace-scoped work happens in ``read``/``write``
    transactions bound to one workspace; the few lookups that come before a
    workspace is known (credential hash, sign-in email, a person's memberships)
    are the methods on this class."""

    backend: ClassVar[str]
    dialect: Dialect
    tx_class: ClassVar[type[WorkspaceTx]] = WorkspaceTx
    # The driver's unique/foreign-key violation, for services that turn a lost race into a Conflict.
    integrity_errors: ClassVar[tuple[type[BaseException], ...]] = ()

    # ------------------------------------------------------------------ transactions

    @abstractmethod
    def _transaction(self, *, write: bool, settings: Mapping[str, str]) -> Any:
        """Context manager yielding a connection inside a transaction with
        ``settings`` applied (PostgreSQL: transaction-local GUCs)."""

    @contextmanager
    def read(self, workspace_id: str) -> Iterator[WorkspaceTx]:
        with self._transaction(write=False, settings={"app.workspace_id": _check_id(workspace_id)}) as conn:
            yield self.tx_class(conn, self.dialect, workspace_id, writable=False, store=self)

    @contextmanager
    def write(self, workspace_id: str) -> Iterator[WorkspaceTx]:
        with self._transaction(write=True, settings={"app.workspace_id": _check_id(workspace_id)}) as conn:
            tx = self.tx_class(conn, self.dialect, workspace_id, writable=True, store=self)
            yield tx
            # Inside the transaction: a request run under an idempotency key commits its claim
            # together with its write (store/claims.py).
            claim_committed = claims.record_in(tx)
        claim_committed()
        if tx.feed.appended:  # committed: wake this process's feed readers
            feed_commits.publish(workspace_id)

    # ------------------------------------------------------------------ before a workspace is known

    @abstractmethod
    def resolve_credential(self, kind: str, credential_hash: str) -> tuple[str, str] | None:
        """(workspace_id, credential id) for a token/session hash, or None."""

    @abstractmethod
    def login_lookup(self, email: str) -> tuple[str, str | None] | None:
        """(person_id, password_hash) for a sign-in email, or None."""

    @abstractmethod
    def published_workspace(self, note_id: str) -> str | None:
        """The workspace of a published note, or None: the anonymous public route's one lookup."""

    @abstractmethod
    def workspace_ids(self) -> list[str]:
        """Every workspace's id: for the server's own maintenance in each (the trash's purge), never
        for a request, which acts in the one workspace its credential names."""

    def memberships(self, person_id: str) -> list[tuple[WorkspaceRow, str]]:
        """The workspaces a person belongs to, with their role, oldest first."""
        with self._transaction(write=False, settings={"app.person_id": _check_id(person_id)}) as conn:
            rows = conn.execute(
                self.dialect.sql(
                    "SELECT w.id, w.name, w.created_at, m.role FROM workspace_members m"
                    " JOIN workspaces w ON w.id = m.workspace_id WHERE m.person_id = ?"
                    " ORDER BY m.created_at, w.id"
                ),
                (person_id,),
            ).fetchall()
        return [(WorkspaceRow(r[0], r[1], self.dialect.ts_out(r[2])), r[3]) for r in rows]

    # ------------------------------------------------------------------ conveniences

    def idempotency_lookup(self, workspace_id: str, principal_key: str, key: str) -> IdempotencyRecord | None:
        with self.read(workspace_id) as tx:
            return tx.idempotency.get(principal_key, key)

    def idempotency_save(self, workspace_id: str, principal_key: str, key: str, record: IdempotencyRecord) -> bool:
        with self.write(workspace_id) as tx:
            return tx.idempotency.put(principal_key, key, record)

    @abstractmethod
    def ping(self) -> None:
        """One database round trip; raises if the database is unreachable."""

    @abstractmethod
    def schema_version(self) -> int: ...

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_id(value: str) -> str:
    if not isinstance(value, str) or not value:
        # Fail closed: never open a transaction without knowing whose it is.
        raise ValueError("a workspace-scoped transaction needs a workspace id")
    return value


def js_dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
