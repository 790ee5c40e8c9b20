"""TypeService: defining and changing a workspace's types (``schema:write``).

Types are tags, and tags are classes: a note may carry a type name before the
type is defined (written in its frontmatter), and defining it indexes those
notes at once. Changing a type's properties or parents re-indexes every note
of that type and of the types that extend it, in the same transaction; the
values in the notes' documents are never touched (a removed property's values
stay in the frontmatter, unindexed). A property's kind never changes: add a
new property instead, so no stored value silently changes meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastpad.errors import Conflict, FieldError, NotFound, ValidationFailed
from fastpad.knowledge.property_index import load_schema, reindex, type_def
from fastpad.knowledge.schema import PropertyDef, Schema, TypeDef, check_name, parse_extends, parse_properties
from fastpad.notes import new_id
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ, SCHEMA_WRITE
from fastpad.store import Store, utcnow
from fastpad.store.typed import TypeRow

# Types are the workspace's, every note's: a credential limited to some notes cannot change them.
_SCHEMA_IS_WORKSPACE_WIDE = "this credential is limited to a set of notes; types are the whole workspace's"


@dataclass(frozen=True)
class TypeView:
    type: TypeDef
    available: list[tuple[str, PropertyDef]]  # every property a note of this type carries, inherited ones too

    @classmethod
    def of(cls, schema: Schema, name: str) -> "TypeView":
        return cls(schema.types[name], schema.available(name))

    def as_dict(self) -> dict[str, Any]:
        t = self.type
        return {
            "id": t.id, "name": t.name, "extends": list(t.extends), "properties": [p.as_dict() for p in t.properties],
            "available_properties": [{"key": key, **p.as_dict()} for key, p in self.available],
            "version": t.version, "created_at": t.created_at.isoformat(), "updated_at": t.updated_at.isoformat(),
        }


class TypeService:
    def __init__(self, store: Store, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.clock = clock

    def list(self, principal: Principal) -> list[TypeView]:
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            schema = load_schema(tx)
        return [TypeView.of(schema, name) for name in schema.types]

    def get(self, principal: Principal, name: str) -> TypeView:
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            schema = load_schema(tx)
        if not isinstance(name, str) or schema.get(name) is None:
            raise _no_type(name)
        return TypeView.of(schema, name)

    def define(self, principal: Principal, *, name: Any, extends: Any = None, properties: Any = None) -> TypeView:
        """A new type. Notes already tagged with ``name`` are indexed under it at once."""
        principal.require(SCHEMA_WRITE)
        principal.require_whole_workspace(_SCHEMA_IS_WORKSPACE_WIDE)
        errors: list[FieldError] = []
        if check_name(name, "name", errors) is None:
            raise ValidationFailed(detail="the type name is invalid", field_errors=errors)
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            tx.typed.lock_schema()
            schema = load_schema(tx)
            if schema.get(name) is not None:
                raise Conflict(detail=f"a type named {name} exists", extra={"reason": "exists"},
                               next_call=f"PATCH /v1/types/{name}")
            row = TypeRow(
                id=new_id(), name=name, extends=parse_extends([] if extends is None else extends, schema, name),
                properties=[p.as_dict() for p in parse_properties([] if properties is None else properties,
                                                                  {*schema.types, name})],
                version=1, created_at=now, updated_at=now,
            )
            tx.typed.insert_type(row)
            schema = Schema([*schema.types.values(), type_def(row)])
            reindex(tx, tx.typed.notes_of_types([name]), schema)
            tx.feed.append("type_define", at=now, actor=principal.actor(), subject_id=name)
        return TypeView.of(schema, name)

    def update(
        self,
        principal: Principal,
        name: str,
        *,
        extends: Any = None,
        properties: Any = None,
        expected_version: int | None = None,
    ) -> TypeView:
        """Replace the type's parents and/or its whole property list (None: keep).
        ``expected_version`` refuses the change (409) if someone changed the type since."""
        principal.require(SCHEMA_WRITE)
        principal.require_whole_workspace(_SCHEMA_IS_WORKSPACE_WIDE)
        now = self.clock()
        with self.store.write(principal.workspace_id) as tx:
            tx.typed.lock_schema()
            schema = load_schema(tx)
            current = schema.get(name) if isinstance(name, str) else None
            if current is None:
                raise _no_type(name)
            if expected_version is not None and expected_version != current.version:
                raise Conflict(detail=f"{name} changed since version {expected_version}",
                               extra={"reason": "stale_version", "current_version": current.version},
                               next_call=f"GET /v1/types/{name}")
            parents = current.extends if extends is None else parse_extends(extends, schema, name)
            props = current.properties if properties is None else parse_properties(properties, set(schema.types))
            _check_kinds_kept(current, props)
            if (parents, props) == (current.extends, current.properties):
                return TypeView.of(schema, name)
            row = TypeRow(current.id, name, parents, [p.as_dict() for p in props], current.version + 1,
                          current.created_at, now)
            if not tx.typed.update_type(row):
                raise Conflict(detail=f"{name} changed meanwhile", extra={"reason": "stale_version"})
            schema = Schema([*(t for t in schema.types.values() if t.name != name), type_def(row)])
            reindex(tx, tx.typed.notes_of_types(schema.descendants(name)), schema)
            tx.feed.append("type_update", at=now, actor=principal.actor(), subject_id=name)
        return TypeView.of(schema, name)


def _check_kinds_kept(current: TypeDef, props: tuple[PropertyDef, ...]) -> None:
    errors = [
        FieldError(f"properties[{i}].kind", "kind_immutable",
                   f"{current.name}.{p.name} is a {old.kind}; add a property with a new name instead")
        for i, p in enumerate(props)
        if (old := current.property(p.name)) is not None and old.kind != p.kind
    ]
    if errors:
        raise ValidationFailed(detail="a property's kind cannot change", field_errors=errors)


def _no_type(name: Any) -> NotFound:
    return NotFound(detail=f"no type {name!r}", extra={"type": name}, next_call="GET /v1/types")
