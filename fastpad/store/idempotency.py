"""Statements for idempotency keys: ``tx.idempotency`` — the response a keyed request got, kept
for a day so a retry replays it, and the claim a keyed write holds in its own transaction
(store/claims.py).

Like every statement in the store, each adds ``workspace_id = ?`` itself.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from fastpad.store import claims
from fastpad.store.records import IdempotencyRecord
from fastpad.store.tx_core import utcnow

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx

IDEMPOTENCY_TTL = timedelta(hours=24)


class IdempotencyKeys:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self._d = tx._d
        self._ws = tx.workspace_id

    def get(self, principal_key: str, key: str, *, now: datetime | None = None) -> IdempotencyRecord | None:
        cutoff = (now or utcnow()) - IDEMPOTENCY_TTL
        row = self._tx._x(
            "SELECT request_hash, status, headers, body, created_at FROM idempotency_keys"
            " WHERE workspace_id = ? AND principal_key = ? AND key = ? AND created_at > ?",
            (self._ws, principal_key, key, self._d.ts(cutoff)),
        ).fetchone()
        if not row:
            return None
        return IdempotencyRecord(row[0], int(row[1]), dict(self._d.js_out(row[2])), bytes(row[3]),
                                 self._d.ts_out(row[4]))

    def sweep(self, now: datetime) -> int:
        """Delete the records no request can replay any more; returns how many."""
        self._tx._w()
        cur = self._tx._x("DELETE FROM idempotency_keys WHERE workspace_id = ? AND created_at <= ?",
                          (self._ws, self._d.ts(now - IDEMPOTENCY_TTL)))
        return int(cur.rowcount)

    def claim(self, principal_key: str, key: str, request_hash: str, written: bytes) -> None:
        """Hold ``key`` in this transaction, the one of the write it guards (store/claims.py): a
        claim row (status 0) that the response replaces when the call returns."""
        self._upsert(principal_key, key, IdempotencyRecord(request_hash, claims.CLAIMED, {}, written))

    def put(self, principal_key: str, key: str, record: IdempotencyRecord, *, now: datetime | None = None) -> bool:
        """Store the first response for a key, replacing the key's claim. Returns False when a
        live response already holds the key (the first one wins; it is never overwritten)."""
        return self._upsert(principal_key, key, record, now=now)

    def _upsert(self, principal_key: str, key: str, record: IdempotencyRecord, *,
                now: datetime | None = None) -> bool:
        # Replaces only a claim or an expired record: a live response is never overwritten.
        self._tx._w()
        now = now or utcnow()
        d = self._d
        cur = self._tx._x(
            "INSERT INTO idempotency_keys (workspace_id, principal_key, key, request_hash, status, headers,"
            " body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (workspace_id, principal_key, key) DO UPDATE SET request_hash = excluded.request_hash,"
            " status = excluded.status, headers = excluded.headers, body = excluded.body,"
            " created_at = excluded.created_at"
            " WHERE idempotency_keys.status = ? OR idempotency_keys.created_at <= ?",
            (self._ws, principal_key, key, record.request_hash, int(record.status),
             d.js(dict(record.headers)), bytes(record.body), d.ts(now), claims.CLAIMED, d.ts(now - IDEMPOTENCY_TTL)),
        )
        return cur.rowcount > 0

