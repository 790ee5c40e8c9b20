"""TypedNoteService: applying types to notes and setting their typed properties.

One change — types to add, types to remove, ``Type.property`` values to set
(``null`` clears one) — is one write through ``NoteService._commit``: the
note's document gets the new types and properties (so its frontmatter shows
them, keys namespaced ``Type.property``), and the op log, change feed and the
typed index follow in the same transaction (``apply_in`` writes inside the
caller's transaction: an accepted proposal moves an event that way). Types and
properties are metadata, not prose: a credential with ``notes:write`` sets them
directly, agents included (prose is what goes through proposals).

Every value is checked by ``property_rules`` before anything is written (the
same rules hold frontmatter to); a refusal names each bad field (``properties.Person.email``) and
changes nothing. ``apply_many`` does many notes in one call, each in its own
transaction, and reports each one: a failure never undoes the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastpad.errors import FastpadError, FieldError, ValidationFailed
from fastpad.knowledge.notes import NoteService
from fastpad.knowledge.property_index import load_schema
from fastpad.knowledge.property_rules import validation_failed, value_error
from fastpad.notes import NoteDocument, NoteMeta
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_WRITE
from fastpad.store import NoteWrite, Store, WorkspaceTx, utcnow

MAX_BULK = 1000
_ITEM_FIELDS = frozenset({"note_id", "add", "remove", "properties"})


@dataclass(frozen=True)
class TypedNote:
    note_id: str
    frontier: str
    types: tuple[str, ...]
    properties: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"note_id": self.note_id, "frontier": self.frontier, "types": list(self.types),
                "properties": self.properties}


@dataclass(frozen=True)
class BulkItemResult:
    index: int
    note_id: Any
    note: TypedNote | None = None
    error: FastpadError | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "note_id": self.note_id, "ok": self.error is None}
        if self.note is not None:
            out["note"] = self.note.as_dict()
        if self.error is not None:
            e = self.error
            out["error"] = {"type": e.slug, "title": e.title, "status": e.status, "detail": str(e),
                            "retryable": e.retryable, "field_errors": [fe.as_dict() for fe in e.field_errors]}
        return out


@dataclass(frozen=True)
class BulkResult:
    results: list[BulkItemResult]

    def as_dict(self) -> dict[str, Any]:
        failed = sum(1 for r in self.results if r.error is not None)
        return {"results": [r.as_dict() for r in self.results], "succeeded": len(self.results) - failed,
                "failed": failed}


class TypedNoteService:
    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.clock = clock

    def apply(self, principal: Principal, note_id: str, **change: Any) -> TypedNote:
        """One change to one note, in a transaction of its own: :meth:`apply_in`."""
        with self.store.write(principal.workspace_id) as tx:
            return self.apply_in(tx, principal, note_id, **change)

    def apply_in(
        self, tx: WorkspaceTx, principal: Principal, note_id: str, *, add: Any = None, remove: Any = None,
        properties: Any = None,
    ) -> TypedNote:
        """Types to add and remove and ``Type.property`` values to set (``None`` clears one),
        written inside the caller's transaction (an accepted proposal moves an event this way)."""
        principal.require(NOTES_WRITE)
        add_names, remove_names, values = _parse_change(add, remove, properties)
        row = NoteService._writable_row(tx, principal, note_id, with_snapshot=True)
        assert row.snapshot is not None
        doc = NoteDocument.load(row.snapshot)
        meta = doc.meta
        schema = load_schema(tx)
        types = [t for t in meta.types if t not in remove_names] + [t for t in add_names if t not in meta.types]
        errors = [FieldError(f"add[{i}]", "unknown_type", f"no type {name!r}; define it first (schema:write)")
                  for i, name in enumerate(add_names) if schema.get(name) is None]
        merged = dict(meta.properties)
        for key, value in values.items():
            error = value_error(tx, principal, schema, types, key, value)
            if error is not None:
                errors.append(error)
            elif value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        if errors:
            raise validation_failed(errors)
        if tuple(types) == meta.types and merged == meta.properties:
            return TypedNote(note_id, row.frontier, meta.types, meta.properties)  # nothing to write
        doc.set_meta(NoteMeta(meta.title, tuple(types), merged))
        frontier = doc.frontier()
        NoteService._commit(tx, NoteWrite(
            note_id=note_id, kind="meta", at=self.clock(), actor=principal.actor(),
            expected_frontier=row.frontier, update=doc.export_updates(row.frontier), snapshot=doc.snapshot(),
            frontier=frontier, types=tuple(types), properties=merged,
        ))
        return TypedNote(note_id, frontier, tuple(types), merged)

    def apply_many(self, principal: Principal, items: Any) -> BulkResult:
        """Apply each item (``{note_id, add?, remove?, properties?}``) in its own
        transaction; every item gets a result, in order."""
        principal.require(NOTES_WRITE)
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK:
            raise ValidationFailed(detail=f"items is a list of 1 to {MAX_BULK} changes",
                                   field_errors=[FieldError("items", "type", f"a list of 1 to {MAX_BULK} objects")])
        results = []
        for index, item in enumerate(items):
            note_id = item.get("note_id") if isinstance(item, Mapping) else None
            try:
                if not isinstance(item, Mapping) or not isinstance(note_id, str) or set(item) - _ITEM_FIELDS:
                    raise ValidationFailed(detail="an item is {note_id, add?, remove?, properties?}",
                                           field_errors=[FieldError("item", "shape", "an object with a note_id string "
                                                                    "and only add, remove, properties")])
                note = self.apply(principal, note_id, add=item.get("add"), remove=item.get("remove"),
                                  properties=item.get("properties"))
                results.append(BulkItemResult(index, note_id, note=note))
            except FastpadError as error:
                results.append(BulkItemResult(index, note_id, error=error))
        return BulkResult(results)


def _parse_change(add: Any, remove: Any, properties: Any) -> tuple[list[str], list[str], dict[str, Any]]:
    errors: list[FieldError] = []

    def names(value: Any, field: str) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            errors.append(FieldError(field, "type", "a list of type names"))
            return []
        return list(dict.fromkeys(value))

    add_names, remove_names = names(add, "add"), names(remove, "remove")
    if set(add_names) & set(remove_names):
        errors.append(FieldError("remove", "conflict", "a type is both added and removed"))
    if properties is not None and not isinstance(properties, Mapping):
        errors.append(FieldError("properties", "type", "an object of Type.property → value (null clears)"))
    if errors:
        raise ValidationFailed(detail="the change is malformed", field_errors=errors)
    if not add_names and not remove_names and not properties:
        raise ValidationFailed(detail="nothing to change",
                               field_errors=[FieldError("body", "empty", "send add, remove or properties")])
    return add_names, remove_names, dict(properties or {})
