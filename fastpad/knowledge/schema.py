"""A workspace's types and their properties, as values (no storage, no I/O).

A type (``Person``) has properties of fixed kinds and may extend other types:
``Audiobook`` extends ``Book`` and ``MediaObject``. A property is named by the
type that defines it — ``Book.pages`` — so two types may define the same name
without colliding (``Person.email`` and ``Contact.email`` on one note), and a
note carries its types' ancestors' properties under the ancestor's name: an
Audiobook has ``Book.pages``. A note "is a" T when one of its types is T or
extends T, directly or not.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastpad.errors import FieldError, ValidationFailed

KINDS = (
    "text", "number", "url", "date", "datetime", "checkbox", "select", "multi_select", "person", "relation", "file",
)
OPTION_KINDS = frozenset({"select", "multi_select"})
# Kinds whose value is a list (one index row per element); every other kind holds one value.
LIST_KINDS = frozenset({"multi_select"})

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")  # no dots: the dot separates Type.property
MAX_PROPERTIES = 100
MAX_OPTIONS = 200
MAX_OPTION_LENGTH = 100
MAX_EXTENDS = 20


@dataclass(frozen=True)
class PropertyDef:
    name: str
    kind: str
    options: tuple[str, ...] = ()  # select / multi_select
    target: str | None = None  # relation: the type the target note must be (or extend)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind in OPTION_KINDS:
            out["options"] = list(self.options)
        if self.kind == "relation":
            out["target"] = self.target
        return out


@dataclass(frozen=True)
class TypeDef:
    id: str
    name: str
    extends: tuple[str, ...]
    properties: tuple[PropertyDef, ...]
    version: int
    created_at: datetime
    updated_at: datetime

    def property(self, name: str) -> PropertyDef | None:
        return next((p for p in self.properties if p.name == name), None)


class Schema:
    """Every type of one workspace, with inheritance resolved."""

    def __init__(self, types: Iterable[TypeDef]) -> None:
        self.types: dict[str, TypeDef] = {t.name: t for t in types}

    def get(self, name: str) -> TypeDef | None:
        return self.types.get(name)

    def ancestors(self, name: str) -> list[str]:
        """``name`` and every defined type it extends, nearest first, each once."""
        seen: list[str] = []
        pending = [name]
        while pending:
            current = pending.pop(0)
            if current in seen or current not in self.types:
                continue
            seen.append(current)
            pending.extend(self.types[current].extends)
        return seen

    def descendants(self, name: str) -> set[str]:
        """``name`` and every type that extends it, directly or not."""
        return {t for t in self.types if name in self.ancestors(t)}

    def closure(self, type_names: Iterable[str]) -> list[str]:
        """The defined types a note with ``type_names`` is: its own and their ancestors."""
        out: list[str] = []
        for name in type_names:
            for ancestor in self.ancestors(name):
                if ancestor not in out:
                    out.append(ancestor)
        return out

    def resolve(self, key: str) -> tuple[TypeDef, PropertyDef] | None:
        """``"Type.property"`` → its definition, or None."""
        owner, dot, name = key.partition(".")
        type_def = self.types.get(owner) if dot else None
        prop = type_def.property(name) if type_def else None
        return (type_def, prop) if type_def and prop else None

    def available(self, name: str) -> list[tuple[str, PropertyDef]]:
        """Every property a note of type ``name`` carries, as (``Owner.property``, definition)."""
        return [(f"{owner}.{p.name}", p) for owner in self.ancestors(name) for p in self.types[owner].properties]

    def would_cycle(self, name: str, extends: Iterable[str]) -> bool:
        """Would ``name`` extending ``extends`` make a type its own ancestor?"""
        return any(name == a for parent in extends for a in self.ancestors(parent))


# ---------------------------------------------------------------------- parsing definitions


def check_name(value: Any, field: str, errors: list[FieldError]) -> str | None:
    if not isinstance(value, str) or not NAME.match(value):
        errors.append(FieldError(field, "name", "a letter, then up to 63 letters, digits or underscores (no dots)"))
        return None
    return value


def parse_properties(value: Any, known_types: Collection[str], field: str = "properties") -> tuple[PropertyDef, ...]:
    """A type's property list from its JSON form; every problem is a field error.
    A relation's target is one of ``known_types`` (which includes the type being defined)."""
    errors: list[FieldError] = []
    if not isinstance(value, list):
        raise ValidationFailed(detail="properties is a list", field_errors=[FieldError(field, "type", "a list")])
    if len(value) > MAX_PROPERTIES:
        raise ValidationFailed(detail=f"a type has at most {MAX_PROPERTIES} properties",
                               field_errors=[FieldError(field, "max_items", f"at most {MAX_PROPERTIES}")])
    out: list[PropertyDef] = []
    names: set[str] = set()
    for i, item in enumerate(value):
        at = f"{field}[{i}]"
        if not isinstance(item, Mapping):
            errors.append(FieldError(at, "type", "an object with name and kind"))
            continue
        unknown = set(item) - {"name", "kind", "options", "target"}
        errors += [FieldError(f"{at}.{k}", "unknown_field", "not a property attribute") for k in sorted(unknown)]
        name = check_name(item.get("name"), f"{at}.name", errors)
        if name is not None and name in names:
            errors.append(FieldError(f"{at}.name", "duplicate", f"{name} is defined twice"))
        names.add(name or "")
        kind = item.get("kind")
        if kind not in KINDS:
            errors.append(FieldError(f"{at}.kind", "kind", "one of " + ", ".join(KINDS)))
            continue
        options = _options(item.get("options"), kind, f"{at}.options", errors)
        target = item.get("target")
        if kind == "relation":
            if not isinstance(target, str) or target not in known_types:
                errors.append(FieldError(f"{at}.target", "unknown_type", "a relation names a defined target type"))
        elif target is not None:
            errors.append(FieldError(f"{at}.target", "not_allowed", "only a relation has a target"))
            target = None
        if name is not None:
            out.append(PropertyDef(name, kind, options, target))
    if errors:
        raise ValidationFailed(detail="the property definitions are invalid", field_errors=errors)
    return tuple(out)


def _options(value: Any, kind: str, field: str, errors: list[FieldError]) -> tuple[str, ...]:
    if kind not in OPTION_KINDS:
        if value is not None:
            errors.append(FieldError(field, "not_allowed", "only select and multi_select have options"))
        return ()
    if (not isinstance(value, list) or not value or len(value) > MAX_OPTIONS
            or not all(isinstance(o, str) and 0 < len(o) <= MAX_OPTION_LENGTH for o in value)):
        errors.append(FieldError(field, "options", f"1 to {MAX_OPTIONS} option names of 1 to "
                                                    f"{MAX_OPTION_LENGTH} characters"))
        return ()
    if len(set(value)) != len(value):
        errors.append(FieldError(field, "duplicate", "each option once"))
    return tuple(value)


def parse_extends(value: Any, schema: Schema, name: str, field: str = "extends") -> tuple[str, ...]:
    """The parents of type ``name``: defined types, each once, and no cycle."""
    if not isinstance(value, list) or len(value) > MAX_EXTENDS or not all(isinstance(v, str) for v in value):
        raise ValidationFailed(detail="extends is a list of type names",
                               field_errors=[FieldError(field, "type", f"a list of at most {MAX_EXTENDS} type names")])
    errors = [FieldError(f"{field}[{i}]", "unknown_type", f"no type {v!r}; define it first")
              for i, v in enumerate(value) if v != name and schema.get(v) is None]
    if len(set(value)) != len(value):
        errors.append(FieldError(field, "duplicate", "each parent once"))
    if name in value or (not errors and schema.would_cycle(name, value)):
        errors.append(FieldError(field, "cycle", f"{name} would extend itself"))
    if errors:
        raise ValidationFailed(detail="extends is invalid", field_errors=errors)
    return tuple(value)
