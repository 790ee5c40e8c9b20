"""What every part of a transaction stands on: how a backend spells statements and values
(``Dialect``), running statements in one transaction bound to one workspace (``TxCore``),
and the clock a statement's default time comes from (``utcnow``).

``WorkspaceTx`` (fastpad/store/base.py) is a ``TxCore`` with the row methods of
fastpad/store/members.py, credentials.py, note_reads.py and note_writes.py mixed in, and the
other tables behind cached properties (``tx.links``, ``tx.team``...).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from fastpad.store.base import Store


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


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


class TxCore:
    """One transaction acting for one workspace: its connection, dialect and workspace, and the
    plumbing every statement goes through."""

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
