"""Capture receipts: ``tx.captures``. An idempotency key of ``POST /v1/capture`` → the note it created.

Kept as long as the workspace (the generic idempotency records expire after
24 hours), so a capture spooled offline and replayed much later still
acknowledges the note it already created.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class CaptureReceipt:
    key: str
    request_hash: str
    note_id: str
    created_at: datetime


class CaptureReceipts:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx

    def get(self, principal_key: str, key: str) -> CaptureReceipt | None:
        tx = self._tx
        row = tx._x(
            "SELECT key, request_hash, note_id, created_at FROM capture_receipts"
            " WHERE workspace_id = ? AND principal_key = ? AND key = ?",
            (tx.workspace_id, principal_key, key),
        ).fetchone()
        return CaptureReceipt(row[0], row[1], row[2], tx._d.ts_out(row[3])) if row else None

    def put(self, principal_key: str, receipt: CaptureReceipt) -> bool:
        """Record a receipt; False when the key already has one (the first stays)."""
        tx = self._tx
        tx._w()
        cur = tx._x(
            "INSERT INTO capture_receipts (workspace_id, principal_key, key, request_hash, note_id, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, principal_key, key) DO NOTHING",
            (tx.workspace_id, principal_key, receipt.key, receipt.request_hash, receipt.note_id,
             tx._d.ts(receipt.created_at)),
        )
        return cur.rowcount == 1
