"""Types, the typed property index and collections: ``tx.typed``.

- ``type_defs``: the workspace's schema (each type's own properties and parents, JSON);
- ``note_type_tags`` and ``property_values``: the index of every note's types
  and typed property values, a projection of the note's document rewritten in
  the transaction of each note write (fastpad/knowledge/property_index.py);
- ``collections``: saved views (a query and a layout), never their rows.

The structured query over the index is ``tx.typed.query`` (fastpad/store/typed_query.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fastpad.store.typed_query import RowPage, RowQuery, run_query

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx


@dataclass(frozen=True)
class TypeRow:
    id: str
    name: str
    extends: tuple[str, ...]
    properties: list[dict[str, Any]]
    version: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ValueRow:
    """One index entry: ``property`` is ``Type.name``; at most one value column is set."""

    note_id: str
    property: str
    position: int
    text: str | None
    num: float | None
    time: datetime | None


@dataclass(frozen=True)
class CollectionRow:
    id: str
    name: str
    layout: str
    query: dict[str, Any]
    layout_options: dict[str, Any]
    version: int
    created_by_kind: str
    created_by_id: str
    created_at: datetime
    updated_at: datetime


class TypedTables:
    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx

    # ------------------------------------------------------------------ schema

    _TYPE_COLUMNS = "id, name, extends, properties, version, created_at, updated_at"

    def types(self) -> list[TypeRow]:
        tx = self._tx
        rows = tx._x(
            f"SELECT {self._TYPE_COLUMNS} FROM type_defs WHERE workspace_id = ? ORDER BY name",
            (tx.workspace_id,),
        ).fetchall()
        return [self._type(r) for r in rows]

    def insert_type(self, t: TypeRow) -> None:
        tx = self._tx
        tx._w()
        d = tx._d
        tx._x(
            f"INSERT INTO type_defs (workspace_id, {self._TYPE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (tx.workspace_id, t.id, t.name, d.js(list(t.extends)), d.js(t.properties), t.version,
             d.ts(t.created_at), d.ts(t.updated_at)),
        )

    def update_type(self, t: TypeRow) -> bool:
        """Store ``t`` as version ``t.version`` if the stored one is the version before it."""
        tx = self._tx
        tx._w()
        d = tx._d
        cur = tx._x(
            "UPDATE type_defs SET extends = ?, properties = ?, version = ?, updated_at = ?"
            " WHERE workspace_id = ? AND name = ? AND version = ?",
            (d.js(list(t.extends)), d.js(t.properties), t.version, d.ts(t.updated_at), tx.workspace_id, t.name,
             t.version - 1),
        )
        return cur.rowcount == 1

    def lock_schema(self) -> None:
        """Serialise schema changes in this workspace (the workspace row lock; a
        no-op on SQLite, whose write transactions are already serial)."""
        tx = self._tx
        tx._x(f"SELECT id FROM workspaces WHERE id = ?{tx._d.for_update}", (tx.workspace_id,)).fetchone()

    def _type(self, r: Sequence[Any]) -> TypeRow:
        d = self._tx._d
        return TypeRow(r[0], r[1], tuple(d.js_out(r[2])), d.js_out(r[3]), int(r[4]), d.ts_out(r[5]),
                       d.ts_out(r[6]))

    # ------------------------------------------------------------------ the index

    def notes_of_types(self, type_names: Iterable[str]) -> list[str]:
        """Ids of the notes carrying any of ``type_names``."""
        tx = self._tx
        rows = tx._x(
            "SELECT DISTINCT note_id FROM note_type_tags WHERE workspace_id = ? AND "
            + tx._d.in_ids("type_name") + " ORDER BY note_id",
            (tx.workspace_id, tx._d.ids(type_names)),
        ).fetchall()
        return [r[0] for r in rows]

    def tags(self, note_ids: Iterable[str]) -> dict[str, set[str]]:
        """The types each of ``note_ids`` carries (notes with none are left out)."""
        tx = self._tx
        out: dict[str, set[str]] = {}
        for note_id, type_name in tx._x(
            "SELECT note_id, type_name FROM note_type_tags WHERE workspace_id = ? AND " + tx._d.in_ids("note_id"),
            (tx.workspace_id, tx._d.ids(note_ids)),
        ).fetchall():
            out.setdefault(note_id, set()).add(type_name)
        return out

    def values(self, note_id: str) -> list[ValueRow]:
        tx = self._tx
        rows = tx._x(
            "SELECT note_id, property, position, value_text, value_num, value_time FROM property_values"
            " WHERE workspace_id = ? AND note_id = ? ORDER BY property, position",
            (tx.workspace_id, note_id),
        ).fetchall()
        return [ValueRow(r[0], r[1], int(r[2]), r[3], None if r[4] is None else float(r[4]), tx._d.ts_out(r[5]))
                for r in rows]

    def replace_index(self, note_ids: Sequence[str], tags: Sequence[tuple[str, str]], values: Sequence[ValueRow]) -> None:
        """Make ``tags`` (note id, type name) and ``values`` the whole index of ``note_ids``."""
        tx = self._tx
        tx._w()
        d, ws = tx._d, tx.workspace_id
        for table in ("note_type_tags", "property_values"):
            tx._x(f"DELETE FROM {table} WHERE workspace_id = ? AND " + d.in_ids("note_id"), (ws, d.ids(note_ids)))
        tx._many(
            "INSERT INTO note_type_tags (workspace_id, note_id, type_name) VALUES (?, ?, ?)",
            [(ws, note_id, name) for note_id, name in tags],
        )
        tx._many(
            "INSERT INTO property_values (workspace_id, note_id, property, position, value_text, value_num, value_time)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(ws, v.note_id, v.property, v.position, v.text, v.num, d.ts(v.time)) for v in values],
        )

    # ------------------------------------------------------------------ query

    def query(self, q: RowQuery, *, strategy: str | None = None) -> RowPage:
        """One page of the notes ``q`` selects (see fastpad/store/typed_query.py).
        ``strategy`` ("walk" | "candidates") overrides the store's choice; the
        results are the same either way, only the cost differs."""
        return run_query(self._tx, q, strategy=strategy)

    # ------------------------------------------------------------------ collections

    _COLLECTION_COLUMNS = (
        "id, name, layout, query, layout_options, version, created_by_kind, created_by_id, created_at, updated_at"
    )

    def collections(self) -> list[CollectionRow]:
        tx = self._tx
        rows = tx._x(
            f"SELECT {self._COLLECTION_COLUMNS} FROM collections WHERE workspace_id = ? ORDER BY id",
            (tx.workspace_id,),
        ).fetchall()
        return [self._collection(r) for r in rows]

    def collection(self, collection_id: str) -> CollectionRow | None:
        tx = self._tx
        row = tx._x(
            f"SELECT {self._COLLECTION_COLUMNS} FROM collections WHERE workspace_id = ? AND id = ?",
            (tx.workspace_id, collection_id),
        ).fetchone()
        return self._collection(row) if row else None

    def insert_collection(self, c: CollectionRow) -> None:
        tx = self._tx
        tx._w()
        d = tx._d
        tx._x(
            f"INSERT INTO collections (workspace_id, {self._COLLECTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (tx.workspace_id, c.id, c.name, c.layout, d.js(c.query), d.js(c.layout_options), c.version,
             c.created_by_kind, c.created_by_id, d.ts(c.created_at), d.ts(c.updated_at)),
        )

    def update_collection(self, c: CollectionRow) -> bool:
        """Store ``c`` as version ``c.version`` if the stored one is the version before it."""
        tx = self._tx
        tx._w()
        d = tx._d
        cur = tx._x(
            "UPDATE collections SET name = ?, layout = ?, query = ?, layout_options = ?, version = ?, updated_at = ?"
            " WHERE workspace_id = ? AND id = ? AND version = ?",
            (c.name, c.layout, d.js(c.query), d.js(c.layout_options), c.version, d.ts(c.updated_at),
             tx.workspace_id, c.id, c.version - 1),
        )
        return cur.rowcount == 1

    def delete_collection(self, collection_id: str) -> bool:
        tx = self._tx
        tx._w()
        cur = tx._x("DELETE FROM collections WHERE workspace_id = ? AND id = ?", (tx.workspace_id, collection_id))
        return cur.rowcount == 1

    def _collection(self, r: Sequence[Any]) -> CollectionRow:
        d = self._tx._d
        return CollectionRow(r[0], r[1], r[2], d.js_out(r[3]), d.js_out(r[4]), int(r[5]), r[6], r[7],
                             d.ts_out(r[8]), d.ts_out(r[9]))
