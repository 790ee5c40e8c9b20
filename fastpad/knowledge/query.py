"""KnowledgeQueryService: the structured query over typed properties.

The query object (HTTP ``POST /v1/query``, the MCP tool ``fastpad_query``, a
collection's saved view)::

    {"type": "Book",
     "filters": [{"property": "Book.pages", "op": "gte", "value": 300},
                 {"property": "Book.genres", "op": "contains", "value": "essay"},
                 {"property": "Book.author", "op": "has"}],
     "sort": [{"property": "Book.published", "direction": "desc"}],
     "group_by": "Book.status",
     "include_archived": false,
     "limit": 50, "cursor": null}

- ``type`` selects the notes that are that type or a type extending it.
- Filters are all required (AND). Ops: ``eq`` and ``neq`` (every kind but
  multi_select; ``neq`` also keeps notes with no value), ``in`` (any of up to
  100 values), ``lt``/``lte``/``gt``/``gte`` (number, date, datetime),
  ``contains`` (multi_select: one option, or a list that must all be there),
  ``has``/``has_not`` (a value is set or not; a checkbox is always set).
  A relation's value is the target note's id. Values are checked against the
  property's kind like any stored value.
- ``sort``: up to three keys, each a property or a note field (``title``,
  ``created_at``, ``updated_at``), ``asc`` by default; empty values come last.
  Ties are broken by note id, in the first key's direction. ``group_by`` sorts
  by a property first and labels each row with its ``group`` (its value; null
  for none).
- Pages are keyset pages: pass ``next_cursor`` back with the same query.
- A ``TimeWindow`` (a calendar's month, a timeline's span; not part of the
  query language, collections pass it) keeps the rows whose start–end span
  overlaps it — a row without an end is a point at its start — and is part of
  what a cursor belongs to.

Results respect the caller: only notes in its note set, never trashed notes,
archived ones only when asked. A row carries the note's id, title, types and
properties — never its body.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.knowledge.property_index import load_schema
from fastpad.knowledge.schema import LIST_KINDS, PropertyDef, Schema
from fastpad.knowledge.values import COLUMN, InvalidValue, filter_value
from fastpad.notes import is_ulid
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ
from fastpad.store import Store
from fastpad.store.typed_query import PropertyFilter, RowHit, RowQuery, SortKey

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
MAX_FILTERS = 20
MAX_SORTS = 3
MAX_IN = 100
NOTE_FIELDS = {"title": "text", "created_at": "time", "updated_at": "time"}
DEFINITION_FIELDS = ("type", "filters", "sort", "group_by", "include_archived")
_PAGE_FIELDS = ("limit", "cursor")
_RANGE_KINDS = frozenset({"number", "date", "datetime"})
_IN_KINDS = frozenset({"text", "url", "select", "person", "relation", "file", "number"})
_CURSOR_PREFIX = "q1."


@dataclass(frozen=True)
class Definition:
    """A validated query, minus its page: what a collection saves."""

    type: str
    type_names: tuple[str, ...]
    types_on_every_note: tuple[str, ...]  # the type and those it extends (RowQuery says why)
    filters: tuple[PropertyFilter, ...]
    keys: tuple[SortKey, ...]
    group_by: str | None
    group_kind: str | None
    include_archived: bool
    normalized: dict[str, Any]  # the query as it was given, validated (stored by collections)
    # Rows must also pass every filter of one of these (a window's overlap test; never saved).
    any_of: tuple[tuple[PropertyFilter, ...], ...] = ()

    @property
    def fingerprint(self) -> str:
        canonical = json.dumps(self.normalized, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class TimeWindow:
    """The instants [start, end) a calendar or timeline shows, and the date or datetime
    properties that place a row in time (``end_property`` None: a row is a point)."""

    start_property: str
    end_property: str | None
    start: datetime
    end: datetime

    def narrow(self, parsed: Definition) -> Definition:
        """``parsed``, keeping only rows whose span overlaps the window: the start before the
        window's end, and the end (or, with none, the start) at or after the window's start."""
        starts_before_end = PropertyFilter(self.start_property, "time", "lt", (self.end,))
        start_in = PropertyFilter(self.start_property, "time", "gte", (self.start,))
        if self.end_property is None:
            filters, any_of = (starts_before_end, start_in), ()
        else:
            ends_in = PropertyFilter(self.end_property, "time", "gte", (self.start,))
            no_end = PropertyFilter(self.end_property, "time", "has", negate=True)
            filters, any_of = (starts_before_end,), ((ends_in,), (no_end, start_in))
        window = [self.start_property, self.end_property, self.start.isoformat(), self.end.isoformat()]
        return replace(parsed, filters=parsed.filters + filters, any_of=parsed.any_of + any_of,
                       normalized={**parsed.normalized, "window": window})


@dataclass(frozen=True)
class QueryRow:
    id: str
    title: str
    types: tuple[str, ...]
    properties: dict[str, Any]
    archived: bool
    created_at: datetime
    updated_at: datetime
    group: Any = None

    def as_dict(self, grouped: bool) -> dict[str, Any]:
        out = {"id": self.id, "title": self.title, "types": list(self.types), "properties": self.properties,
               "archived": self.archived, "created_at": self.created_at.isoformat(),
               "updated_at": self.updated_at.isoformat()}
        if grouped:
            out["group"] = self.group
        return out


@dataclass(frozen=True)
class QueryPage:
    items: list[QueryRow]
    next_cursor: str | None
    group_by: str | None = None

    def as_dict(self) -> dict[str, Any]:
        grouped = self.group_by is not None
        out: dict[str, Any] = {"items": [r.as_dict(grouped) for r in self.items], "next_cursor": self.next_cursor}
        if grouped:
            out["group_by"] = self.group_by
        return out


class KnowledgeQueryService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def query(self, principal: Principal, query: Any) -> QueryPage:
        """One page of the structured query ``query`` (see the module docstring)."""
        if not isinstance(query, Mapping):
            raise ValidationFailed(detail="a query is an object", field_errors=[FieldError("body", "type", "an object")])
        unknown = sorted(set(query) - set(DEFINITION_FIELDS) - set(_PAGE_FIELDS))
        if unknown:
            raise ValidationFailed(detail="unknown query fields",
                                   field_errors=[FieldError(k, "unknown_field", "not a query field") for k in unknown])
        definition = {k: query[k] for k in DEFINITION_FIELDS if k in query}
        return self.run(principal, definition, cursor=query.get("cursor"), limit=query.get("limit", DEFAULT_LIMIT))

    def run(self, principal: Principal, definition: Mapping[str, Any], *, cursor: Any = None,
            limit: Any = DEFAULT_LIMIT, window: TimeWindow | None = None, max_limit: int = MAX_LIMIT) -> QueryPage:
        principal.require(NOTES_READ)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= max_limit:
            raise ValidationFailed(detail=f"limit is between 1 and {max_limit}",
                                   field_errors=[FieldError("limit", "range", f"between 1 and {max_limit}")])
        with self.store.read(principal.workspace_id) as tx:
            parsed = parse_definition(definition, load_schema(tx))
            if window is not None:
                parsed = window.narrow(parsed)
            after = decode_cursor(cursor, parsed) if cursor is not None else None
            page = tx.typed.query(RowQuery(
                type_names=parsed.type_names, filters=parsed.filters, keys=parsed.keys, after=after,
                note_ids=principal.note_ids, include_archived=parsed.include_archived, limit=limit + 1,
                types_on_every_note=parsed.types_on_every_note, any_of=parsed.any_of,
            ))
        hits = page.hits[:limit]
        more = len(page.hits) > limit
        return QueryPage([_row(h, parsed) for h in hits],
                         encode_cursor(parsed, hits[-1]) if more else None, parsed.group_by)

    def check(self, principal: Principal, definition: Any, *, field_prefix: str = "") -> Definition:
        """Validate a query definition against the current schema (collections save it)."""
        principal.require(NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            return parse_definition(definition, load_schema(tx), field_prefix=field_prefix)


# ---------------------------------------------------------------------- parsing


def parse_definition(data: Any, schema: Schema, *, field_prefix: str = "") -> Definition:
    """A query definition against ``schema``; every problem is a field error naming its place."""
    p = field_prefix
    if not isinstance(data, Mapping):
        raise ValidationFailed(detail="a query is an object", field_errors=[FieldError(p.rstrip(".") or "body", "type", "an object")])
    errors: list[FieldError] = []
    unknown = sorted(set(data) - set(DEFINITION_FIELDS))
    errors += [FieldError(f"{p}{k}", "unknown_field", "not a query field") for k in unknown]
    type_name = data.get("type")
    if not isinstance(type_name, str) or schema.get(type_name) is None:
        errors.append(FieldError(f"{p}type", "unknown_type", "the name of a defined type (GET /v1/types)"))
        type_name = None
    filters = _list(data.get("filters"), MAX_FILTERS, f"{p}filters", errors)
    sorts = _list(data.get("sort"), MAX_SORTS, f"{p}sort", errors)
    include_archived = data.get("include_archived", False)
    if not isinstance(include_archived, bool):
        errors.append(FieldError(f"{p}include_archived", "type", "true or false"))

    parsed_filters: list[PropertyFilter] = []
    for i, item in enumerate(filters):
        parsed_filters += _filter(item, schema, f"{p}filters[{i}]", errors)
    keys: list[SortKey] = []
    group_by, group_kind = data.get("group_by"), None
    if group_by is not None:
        prop = _property(group_by, schema, f"{p}group_by", errors)
        if prop is not None:
            group_kind = prop.kind
            if prop.kind in LIST_KINDS:
                errors.append(FieldError(f"{p}group_by", "not_groupable", "a multi_select cannot group rows"))
            else:
                keys.append(SortKey(COLUMN[prop.kind], property=group_by))
    for i, item in enumerate(sorts):
        key = _sort_key(item, schema, f"{p}sort[{i}]", errors)
        if key is not None:
            keys.append(key)
    if errors:
        raise ValidationFailed(detail=f"{len(errors)} field(s) of the query failed validation",
                               field_errors=errors[:50], extra={"field_errors_truncated": max(0, len(errors) - 50)})
    assert type_name is not None
    normalized = {k: data[k] for k in DEFINITION_FIELDS if k in data}
    return Definition(type_name, tuple(sorted(schema.descendants(type_name))), tuple(schema.ancestors(type_name)),
                      tuple(parsed_filters), tuple(keys), group_by, group_kind, include_archived, normalized)


def _list(value: Any, limit: int, field: str, errors: list[FieldError]) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > limit:
        errors.append(FieldError(field, "type", f"a list of at most {limit}"))
        return []
    return value


def _property(key: Any, schema: Schema, field: str, errors: list[FieldError]) -> PropertyDef | None:
    resolved = schema.resolve(key) if isinstance(key, str) else None
    if resolved is None:
        errors.append(FieldError(field, "unknown_property", "a defined property, named Type.property"))
        return None
    return resolved[1]


def _filter(item: Any, schema: Schema, field: str, errors: list[FieldError]) -> list[PropertyFilter]:
    if not isinstance(item, Mapping) or set(item) - {"property", "op", "value"}:
        errors.append(FieldError(field, "type", "an object with property, op and (except has/has_not) value"))
        return []
    key = item.get("property")
    prop = _property(key, schema, f"{field}.property", errors)
    op = item.get("op")
    if prop is None:
        return []
    allowed = _ops_for(prop)
    if op not in allowed:
        errors.append(FieldError(f"{field}.op", "op", f"for a {prop.kind}: one of {', '.join(sorted(allowed))}"))
        return []
    column = COLUMN[prop.kind]
    if op in ("has", "has_not"):
        if "value" in item:
            errors.append(FieldError(f"{field}.value", "not_allowed", f"{op} takes no value"))
            return []
        return [PropertyFilter(key, column, "has", negate=op == "has_not")]
    if "value" not in item:
        errors.append(FieldError(f"{field}.value", "required", f"{op} compares with a value"))
        return []
    value = item["value"]
    many = op == "in" or (op == "contains" and isinstance(value, list))
    values = value if many else [value]
    if not isinstance(values, list) or not 1 <= len(values) <= MAX_IN:
        errors.append(FieldError(f"{field}.value", "type", f"a list of 1 to {MAX_IN} values"))
        return []
    try:
        converted = [filter_value(prop, v) for v in values]
    except InvalidValue as invalid:
        errors.append(FieldError(f"{field}.value", invalid.code, invalid.message))
        return []
    if op == "contains":  # every option must be there: one condition per option
        return [PropertyFilter(key, column, "eq", (v,)) for v in dict.fromkeys(converted)]
    if op == "in":
        return [PropertyFilter(key, column, "in", tuple(dict.fromkeys(converted)))]
    return [PropertyFilter(key, column, "eq" if op == "neq" else op, (converted[0],), negate=op == "neq")]


def _ops_for(prop: PropertyDef) -> set[str]:
    if prop.kind in LIST_KINDS:
        return {"contains", "in", "has", "has_not"}
    ops = {"eq", "neq"}
    if prop.kind != "checkbox":
        ops |= {"has", "has_not"}
    if prop.kind in _RANGE_KINDS:
        ops |= {"lt", "lte", "gt", "gte"}
    if prop.kind in _IN_KINDS:
        ops.add("in")
    return ops


def _sort_key(item: Any, schema: Schema, field: str, errors: list[FieldError]) -> SortKey | None:
    if not isinstance(item, Mapping) or set(item) - {"property", "direction"}:
        errors.append(FieldError(field, "type", "an object with property and direction"))
        return None
    direction = item.get("direction", "asc")
    if direction not in ("asc", "desc"):
        errors.append(FieldError(f"{field}.direction", "direction", "asc or desc"))
        return None
    key = item.get("property")
    if key in NOTE_FIELDS:
        return SortKey(NOTE_FIELDS[key], note_field=key, descending=direction == "desc")
    prop = _property(key, schema, f"{field}.property", errors)
    if prop is None:
        return None
    if prop.kind in LIST_KINDS:
        errors.append(FieldError(f"{field}.property", "not_sortable", "a multi_select holds several values"))
        return None
    return SortKey(COLUMN[prop.kind], property=key, descending=direction == "desc")


# ---------------------------------------------------------------------- rows and cursors


def _row(hit: RowHit, parsed: Definition) -> QueryRow:
    note = hit.note
    group = None
    if parsed.group_kind == "checkbox":  # an unset checkbox is unchecked
        group = hit.keys[0] == 1.0
    elif parsed.group_by is not None and hit.keys[0] is not None:
        group = note.properties.get(parsed.group_by)
    return QueryRow(note.id, note.title, tuple(note.types), note.properties, note.archived_at is not None,
                    note.created_at, note.updated_at, group)


def encode_cursor(parsed: Definition, last: RowHit) -> str:
    keys = [v.isoformat() if isinstance(v, datetime) else v for v in last.keys]
    payload = json.dumps({"q": parsed.fingerprint, "k": keys, "id": last.note.id}, separators=(",", ":"))
    return _CURSOR_PREFIX + base64.urlsafe_b64encode(payload.encode()).rstrip(b"=").decode()


def decode_cursor(cursor: Any, parsed: Definition) -> tuple[tuple[Any, ...], str]:
    """The (key values, note id) a cursor resumes after; it must come from this same query."""
    bad = ValidationFailed(detail="cursor is not one this query returned",
                           field_errors=[FieldError("cursor", "malformed_cursor",
                                                    "pass next_cursor back unchanged, with the same query")])
    if not isinstance(cursor, str) or not cursor.startswith(_CURSOR_PREFIX) or len(cursor) > 2048:
        raise bad
    try:
        raw = cursor[len(_CURSOR_PREFIX):]
        data = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        keys, last_id = data["k"], data["id"]
        if data["q"] != parsed.fingerprint or not is_ulid(last_id) or len(keys) != len(parsed.keys):
            raise ValueError
        values = tuple(_cursor_value(key, value) for key, value in zip(parsed.keys, keys))
    except (binascii.Error, ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise bad from None
    return values, last_id


def _cursor_value(key: SortKey, value: Any) -> Any:
    if value is None:
        if key.note_field is not None:
            raise ValueError("a note field is never empty")
        return None
    if key.column == "time":
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            raise ValueError("a cursor time carries its offset")
        return parsed
    if key.column == "num":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError("a number")
        return float(value)
    if not isinstance(value, str):
        raise ValueError("a string")
    return value
