"""Statements for the workspace audit log: ``tx.audit``.

Append-only (the table refuses UPDATE and DELETE on both backends). Like every
statement in the store, each adds ``workspace_id = ?`` itself. Pages are read
newest first by ``seq``, keyset style: a page ends at a ``seq`` and the next
page starts below it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class AuditRow:
    """One entry. ``seq`` is None until it is written."""

    at: datetime
    actor_kind: str  # person | agent | operator | system | anonymous
    actor_id: str | None
    token_id: str | None
    action: str
    note_id: str | None = None
    target: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    seq: int | None = None


@dataclass(frozen=True)
class AuditFilter:
    """What a page of the log is narrowed to; None everywhere is the whole log."""

    actor_id: str | None = None  # a person's, an agent's or a token's id
    action: str | None = None
    note_id: str | None = None
    since: datetime | None = None  # inclusive
    until: datetime | None = None  # exclusive


class AuditLog:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self._d = tx._d
        self._ws = tx.workspace_id

    def append(self, e: AuditRow) -> None:
        self._tx._w()
        self._tx._x(
            "INSERT INTO audit_log (workspace_id, at, actor_kind, actor_id, token_id, action, note_id, target, details)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self._ws, self._d.ts(e.at), e.actor_kind, e.actor_id, e.token_id, e.action, e.note_id, e.target,
             self._d.js(dict(e.details))),
        )

    def page(self, which: AuditFilter, *, before_seq: int | None, limit: int) -> list[AuditRow]:
        """Up to ``limit`` entries matching ``which``, newest first, all below ``before_seq``."""
        where, params = ["workspace_id = ?"], [self._ws]
        if before_seq is not None:
            where.append("seq < ?")
            params.append(int(before_seq))
        if which.actor_id is not None:
            where.append("(actor_id = ? OR token_id = ?)")
            params += [which.actor_id, which.actor_id]
        for column, value in (("action", which.action), ("note_id", which.note_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if which.since is not None:
            where.append("at >= ?")
            params.append(self._d.ts(which.since))
        if which.until is not None:
            where.append("at < ?")
            params.append(self._d.ts(which.until))
        params.append(int(limit))
        rows = self._tx._x(
            "SELECT seq, at, actor_kind, actor_id, token_id, action, note_id, target, details FROM audit_log"
            f" WHERE {' AND '.join(where)} ORDER BY seq DESC LIMIT ?",
            params,
        ).fetchall()
        d = self._d
        return [AuditRow(seq=int(r[0]), at=d.ts_out(r[1]), actor_kind=r[2], actor_id=r[3], token_id=r[4],
                         action=r[5], note_id=r[6], target=r[7], details=d.js_out(r[8]) or {}) for r in rows]
