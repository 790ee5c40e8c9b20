"""The write path's property step: the typed index follows every note write.

A note's types and property values live in its document (``NoteMeta``, the
frontmatter). ``index_note_properties(tx, write)`` runs inside
``NoteService._commit`` and rewrites the note's rows in ``note_type_tags`` and
``property_values`` in the same transaction, so a structured query never
disagrees with what was committed:

- every type name the note carries is tagged, defined or not, so defining a
  type later finds the notes already written with it (``reindex``);
- every property of the note's defined types and their ancestors gets its
  index entries — one per value, one per multi_select option, and one empty
  entry when the note leaves it unset (an unset checkbox is unchecked);
- a value the property's kind does not accept (an import's, or one valid
  before the type changed) stays in the document and is indexed as empty. A
  person's or an agent's write refuses such values up front, whether it comes
  through the typed API or the frontmatter (``property_rules``).

``reindex`` is the same computation for many notes at once, used when a type
definition changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fastpad.knowledge.schema import NAME, PropertyDef, Schema, TypeDef
from fastpad.knowledge.values import InvalidValue, index_entries
from fastpad.store import NoteWrite, WorkspaceTx
from fastpad.store.typed import TypeRow, ValueRow

_REINDEX_BATCH = 500


def load_schema(tx: WorkspaceTx) -> Schema:
    return Schema(type_def(row) for row in tx.typed.types())


def type_def(row: TypeRow) -> TypeDef:
    properties = tuple(
        PropertyDef(p["name"], p["kind"], tuple(p.get("options") or ()), p.get("target")) for p in row.properties
    )
    return TypeDef(row.id, row.name, row.extends, properties, row.version, row.created_at, row.updated_at)


def index_rows(
    schema: Schema, note_id: str, types: Sequence[str], properties: Mapping[str, Any]
) -> tuple[list[tuple[str, str]], list[ValueRow]]:
    """The index of one note: its (note id, type name) tags and its value rows."""
    tags = [(note_id, name) for name in dict.fromkeys(types) if NAME.match(name)]
    values: list[ValueRow] = []
    for owner in schema.closure(name for _, name in tags):
        for prop in schema.types[owner].properties:
            key = f"{owner}.{prop.name}"
            try:
                entries = index_entries(prop, properties.get(key))
            except InvalidValue:
                entries = index_entries(prop, None)
            values += [ValueRow(note_id, key, i, e.text, e.num, e.time) for i, e in enumerate(entries)]
    return tags, values


def index_note_properties(tx: WorkspaceTx, write: NoteWrite) -> None:
    """The step ``NoteService._commit`` runs after each write (see the module docstring)."""
    if write.types is None and write.properties is None:
        return  # archive, trash and the like leave types and properties alone
    row = tx.note(write.note_id)
    assert row is not None
    tags, values = index_rows(load_schema(tx) if row.types else Schema(()), row.id, row.types, row.properties)
    stored_tags = tx.typed.tags([row.id]).get(row.id, set())
    if stored_tags == {name for _, name in tags} and tx.typed.values(row.id) == sorted(
        values, key=lambda v: (v.property, v.position)
    ):
        return
    tx.typed.replace_index([row.id], tags, values)


def reindex(tx: WorkspaceTx, note_ids: Sequence[str], schema: Schema | None = None) -> None:
    """Recompute the index of ``note_ids`` from their stored types and properties."""
    schema = schema or load_schema(tx)
    for start in range(0, len(note_ids), _REINDEX_BATCH):
        batch = note_ids[start:start + _REINDEX_BATCH]
        rows = tx.list_notes(note_ids=batch, limit=len(batch), include_archived=True, include_trashed=True)
        tags: list[tuple[str, str]] = []
        values: list[ValueRow] = []
        for row in rows:
            note_tags, note_values = index_rows(schema, row.id, row.types, row.properties)
            tags += note_tags
            values += note_values
        tx.typed.replace_index(batch, tags, values)
