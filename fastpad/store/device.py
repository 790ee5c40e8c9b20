"""The statements on ``device_authorizations``: ``fp login``'s pending and decided requests.

A login starts before any workspace is known, so these statements do not run
in a ``WorkspaceTx``. Each transaction names the one row it may touch by the
secret its caller holds — the SHA-256 of the device code (the terminal
polling) or the user code (the person approving) — and every statement
filters on that same value. On PostgreSQL the names are also transaction
settings that the table's forced row-level security policy compares with
(migrations/postgres/0008_device.sql), so a statement that forgot its filter
would still see nothing else. The one statement without a secret is the
sweep of rows that expired long ago, allowed only in a transaction that says
so (``expired_before``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastpad.store.base import Store
    from fastpad.store.tx_core import Dialect


@dataclass(frozen=True)
class DeviceRow:
    device_code_hash: str
    user_code: str
    client_name: str
    scopes: tuple[str, ...]
    interval_s: int
    created_at: datetime
    expires_at: datetime
    last_polled_at: datetime | None
    approver_workspace_id: str | None  # the approving session's workspace: the credential acts there
    approver_id: str | None
    approved: bool | None  # None: nobody has decided yet
    decided_at: datetime | None
    consumed_at: datetime | None
    token_id: str | None


_COLUMNS = (
    "device_code_hash, user_code, client_name, scopes, interval_s, created_at, expires_at, last_polled_at,"
    " approver_workspace_id, approver_id, approved, decided_at, consumed_at, token_id"
)


@contextmanager
def device_transaction(
    store: "Store",
    *,
    write: bool,
    device_code_hash: str | None = None,
    user_code: str | None = None,
    expired_before: datetime | None = None,
) -> Iterator["DeviceAuthorizations"]:
    """A transaction on the rows named by ``device_code_hash`` and/or ``user_code``."""
    settings = {}
    if device_code_hash is not None:
        settings["app.device_code_hash"] = device_code_hash
    if user_code is not None:
        settings["app.user_code"] = user_code
    if expired_before is not None:
        settings["app.device_expired_before"] = expired_before.isoformat()
    if not settings:
        raise ValueError("a device transaction names its row by device code hash or user code")
    with store._transaction(write=write, settings=settings) as conn:  # noqa: SLF001 - the store's own package
        yield DeviceAuthorizations(conn, store.dialect, write=write, expired_before=expired_before)


class DeviceAuthorizations:
    def __init__(self, conn: Any, dialect: "Dialect", *, write: bool, expired_before: datetime | None) -> None:
        self._conn = conn
        self._d = dialect
        self._write = write
        self._expired_before = expired_before

    def _x(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(self._d.sql(sql), params)

    def _w(self) -> None:
        if not self._write:
            raise RuntimeError("this device transaction is read-only")

    def sweep(self) -> int:
        """Delete the rows that expired before the transaction's ``expired_before``."""
        self._w()
        if self._expired_before is None:
            raise RuntimeError("open the transaction with expired_before to sweep")
        cur = self._x("DELETE FROM device_authorizations WHERE expires_at < ?", (self._d.ts(self._expired_before),))
        return cur.rowcount

    def insert(self, row: DeviceRow) -> None:
        self._w()
        d = self._d
        self._x(
            f"INSERT INTO device_authorizations ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.device_code_hash, row.user_code, row.client_name, d.js(list(row.scopes)), row.interval_s,
                d.ts(row.created_at), d.ts(row.expires_at), d.ts(row.last_polled_at), row.approver_workspace_id,
                row.approver_id, row.approved, d.ts(row.decided_at), d.ts(row.consumed_at), row.token_id,
            ),
        )

    def by_device_code(self, device_code_hash: str) -> DeviceRow | None:
        lock = self._d.for_update if self._write else ""
        row = self._x(
            f"SELECT {_COLUMNS} FROM device_authorizations WHERE device_code_hash = ?{lock}", (device_code_hash,)
        ).fetchone()
        return self._row(row) if row else None

    def by_user_code(self, user_code: str) -> DeviceRow | None:
        lock = self._d.for_update if self._write else ""
        row = self._x(f"SELECT {_COLUMNS} FROM device_authorizations WHERE user_code = ?{lock}", (user_code,)).fetchone()
        return self._row(row) if row else None

    def decide(self, user_code: str, *, workspace_id: str, person_id: str, approved: bool, at: datetime) -> bool:
        """Record the person's decision on an undecided, unexpired request; False if there was none."""
        self._w()
        d = self._d
        cur = self._x(
            "UPDATE device_authorizations SET approver_workspace_id = ?, approver_id = ?, approved = ?, decided_at = ?"
            " WHERE user_code = ? AND approved IS NULL AND expires_at > ?",
            (workspace_id, person_id, approved, d.ts(at), user_code, d.ts(at)),
        )
        return cur.rowcount == 1

    def polled(self, device_code_hash: str, *, at: datetime, interval_s: int) -> None:
        self._w()
        self._x(
            "UPDATE device_authorizations SET last_polled_at = ?, interval_s = ? WHERE device_code_hash = ?",
            (self._d.ts(at), interval_s, device_code_hash),
        )

    def consume(self, device_code_hash: str, *, at: datetime) -> bool:
        """Mark an approved request as received by its terminal; False if it already was."""
        self._w()
        cur = self._x(
            "UPDATE device_authorizations SET consumed_at = ?"
            " WHERE device_code_hash = ? AND approved = ? AND consumed_at IS NULL",
            (self._d.ts(at), device_code_hash, True),
        )
        return cur.rowcount == 1

    def set_token(self, device_code_hash: str, token_id: str) -> None:
        self._w()
        self._x("UPDATE device_authorizations SET token_id = ? WHERE device_code_hash = ?", (token_id, device_code_hash))

    def _row(self, r: Sequence[Any]) -> DeviceRow:
        d = self._d
        return DeviceRow(
            device_code_hash=r[0], user_code=r[1], client_name=r[2], scopes=tuple(d.js_out(r[3])),
            interval_s=int(r[4]), created_at=d.ts_out(r[5]), expires_at=d.ts_out(r[6]),
            last_polled_at=d.ts_out(r[7]), approver_workspace_id=r[8], approver_id=r[9],
            approved=None if r[10] is None else bool(r[10]), decided_at=d.ts_out(r[11]),
            consumed_at=d.ts_out(r[12]), token_id=r[13],
        )
