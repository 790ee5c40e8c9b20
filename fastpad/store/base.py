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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from fastpad.errors import Conflict, NotFound, StaleFrontier
from fastpad.store import claims
from fastpad.store.feed import FeedLog
from fastpad.store.feed_signal import feed_commits
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
from fastpad.store.records import (
    UNCHANGED,
    Actor,
    AgentRow,
    BlockEdits,
    BlockRow,
    IdempotencyRecord,
    MemberRow,
    NameProvenance,
    NoteRow,
    NoteWrite,
    OpLogEntry,
    PersonRow,
    SessionRow,
    TokenRow,
    WorkspaceRow,
)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
IDEMPOTENCY_TTL = timedelta(hours=24)
_PERSONS_OWN = ("human_typed", "human_accepted")  # a title no write stamped (the column defaults)
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


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


# One block row rewritten (content and provenance, with its last writer), and one whose
# provenance alone changed (a review keeps the writer): shared by both projection paths.
# New text comes with its lexical text (migration 21), or with none (NULL: found by no word until
# the write path's search step fills it), never with the old one.
_UPDATE_BLOCK = (
    "UPDATE blocks SET position = ?, type = ?, text = ?, attrs = ?, origin = ?, review_state = ?,"
    " lexical_text = ?,"
    " updated_at = ?, author_kind = ?, author_id = ?, author_token_id = ?, written_at = ?"
    " WHERE workspace_id = ? AND note_id = ? AND block_id = ?"
)
_REVIEW_BLOCK = (
    "UPDATE blocks SET position = ?, origin = ?, review_state = ?, updated_at = ?"
    " WHERE workspace_id = ? AND note_id = ? AND block_id = ?"
)


class Dialect:
    """How one backend spells placeholders and values."""

    name: ClassVar[str]
    for_update: ClassVar[str] = ""

    def __init__(self) -> None:
        self._cache: dict[str, str] = {}

    def sql(self, text: str) -> str:
        return text

    # values in / out
    def ts(self, value: datetime | None) -> Any:
        return value

    def ts_out(self, value: Any) -> datetime | None:
        return value

    def js(self, value: Any) -> Any:
        return value

    def js_out(self, value: Any) -> Any:
        return value

    def ids(self, values: Iterable[str]) -> Any:
        return list(values)

    # `column IN <ids>` with one bound parameter
    def in_ids(self, column: str) -> str:
        raise NotImplementedError

    # A JSON object column's text value at one key: `json_text(column)` takes `json_key(key)` bound
    def json_text(self, column: str) -> str:
        raise NotImplementedError

    def json_key(self, key: str) -> Any:
        return key


class WorkspaceTx:
    """One transaction acting for one workspace. Obtain it from ``Store.read``/``Store.write``."""

    def __init__(self, conn: Any, dialect: Dialect, workspace_id: str, *, writable: bool,
                 store: Store | None = None) -> None:
        self._conn = conn
        self._d = dialect
        self.workspace_id = workspace_id
        self.writable = writable
        self._store = store

    # ------------------------------------------------------------------ plumbing

    def _x(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(self._d.sql(sql), params)

    def _many(self, sql: str, rows: list[Sequence[Any]]) -> None:
        if rows:
            self._conn.cursor().executemany(self._d.sql(sql), rows)

    @property
    def parallel_reads(self) -> int:
        """How many statements :meth:`fan_out` may run side by side (1: one at a time)."""
        return 1

    def fan_out(self, sql: str, param_sets: Sequence[Sequence[Any]]) -> list[list[Any]]:
        """The rows of one read-only statement for each parameter set, in order.
        Here one after another in this transaction; the SQLite backend runs them
        side by side when its pool has idle connections (SqliteWorkspaceTx)."""
        return [self._x(sql, params).fetchall() for params in param_sets]

    def _w(self) -> None:
        if not self.writable:
            raise RuntimeError("this transaction was opened with Store.read(); use Store.write()")

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
    def oauth(self) -> OAuthGrants:
        """OAuth grants, their refresh tokens, and the secret of each grant's access token (fastpad/store/oauth.py)."""
        return OAuthGrants(self)

    # ------------------------------------------------------------------ workspace, people, members

    def insert_workspace(self, name: str, at: datetime) -> WorkspaceRow:
        self._w()
        self._x(
            "INSERT INTO workspaces (id, name, feed_seq, created_at) VALUES (?, ?, 0, ?)",
            (self.workspace_id, name, self._d.ts(at)),
        )
        return WorkspaceRow(self.workspace_id, name, at)

    def workspace(self) -> WorkspaceRow | None:
        row = self._x("SELECT id, name, created_at FROM workspaces WHERE id = ?", (self.workspace_id,)).fetchone()
        return WorkspaceRow(row[0], row[1], self._d.ts_out(row[2])) if row else None

    def insert_person(self, person: PersonRow) -> None:
        """People are global; this transaction's workspace is where they are being added."""
        self._w()
        self._x(
            "INSERT INTO people (id, email, display_name, password_hash, created_at) VALUES (?, ?, ?, ?, ?)",
            (person.id, person.email, person.display_name, person.password_hash, self._d.ts(person.created_at)),
        )

    def add_member(self, person_id: str, role: str, at: datetime) -> None:
        self._w()
        self._x(
            "INSERT INTO workspace_members (workspace_id, person_id, role, created_at) VALUES (?, ?, ?, ?)",
            (self.workspace_id, person_id, role, self._d.ts(at)),
        )

    def remove_member(self, person_id: str) -> bool:
        self._w()
        cur = self._x("DELETE FROM workspace_members WHERE workspace_id = ? AND person_id = ?",
                      (self.workspace_id, person_id))
        return cur.rowcount > 0

    def member(self, person_id: str) -> MemberRow | None:
        row = self._x(
            "SELECT workspace_id, person_id, role, created_at FROM workspace_members"
            " WHERE workspace_id = ? AND person_id = ?",
            (self.workspace_id, person_id),
        ).fetchone()
        return MemberRow(row[0], row[1], row[2], self._d.ts_out(row[3])) if row else None

    def members(self) -> list[tuple[PersonRow, str]]:
        rows = self._x(
            "SELECT p.id, p.email, p.display_name, p.password_hash, p.created_at, m.role"
            " FROM workspace_members m JOIN people p ON p.id = m.person_id"
            " WHERE m.workspace_id = ? ORDER BY m.created_at, p.id",
            (self.workspace_id,),
        ).fetchall()
        return [(self._person(r), r[5]) for r in rows]

    def person(self, person_id: str) -> PersonRow | None:
        """A person, only if they are a member of this workspace."""
        row = self._x(
            "SELECT p.id, p.email, p.display_name, p.password_hash, p.created_at"
            " FROM people p JOIN workspace_members m ON m.person_id = p.id"
            " WHERE m.workspace_id = ? AND p.id = ?",
            (self.workspace_id, person_id),
        ).fetchone()
        return self._person(row) if row else None

    def person_by_email(self, email: str) -> PersonRow | None:
        """A member of this workspace by (lower-cased) email."""
        row = self._x(
            "SELECT p.id, p.email, p.display_name, p.password_hash, p.created_at"
            " FROM people p JOIN workspace_members m ON m.person_id = p.id"
            " WHERE m.workspace_id = ? AND p.email = ?",
            (self.workspace_id, email),
        ).fetchone()
        return self._person(row) if row else None

    def set_password_hash(self, person_id: str, password_hash: str | None) -> None:
        """Only for a member of this workspace."""
        self._w()
        self._x(
            "UPDATE people SET password_hash = ? WHERE id = ?"
            " AND id IN (SELECT person_id FROM workspace_members WHERE workspace_id = ?)",
            (password_hash, person_id, self.workspace_id),
        )

    def _person(self, r: Sequence[Any]) -> PersonRow:
        return PersonRow(r[0], r[1], r[2], r[3], self._d.ts_out(r[4]))

    # ------------------------------------------------------------------ agents

    def insert_agent(self, agent: AgentRow) -> None:
        self._w()
        self._x(
            "INSERT INTO agents (id, workspace_id, name, created_by, created_at) VALUES (?, ?, ?, ?, ?)",
            (agent.id, self.workspace_id, agent.name, agent.created_by, self._d.ts(agent.created_at)),
        )

    def agent(self, agent_id: str) -> AgentRow | None:
        row = self._x(
            "SELECT id, name, created_by, created_at FROM agents WHERE workspace_id = ? AND id = ?",
            (self.workspace_id, agent_id),
        ).fetchone()
        return AgentRow(row[0], row[1], row[2], self._d.ts_out(row[3])) if row else None

    # ------------------------------------------------------------------ tokens

    _TOKEN_COLUMNS = (
        "id, token_hash, prefix, label, kind, agent_id, person_id, scopes, note_ids, auto_apply,"
        " rate_limit_per_minute, parent_id, root_id, created_by_kind, created_by_id, expires_at,"
        " revoked_at, last_used_at, created_at, ask_cap, ask_spent"
    )

    def insert_token(self, t: TokenRow) -> None:
        self._w()
        d = self._d
        self._x(
            f"INSERT INTO tokens (workspace_id, {self._TOKEN_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.workspace_id, t.id, t.token_hash, t.prefix, t.label, t.kind, t.agent_id, t.person_id,
                d.js(list(t.scopes)), None if t.note_ids is None else d.js(list(t.note_ids)), t.auto_apply,
                t.rate_limit_per_minute, t.parent_id, t.root_id, t.created_by_kind, t.created_by_id,
                d.ts(t.expires_at), d.ts(t.revoked_at), d.ts(t.last_used_at), d.ts(t.created_at),
                t.ask_cap, t.ask_spent,
            ),
        )
        self._index_credential("token", t.token_hash, t.id)

    def token(self, token_id: str, *, for_update: bool = False) -> TokenRow | None:
        lock = self._d.for_update if for_update else ""
        row = self._x(
            f"SELECT {self._TOKEN_COLUMNS} FROM tokens WHERE workspace_id = ? AND id = ?{lock}",
            (self.workspace_id, token_id),
        ).fetchone()
        return self._token(row) if row else None

    def tokens(self) -> list[TokenRow]:
        rows = self._x(
            f"SELECT {self._TOKEN_COLUMNS} FROM tokens WHERE workspace_id = ? ORDER BY created_at, id",
            (self.workspace_id,),
        ).fetchall()
        return [self._token(r) for r in rows]

    def revoke_token_tree(self, token_id: str, at: datetime) -> list[str]:
        """Revoke a token and every token delegated from it, transitively.
        Returns the ids this call revoked (already-revoked ones are left as they were)."""
        self._w()
        rows = self._x(
            "WITH RECURSIVE tree(id) AS ("
            "  SELECT id FROM tokens WHERE workspace_id = ? AND id = ?"
            "  UNION SELECT t.id FROM tokens t JOIN tree ON t.parent_id = tree.id WHERE t.workspace_id = ?"
            ") UPDATE tokens SET revoked_at = ?"
            " WHERE workspace_id = ? AND id IN (SELECT id FROM tree) AND revoked_at IS NULL RETURNING id",
            (self.workspace_id, token_id, self.workspace_id, self._d.ts(at), self.workspace_id),
        ).fetchall()
        return sorted(r[0] for r in rows)

    def touch_token(self, token_id: str, at: datetime) -> None:
        self._w()
        self._x(
            "UPDATE tokens SET last_used_at = ? WHERE workspace_id = ? AND id = ?",
            (self._d.ts(at), self.workspace_id, token_id),
        )

    # A token and every token it was delegated from, nearest first: a question is held to each
    # one's cap and charged to each, so delegating cannot buy a second allowance.
    _TOKEN_CHAIN = (
        "WITH RECURSIVE chain(id, parent_id, depth) AS ("
        "  SELECT id, parent_id, 0 FROM tokens WHERE workspace_id = ? AND id = ?"
        "  UNION ALL SELECT t.id, t.parent_id, c.depth + 1 FROM tokens t JOIN chain c ON t.id = c.parent_id"
        "  WHERE t.workspace_id = ?"
        ")"
    )

    def ask_spending(self, token_id: str, *, for_update: bool = False) -> list[tuple[str, int | None, int]]:
        """``(token id, ask_cap, ask_spent)`` for the token and its ancestors, nearest first.
        ``for_update`` locks those rows (PostgreSQL; a SQLite writer holds the database) until the
        transaction ends, so a reservation reads and adds to the spend with no one in between.
        Chains lock nearest first, so two chains meet only on shared ancestors, in one order."""
        lock = f"{self._d.for_update} OF t" if for_update and self._d.for_update else ""
        rows = self._x(
            f"{self._TOKEN_CHAIN} SELECT t.id, t.ask_cap, t.ask_spent FROM chain c"
            f" JOIN tokens t ON t.id = c.id AND t.workspace_id = ? ORDER BY c.depth{lock}",
            (self.workspace_id, token_id, self.workspace_id, self.workspace_id),
        ).fetchall()
        return [(r[0], None if r[1] is None else int(r[1]), int(r[2])) for r in rows]

    def add_ask_spend(self, token_id: str, spent: int) -> None:
        """Charge ``spent`` provider tokens to the token and every token it was delegated from
        (a negative ``spent`` gives back what a reservation held beyond the answer's cost)."""
        self._w()
        self._x(
            f"{self._TOKEN_CHAIN} UPDATE tokens SET ask_spent = ask_spent + ?"
            " WHERE workspace_id = ? AND id IN (SELECT id FROM chain)",
            (self.workspace_id, token_id, self.workspace_id, spent, self.workspace_id),
        )

    def _token(self, r: Sequence[Any]) -> TokenRow:
        d = self._d
        note_ids = d.js_out(r[8])
        return TokenRow(
            id=r[0], token_hash=r[1], prefix=r[2], label=r[3], kind=r[4], agent_id=r[5], person_id=r[6],
            scopes=tuple(d.js_out(r[7])), note_ids=None if note_ids is None else tuple(note_ids),
            auto_apply=bool(r[9]), rate_limit_per_minute=int(r[10]), parent_id=r[11], root_id=r[12],
            created_by_kind=r[13], created_by_id=r[14], expires_at=d.ts_out(r[15]),
            revoked_at=d.ts_out(r[16]), last_used_at=d.ts_out(r[17]), created_at=d.ts_out(r[18]),
            ask_cap=None if r[19] is None else int(r[19]), ask_spent=int(r[20]),
        )

    def _index_credential(self, kind: str, credential_hash: str, subject_id: str) -> None:
        self._x(
            "INSERT INTO credential_index (hash, kind, workspace_id, subject_id) VALUES (?, ?, ?, ?)",
            (credential_hash, kind, self.workspace_id, subject_id),
        )

    # ------------------------------------------------------------------ web sessions

    def insert_session(self, s: SessionRow) -> None:
        self._w()
        d = self._d
        self._x(
            "INSERT INTO web_sessions (id, workspace_id, person_id, session_hash, created_at, expires_at,"
            " last_seen_at, ended_at, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (s.id, self.workspace_id, s.person_id, s.session_hash, d.ts(s.created_at), d.ts(s.expires_at),
             d.ts(s.last_seen_at), d.ts(s.ended_at), s.user_agent),
        )
        self._index_credential("session", s.session_hash, s.id)

    def session(self, session_id: str) -> SessionRow | None:
        row = self._x(
            "SELECT id, person_id, session_hash, created_at, expires_at, last_seen_at, ended_at"
            " FROM web_sessions WHERE workspace_id = ? AND id = ?",
            (self.workspace_id, session_id),
        ).fetchone()
        if not row:
            return None
        d = self._d
        return SessionRow(row[0], row[1], row[2], d.ts_out(row[3]), d.ts_out(row[4]), d.ts_out(row[5]),
                          d.ts_out(row[6]))

    def touch_session(self, session_id: str, at: datetime) -> None:
        self._w()
        self._x("UPDATE web_sessions SET last_seen_at = ? WHERE workspace_id = ? AND id = ?",
                (self._d.ts(at), self.workspace_id, session_id))

    def end_session(self, session_id: str, at: datetime) -> None:
        self._w()
        self._x(
            "UPDATE web_sessions SET ended_at = ? WHERE workspace_id = ? AND id = ? AND ended_at IS NULL",
            (self._d.ts(at), self.workspace_id, session_id),
        )

    def end_sessions_of(self, person_id: str, at: datetime) -> int:
        """End every open session the person holds in this workspace; how many were open."""
        self._w()
        return self._x(
            "UPDATE web_sessions SET ended_at = ? WHERE workspace_id = ? AND person_id = ? AND ended_at IS NULL",
            (self._d.ts(at), self.workspace_id, person_id),
        ).rowcount or 0

    # ------------------------------------------------------------------ notes: reads

    _NOTE_COLUMNS = "id, title, types, properties, frontier, op_seq, archived_at, trashed_at, created_at, updated_at"

    def note(self, note_id: str, *, with_snapshot: bool = False, for_update: bool = False) -> NoteRow | None:
        lock = self._d.for_update if for_update else ""
        row = self._x(
            f"SELECT {self._NOTE_COLUMNS} FROM notes WHERE workspace_id = ? AND id = ?{lock}", (self.workspace_id, note_id)
        ).fetchone()
        if row is None:
            return None
        snapshot = None
        if with_snapshot:
            # A statement of its own, after the lock: on PostgreSQL a writer that
            # waited for the note row must read the snapshot the previous writer
            # committed, which the locking statement's own view predates.
            snapshot = bytes(self._x("SELECT snapshot FROM note_snapshots WHERE workspace_id = ? AND note_id = ?",
                                     (self.workspace_id, note_id)).fetchone()[0])
        return self._note(row, snapshot)

    def name_provenance(self, note_ids: Iterable[str]) -> dict[str, NameProvenance]:
        """Whose each named note's title and properties are (notes it does not have are left out)."""
        wanted = sorted(set(note_ids))
        if not wanted:
            return {}
        rows = self._x(f"SELECT id, title_origin, title_review_state, property_provenance FROM notes"
                       f" WHERE workspace_id = ? AND {self._d.in_ids('id')}",
                       (self.workspace_id, self._d.ids(wanted))).fetchall()
        return {r[0]: NameProvenance((r[1], r[2]), {name: tuple(pair.split("|", 1))  # type: ignore[misc]
                                                    for name, pair in self._d.js_out(r[3]).items()})
                for r in rows}

    def list_notes(
        self,
        *,
        after_id: str | None = None,
        limit: int = 50,
        include_archived: bool = False,
        include_trashed: bool = False,
        note_ids: Iterable[str] | None = None,
        within_folder: tuple[str, str] | None = None,
    ) -> list[NoteRow]:
        """Keyset page of notes in id (creation) order, strictly after ``after_id``.
        ``within_folder``: (property, folder) — only notes whose text property is that
        '/'-separated folder or a folder beneath it."""
        where = ["workspace_id = ?"]
        params: list[Any] = [self.workspace_id]
        if after_id is not None:
            where.append("id > ?")
            params.append(after_id)
        if not include_archived:
            where.append("archived_at IS NULL")
        if not include_trashed:
            where.append("trashed_at IS NULL")
        if note_ids is not None:
            where.append(self._d.in_ids("id"))
            params.append(self._d.ids(note_ids))
        if within_folder is not None:
            key, folder = within_folder
            value = self._d.json_text("properties")
            where.append(f"({value} = ? OR substr({value}, 1, ?) = ?)")
            path = self._d.json_key(key)
            params += [path, folder, path, len(folder) + 1, folder + "/"]
        params.append(int(limit))
        rows = self._x(
            f"SELECT {self._NOTE_COLUMNS} FROM notes WHERE {' AND '.join(where)} ORDER BY id LIMIT ?", params
        ).fetchall()
        return [self._note(r) for r in rows]

    def existing_note_ids(self, note_ids: Iterable[str]) -> set[str]:
        ids = list(dict.fromkeys(note_ids))
        if not ids:
            return set()
        rows = self._x(
            f"SELECT id FROM notes WHERE workspace_id = ? AND {self._d.in_ids('id')}",
            (self.workspace_id, self._d.ids(ids)),
        ).fetchall()
        return {r[0] for r in rows}

    def block_ids_held_elsewhere(self, block_ids: Iterable[str], note_id: str) -> set[str]:
        """Which of ``block_ids`` a note other than ``note_id`` holds (in the trash or not): block
        ids are unique across the workspace, so those cannot be given to ``note_id``'s blocks."""
        ids = sorted(set(block_ids))
        if not ids:
            return set()
        rows = self._x(
            f"SELECT DISTINCT block_id FROM blocks WHERE workspace_id = ? AND {self._d.in_ids('block_id')}"
            " AND note_id <> ?",
            (self.workspace_id, self._d.ids(ids), note_id),
        ).fetchall()
        return {r[0] for r in rows}

    _BLOCK_COLUMNS = "block_id, position, type, text, attrs, origin, review_state"

    def blocks(self, note_id: str) -> list[BlockRow]:
        return self._block_rows(note_id, "", ())

    def blocks_by_id(self, note_id: str, block_ids: Iterable[str]) -> list[BlockRow]:
        """Some of the note's blocks, in note order (ids it does not have are left out)."""
        wanted = sorted(set(block_ids))
        if not wanted:
            return []
        return self._block_rows(note_id, f" AND {self._d.in_ids('block_id')}", (self._d.ids(wanted),))

    def blocks_between(self, note_id: str, after: int, before: int | None) -> list[BlockRow]:
        """The note's blocks at positions strictly between ``after`` and ``before`` (None: to the end)."""
        if before is None:
            return self._block_rows(note_id, " AND position > ?", (after,))
        return self._block_rows(note_id, " AND position > ? AND position < ?", (after, before))

    def heading_blocks(self, note_id: str) -> list[BlockRow]:
        """The note's headings, in note order: its section structure, without the sections' text."""
        return self._block_rows(note_id, " AND type = 'heading'", ())

    def blocks_with_link_marks(self, note_id: str) -> list[BlockRow]:
        """The note's blocks whose text holds ``[[`` or ``@`` — every block that can link
        anywhere (``wikilinks.extract_links`` reads no other), in note order."""
        return self._block_rows(note_id, " AND (text LIKE ? OR text LIKE ?)", ("%[[%", "%@%"))

    def _block_rows(self, note_id: str, where: str, params: Sequence[Any]) -> list[BlockRow]:
        rows = self._x(
            f"SELECT {self._BLOCK_COLUMNS} FROM blocks WHERE workspace_id = ? AND note_id = ?{where} ORDER BY position",
            (self.workspace_id, note_id, *params),
        ).fetchall()
        return [BlockRow(r[0], r[1], r[2], r[3], self._d.js_out(r[4]), r[5], r[6]) for r in rows]

    def op_log(self, note_id: str, *, after_seq: int = 0) -> list[OpLogEntry]:
        rows = self._x(
            "SELECT seq, kind, payload, peer_id, frontier, principal_kind, principal_id, token_id, origin,"
            " created_at FROM note_updates WHERE workspace_id = ? AND note_id = ? AND seq > ? ORDER BY seq",
            (self.workspace_id, note_id, after_seq),
        ).fetchall()
        return [
            OpLogEntry(r[0], r[1], bytes(r[2]), r[3], r[4], r[5], r[6], r[7], r[8], self._d.ts_out(r[9]))
            for r in rows
        ]

    def frontier_after_last_write_besides(self, note_id: str, kind: str) -> str | None:
        """The note's frontier after its latest op-log write of any kind but ``kind`` (None: it has none)."""
        row = self._x(
            "SELECT frontier FROM note_updates WHERE workspace_id = ? AND note_id = ? AND kind <> ?"
            " ORDER BY seq DESC LIMIT 1",
            (self.workspace_id, note_id, kind),
        ).fetchone()
        return None if row is None else row[0]

    def _note(self, r: Sequence[Any], snapshot: bytes | None = None) -> NoteRow:
        d = self._d
        return NoteRow(
            id=r[0], title=r[1], types=tuple(d.js_out(r[2])), properties=d.js_out(r[3]), frontier=r[4],
            op_seq=int(r[5]), archived_at=d.ts_out(r[6]), trashed_at=d.ts_out(r[7]),
            created_at=d.ts_out(r[8]), updated_at=d.ts_out(r[9]),
            snapshot=snapshot,
        )

    # ------------------------------------------------------------------ notes: the single write path

    def write_note(self, w: NoteWrite, *, previous_blocks: list[BlockRow] | None = None,
                   lexical: Callable[[str], str] | None = None) -> int:
        """Apply one committed write: op log, note row, block projection (and
        with it the lexical index), change feed — all in this transaction.
        Returns the change-feed seq. ``previous_blocks`` is the projection the
        caller read in this transaction, if it has it (saves a read).
        ``lexical`` maps a text to what the lexical index may hold of it (the write
        path's: the text less its secrets); without it a written text or title is
        found by no word until the search step fills it (migration 21).

        Raises NotFound for a missing note, StaleFrontier when the stored
        frontier is not ``w.expected_frontier``, and Conflict when a create's note id
        is taken; the caller's transaction then rolls back with nothing written.
        """
        self._w()
        d = self._d
        at = d.ts(w.at)
        if w.kind == "create":
            if w.snapshot is None or w.frontier is None:
                raise ValueError("a create needs a snapshot and a frontier")
            seq = 1 if w.update is not None else 0
            # A note id is unique across the deployment, and a client may choose one (a note adopted
            # from a browser): one held by any workspace — this transaction cannot see the others' —
            # inserts nothing here, and is a typed Conflict rather than an integrity error.
            inserted = self._x(
                "INSERT INTO notes (id, workspace_id, title, lexical_title, title_origin, title_review_state,"
                " property_provenance, types, properties, frontier, op_seq, created_by_kind, created_by_id,"
                " archived_at, trashed_at, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id",
                (
                    w.note_id, self.workspace_id, w.title or "", None if lexical is None else lexical(w.title or ""),
                    *(w.title_provenance or _PERSONS_OWN), d.js(_pairs_out(w.property_provenance or {})),
                    d.js(list(w.types or ())), d.js(dict(w.properties or {})), w.frontier, seq, w.actor.kind,
                    w.actor.id, at, at,
                ),
            ).fetchone()
            if inserted is None:
                raise Conflict(detail=f"the note id {w.note_id} is taken: choose another",
                               extra={"reason": "id_taken", "note_id": w.note_id})
            self._x("INSERT INTO note_snapshots (note_id, workspace_id, snapshot) VALUES (?, ?, ?)",
                    (w.note_id, self.workspace_id, w.snapshot))
            previous_blocks = []
        else:
            if w.expected_frontier is None:
                raise ValueError("an update needs expected_frontier")
            sets, params = ["updated_at = ?"], [at]
            if w.snapshot is not None:
                sets.append("frontier = ?")
                params.append(w.frontier)
            if w.title is not None:
                sets.append("title = ?, lexical_title = ?")
                params += [w.title, None if lexical is None else lexical(w.title)]
            if w.title_provenance is not None:
                sets.append("title_origin = ?, title_review_state = ?")
                params.extend(w.title_provenance)
            if w.property_provenance is not None:
                sets.append("property_provenance = ?")
                params.append(d.js(_pairs_out(w.property_provenance)))
            if w.types is not None:
                sets.append("types = ?")
                params.append(d.js(list(w.types)))
            if w.properties is not None:
                sets.append("properties = ?")
                params.append(d.js(dict(w.properties)))
            if w.update is not None:
                sets.append("op_seq = op_seq + 1")
            if w.archived_at is not UNCHANGED:
                sets.append("archived_at = ?")
                params.append(d.ts(w.archived_at))
            if w.trashed_at is not UNCHANGED:
                sets.append("trashed_at = ?")
                params.append(d.ts(w.trashed_at))
            row = self._x(
                f"UPDATE notes SET {', '.join(sets)} WHERE workspace_id = ? AND id = ? AND frontier = ?"
                " RETURNING op_seq",
                (*params, self.workspace_id, w.note_id, w.expected_frontier),
            ).fetchone()
            if row is None:
                current = self.note(w.note_id)
                if current is None:
                    raise NotFound(detail=f"note {w.note_id} not found")
                raise StaleFrontier(
                    detail="the note changed since that frontier was read",
                    extra={"expected_frontier": w.expected_frontier, "current_frontier": current.frontier},
                )
            seq = int(row[0])
            if w.snapshot is not None:
                self._x("UPDATE note_snapshots SET snapshot = ? WHERE workspace_id = ? AND note_id = ?",
                        (w.snapshot, self.workspace_id, w.note_id))
        if w.update is not None:
            self._x(
                "INSERT INTO note_updates (workspace_id, note_id, seq, kind, payload, peer_id, frontier,"
                " principal_kind, principal_id, token_id, origin, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.workspace_id, w.note_id, seq, w.kind, w.update, w.peer_id, w.frontier or w.expected_frontier,
                    w.actor.kind, w.actor.id, w.actor.token_id, w.actor.origin, at,
                ),
            )
        if w.blocks is not None:
            touched = self._project(w.note_id, w.blocks, previous_blocks, at, w.actor, lexical)
        elif w.block_edits is not None:
            touched = self._project_edits(w.note_id, w.block_edits, at, w.actor, lexical)
        else:
            touched = []
        return self.feed.append(w.kind, at=w.at, actor=w.actor, note_id=w.note_id, block_ids=touched)

    def _project_edits(self, note_id: str, edits: BlockEdits, at: Any, author: Actor,
                       lexical: Callable[[str], str] | None) -> list[str]:
        """``_project`` for a write that names the blocks it changed (``BlockEdits``): the
        same statements, for those rows only. Returns what ``_project`` would."""
        d, ws = self._d, self.workspace_id
        before = {b.block_id: b for b in edits.previous}
        by = (author.kind, author.id, author.token_id, at)
        updates, reviews, touched = [], [], []
        for b in edits.rows:
            old = before.get(b.block_id)
            if old is None or old.position != b.position:
                raise ValueError("block edits change stored blocks in place")
            if (old.type, old.text, old.attrs) != (b.type, b.text, b.attrs):
                updates.append((b.position, b.type, b.text, d.js(b.attrs), b.origin, b.review_state,
                                None if lexical is None else lexical(b.text), at, *by, ws, note_id, b.block_id))
            elif (old.origin, old.review_state) != (b.origin, b.review_state):
                reviews.append((b.position, b.origin, b.review_state, at, ws, note_id, b.block_id))
            else:
                continue
            touched.append(b.block_id)
        self._many(_UPDATE_BLOCK, updates)
        self._many(_REVIEW_BLOCK, reviews)
        return touched

    def _project(
        self, note_id: str, blocks: list[BlockRow], previous: list[BlockRow] | None, at: Any, author: Actor,
        lexical: Callable[[str], str] | None = None,
    ) -> list[str]:
        """Bring the block projection to ``blocks`` touching only rows that changed
        (the lexical index follows every row change in the same statement).
        A block whose content changed records ``author`` as its last writer; a
        change of provenance alone (a review) keeps the writer. Returns the ids
        of the blocks inserted, changed or deleted (a position shift is not a change)."""
        d, ws = self._d, self.workspace_id
        before = {b.block_id: b for b in (previous if previous is not None else self.blocks(note_id))}
        after_ids = {b.block_id for b in blocks}
        if len(after_ids) != len(blocks):
            raise ValueError("a block id appears twice in one note")
        deleted = [block_id for block_id in before if block_id not in after_ids]
        self._many(
            "DELETE FROM blocks WHERE workspace_id = ? AND note_id = ? AND block_id = ?",
            [(ws, note_id, block_id) for block_id in deleted],
        )
        inserts, updates, reviews, moves, touched = [], [], [], [], []
        by = (author.kind, author.id, author.token_id, at)
        for position, b in enumerate(blocks):
            old = before.get(b.block_id)
            if old is None:
                inserts.append((ws, note_id, b.block_id, position, b.type, b.text,
                                None if lexical is None else lexical(b.text), d.js(b.attrs), b.origin,
                                b.review_state, at, *by))
            elif (old.type, old.text, old.attrs) != (b.type, b.text, b.attrs):
                updates.append((position, b.type, b.text, d.js(b.attrs), b.origin, b.review_state,
                                None if lexical is None else lexical(b.text), at, *by, ws, note_id, b.block_id))
            elif (old.origin, old.review_state) != (b.origin, b.review_state):
                reviews.append((position, b.origin, b.review_state, at, ws, note_id, b.block_id))
            else:
                if old.position != position:
                    moves.append((position, ws, note_id, b.block_id))
                continue
            touched.append(b.block_id)
        self._many(
            "INSERT INTO blocks (workspace_id, note_id, block_id, position, type, text, lexical_text, attrs, origin,"
            " review_state, updated_at, author_kind, author_id, author_token_id, written_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            inserts,
        )
        self._many(_UPDATE_BLOCK, updates)
        self._many(_REVIEW_BLOCK, reviews)
        self._many(
            "UPDATE blocks SET position = ? WHERE workspace_id = ? AND note_id = ? AND block_id = ?", moves
        )
        return touched + deleted

    # ------------------------------------------------------------------ idempotency

    def idempotency_get(self, principal_key: str, key: str, *, now: datetime | None = None) -> IdempotencyRecord | None:
        cutoff = (now or utcnow()) - IDEMPOTENCY_TTL
        row = self._x(
            "SELECT request_hash, status, headers, body, created_at FROM idempotency_keys"
            " WHERE workspace_id = ? AND principal_key = ? AND key = ? AND created_at > ?",
            (self.workspace_id, principal_key, key, self._d.ts(cutoff)),
        ).fetchone()
        if not row:
            return None
        return IdempotencyRecord(row[0], int(row[1]), dict(self._d.js_out(row[2])), bytes(row[3]),
                                 self._d.ts_out(row[4]))

    def idempotency_sweep(self, now: datetime) -> int:
        """Delete the records no request can replay any more; returns how many."""
        self._w()
        cur = self._x("DELETE FROM idempotency_keys WHERE workspace_id = ? AND created_at <= ?",
                      (self.workspace_id, self._d.ts(now - IDEMPOTENCY_TTL)))
        return int(cur.rowcount)

    def idempotency_claim(self, principal_key: str, key: str, request_hash: str, written: bytes) -> None:
        """Hold ``key`` in this transaction, the one of the write it guards (store/claims.py): a
        claim row (status 0) that the response replaces when the call returns."""
        self._idempotency_upsert(principal_key, key, IdempotencyRecord(request_hash, claims.CLAIMED, {}, written))

    def idempotency_put(self, principal_key: str, key: str, record: IdempotencyRecord, *, now: datetime | None = None) -> bool:
        """Store the first response for a key, replacing the key's claim. Returns False when a
        live response already holds the key (the first one wins; it is never overwritten)."""
        return self._idempotency_upsert(principal_key, key, record, now=now)

    def _idempotency_upsert(self, principal_key: str, key: str, record: IdempotencyRecord, *,
                            now: datetime | None = None) -> bool:
        # Replaces only a claim or an expired record: a live response is never overwritten.
        self._w()
        now = now or utcnow()
        d = self._d
        cur = self._x(
            "INSERT INTO idempotency_keys (workspace_id, principal_key, key, request_hash, status, headers,"
            " body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (workspace_id, principal_key, key) DO UPDATE SET request_hash = excluded.request_hash,"
            " status = excluded.status, headers = excluded.headers, body = excluded.body,"
            " created_at = excluded.created_at"
            " WHERE idempotency_keys.status = ? OR idempotency_keys.created_at <= ?",
            (self.workspace_id, principal_key, key, record.request_hash, int(record.status),
             d.js(dict(record.headers)), bytes(record.body), d.ts(now), claims.CLAIMED, d.ts(now - IDEMPOTENCY_TTL)),
        )
        return cur.rowcount > 0


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
            return tx.idempotency_get(principal_key, key)

    def idempotency_save(self, workspace_id: str, principal_key: str, key: str, record: IdempotencyRecord) -> bool:
        with self.write(workspace_id) as tx:
            return tx.idempotency_put(principal_key, key, record)

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


def _pairs_out(provenance: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """A property provenance map as ``notes.property_provenance`` holds it: name -> "origin|review"."""
    return {name: f"{origin}|{review}" for name, (origin, review) in provenance.items()}
