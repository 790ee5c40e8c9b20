"""Row methods of ``WorkspaceTx`` for the credentials a workspace issues: bearer tokens (with
their delegation tree and ask spending) and web sessions, each indexed by hash in the
credential index that ``Store.resolve_credential`` reads before a workspace is known (mixed
into ``WorkspaceTx``; callers say ``tx.token(...)``, ``tx.session(...)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from fastpad.store.records import SessionRow, TokenRow
from fastpad.store.tx_core import TxCore


class CredentialRows(TxCore):
    """Bearer tokens and web sessions, and the credential index both are found by."""

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
