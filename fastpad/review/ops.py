"""The proposal op model: what an agent may ask for, validated into typed ops.

Seven kinds. Four change prose and address blocks by anchor handle:

- ``insert_after``  ``{handle | null, text, type?, attrs?, source_block_ids?}`` — ``null``: at the start
- ``insert_before`` ``{handle | null, text, type?, attrs?, source_block_ids?}`` — ``null``: at the end
- ``replace_block`` ``{handle, text, type?, attrs?, source_block_ids?}`` — ``type``/``attrs`` only if they change
- ``delete``        ``{handle}``

Three do not touch prose and **always wait for a person**, whatever the token
was granted (:func:`needs_person`):

- ``add_edge``   ``{type, to_note_id, to_block_id?, handle?, evidence?}`` — a typed
  connection from this note (or from the block ``handle`` names)
- ``add_event``  ``{title, start, end, handle?, location?}`` — ISO 8601 with an offset
- ``move_event`` ``{event_id, start, end}``

Every op is ``{"op": kind, ...}``. Unknown members are refused rather than
ignored, so a typo never silently changes what a proposal means.

Handles stay opaque here: :func:`resolve_handles` turns each into a block id
through a caller-supplied function (the service opens the handle for its session,
token and note and checks its frontier), and only resolved ops can be applied.

Limits (one proposal is one reviewable diff; anything bigger should be several):

- ``MAX_OPS = 100`` ops per proposal — a person reviews the diff block by block.
- ``MAX_TEXT_CHARS = 20_000`` code points per block text — well past any prose
  paragraph, room for a long code block.
- ``MAX_TOTAL_TEXT_CHARS = 100_000`` code points across all ops — the atom
  budget the note engine accepts in one save.
- ``MAX_SOURCE_BLOCK_IDS = 100`` citations per op and per proposal.
- 500 code points for a title or edge type, 2,000 for evidence, 1,000 for a location.

All problems are collected, each with a field path (``ops[3].text``); a 422 lists at
most 50, with ``field_errors_truncated`` counting the rest.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, Union

from fastpad.errors import FieldError, ValidationFailed
from fastpad.notes.blocks import BLOCK_TYPES, MAX_TITLE_CHARS, PARAGRAPH, normalize_attrs
from fastpad.notes.ids import is_ulid
from fastpad.notes.schema import storable_text

MAX_OPS = 100
MAX_TEXT_CHARS = 20_000
MAX_TOTAL_TEXT_CHARS = 100_000
MAX_SOURCE_BLOCK_IDS = 100
MAX_EVIDENCE_CHARS = 2_000
MAX_LOCATION_CHARS = 1_000
MAX_HANDLE_CHARS = 256
MAX_IDEMPOTENCY_KEY_CHARS = 255
MAX_FIELD_ERRORS = 50

PROSE_KINDS = frozenset({"insert_after", "insert_before", "replace_block", "delete"})
PERSON_ONLY_KINDS = frozenset({"add_edge", "add_event", "move_event"})
OP_KINDS = ("insert_after", "insert_before", "replace_block", "delete", "add_edge", "add_event", "move_event")

_EDGE_TYPE = re.compile(r"^[A-Za-z][A-Za-z0-9_:\-]*$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


# -- typed ops ---------------------------------------------------------------------------


@dataclass(frozen=True)
class InsertAfter:
    handle: str | None
    text: str
    type: str = PARAGRAPH
    attrs: dict[str, Any] = field(default_factory=dict)
    source_block_ids: tuple[str, ...] = ()
    block_id: str | None = None  # the anchor, once the handle is resolved
    kind: Literal["insert_after"] = "insert_after"


@dataclass(frozen=True)
class InsertBefore:
    handle: str | None
    text: str
    type: str = PARAGRAPH
    attrs: dict[str, Any] = field(default_factory=dict)
    source_block_ids: tuple[str, ...] = ()
    block_id: str | None = None
    kind: Literal["insert_before"] = "insert_before"


@dataclass(frozen=True)
class ReplaceBlock:
    handle: str
    text: str
    type: str | None = None  # None: keep the block's type
    attrs: dict[str, Any] | None = None  # None: keep its attrs; given keys override
    source_block_ids: tuple[str, ...] = ()
    block_id: str | None = None
    kind: Literal["replace_block"] = "replace_block"


@dataclass(frozen=True)
class Delete:
    handle: str
    block_id: str | None = None
    kind: Literal["delete"] = "delete"


@dataclass(frozen=True)
class AddEdge:
    type: str
    to_note_id: str
    to_block_id: str | None = None
    handle: str | None = None  # from this block; None: from the note
    evidence: str | None = None
    block_id: str | None = None
    kind: Literal["add_edge"] = "add_edge"


@dataclass(frozen=True)
class AddEvent:
    title: str
    start: datetime
    end: datetime
    handle: str | None = None  # the block the event belongs to, if any
    location: str | None = None
    block_id: str | None = None
    kind: Literal["add_event"] = "add_event"


@dataclass(frozen=True)
class MoveEvent:
    event_id: str
    start: datetime
    end: datetime
    kind: Literal["move_event"] = "move_event"
    handle: None = None
    block_id: None = None


ProseOp = Union[InsertAfter, InsertBefore, ReplaceBlock, Delete]
Op = Union[InsertAfter, InsertBefore, ReplaceBlock, Delete, AddEdge, AddEvent, MoveEvent]


def needs_person(op: Op) -> bool:
    """Edges and calendar ops wait for a person on every path, whatever the grants."""
    return op.kind in PERSON_ONLY_KINDS


def is_prose(op: Op) -> bool:
    return op.kind in PROSE_KINDS


@dataclass(frozen=True)
class ProposalRequest:
    """A validated proposal body (``fastpad_propose`` / ``POST /v1/turns``)."""

    note_id: str
    ops: tuple[Op, ...]
    expected_frontier: str
    idempotency_key: str
    dry_run: bool = False
    source_block_ids: tuple[str, ...] = ()

    @property
    def needs_person(self) -> bool:
        return any(needs_person(op) for op in self.ops)


# -- validation ----------------------------------------------------------------------------


class _Errors:
    def __init__(self) -> None:
        self.items: list[FieldError] = []

    def add(self, path: str, code: str, message: str) -> None:
        self.items.append(FieldError(path, code, message))

    def raise_if_any(self) -> None:
        if not self.items:
            return
        shown, rest = self.items[:MAX_FIELD_ERRORS], len(self.items) - MAX_FIELD_ERRORS
        first = shown[0]
        more = f" (and {len(self.items) - 1} more)" if len(self.items) > 1 else ""
        raise ValidationFailed(
            detail=f"{first.field}: {first.message}{more}",
            field_errors=shown,
            extra={"field_errors_truncated": rest} if rest > 0 else {},
            next_call="fix the fields named in field_errors and propose again",
        )


_ALLOWED: dict[str, frozenset[str]] = {
    "insert_after": frozenset({"op", "handle", "text", "type", "attrs", "source_block_ids"}),
    "insert_before": frozenset({"op", "handle", "text", "type", "attrs", "source_block_ids"}),
    "replace_block": frozenset({"op", "handle", "text", "type", "attrs", "source_block_ids"}),
    "delete": frozenset({"op", "handle"}),
    "add_edge": frozenset({"op", "type", "to_note_id", "to_block_id", "handle", "evidence"}),
    "add_event": frozenset({"op", "title", "start", "end", "handle", "location"}),
    "move_event": frozenset({"op", "event_id", "start", "end"}),
}


def validate_ops(raw: Any, *, path: str = "ops") -> list[Op]:
    """Typed ops from a decoded JSON list, or ``ValidationFailed`` naming every bad field."""
    errors = _Errors()
    ops = _ops(raw, path, errors)
    errors.raise_if_any()
    return ops


def validate_proposal(body: Any) -> ProposalRequest:
    """A whole proposal body: ``note_id``, ``ops``, ``expected_frontier``, ``idempotency_key``,
    optional ``dry_run`` and ``source_block_ids``. Frontier syntax is the note engine's to
    check (it must also be one the note has been at); here it must be a non-empty string."""
    errors = _Errors()
    if not isinstance(body, Mapping):
        errors.add("", "invalid_type", "The proposal must be a JSON object.")
        errors.raise_if_any()
    allowed = {"note_id", "ops", "expected_frontier", "idempotency_key", "dry_run", "source_block_ids"}
    for key in body:
        if key not in allowed:
            errors.add(str(key), "unknown_field", f"Unknown member {key!r}; a proposal takes {sorted(allowed)}.")
    note_id = body.get("note_id")
    if not is_ulid(note_id):
        errors.add("note_id", "ulid", "note_id must be the note's ULID.")
    frontier = body.get("expected_frontier")
    if not isinstance(frontier, str) or not frontier:
        errors.add("expected_frontier", "required", "expected_frontier is required: the frontier fastpad_fetch returned.")
    key = body.get("idempotency_key")
    if not isinstance(key, str) or not key.strip():
        errors.add("idempotency_key", "required", "idempotency_key is required; retry a dropped call under the same key.")
    elif len(key) > MAX_IDEMPOTENCY_KEY_CHARS or _CONTROL.search(key):
        errors.add(
            "idempotency_key", "invalid_value", f"At most {MAX_IDEMPOTENCY_KEY_CHARS} printable characters."
        )
    dry_run = body.get("dry_run", False)
    if not isinstance(dry_run, bool):
        errors.add("dry_run", "invalid_type", "dry_run must be true or false.")
    sources = _source_ids(body.get("source_block_ids"), "source_block_ids", errors)
    ops = _ops(body.get("ops"), "ops", errors)
    errors.raise_if_any()
    return ProposalRequest(note_id, tuple(ops), frontier, key, dry_run, sources)


def proposal_fingerprint(body: Mapping[str, Any]) -> str:
    """A stable digest of a proposal body, for idempotency: the same key with a different
    fingerprint is an ``idempotency-conflict``. Key order and whitespace do not matter."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _ops(raw: Any, path: str, errors: _Errors) -> list[Op]:
    if not isinstance(raw, list):
        errors.add(path, "invalid_type", "ops must be a list of op objects.")
        return []
    if not raw:
        errors.add(path, "min_items", "A proposal needs at least one op.")
        return []
    if len(raw) > MAX_OPS:
        errors.add(path, "max_items", f"At most {MAX_OPS} ops per proposal; split the change into several proposals.")
        return []
    ops: list[Op] = []
    total = 0
    for index, item in enumerate(raw):
        op = _op(item, f"{path}[{index}]", errors)
        if op is not None:
            ops.append(op)
            total += len(getattr(op, "text", "") or "")
    if total > MAX_TOTAL_TEXT_CHARS:
        errors.add(
            path, "max_total_text", f"The ops carry {total} code points of text; at most {MAX_TOTAL_TEXT_CHARS} per proposal."
        )
    return ops


def _op(item: Any, path: str, errors: _Errors) -> Op | None:
    if not isinstance(item, Mapping):
        errors.add(path, "invalid_type", "Each op must be an object with an \"op\" member.")
        return None
    kind = item.get("op")
    if kind not in _ALLOWED:
        errors.add(f"{path}.op", "unknown_op", f"Unknown op {kind!r}; use one of {list(OP_KINDS)}.")
        return None
    before = len(errors.items)
    for key in item:
        if key not in _ALLOWED[kind]:
            errors.add(f"{path}.{key}", "unknown_field", f"{kind} takes {sorted(_ALLOWED[kind] - {'op'})}; not {key!r}.")

    op: Op | None = None
    if kind in ("insert_after", "insert_before"):
        handle = _handle(item, path, errors, required=False)
        text = _text(item, path, errors)
        block_type, attrs = _block_shape(item, path, errors, default_type=PARAGRAPH)
        sources = _source_ids(item.get("source_block_ids"), f"{path}.source_block_ids", errors)
        cls = InsertAfter if kind == "insert_after" else InsertBefore
        op = cls(handle, text, block_type or PARAGRAPH, attrs or {}, sources)
    elif kind == "replace_block":
        handle = _handle(item, path, errors, required=True)
        text = _text(item, path, errors)
        block_type, attrs = _block_shape(item, path, errors, default_type=None)
        sources = _source_ids(item.get("source_block_ids"), f"{path}.source_block_ids", errors)
        op = ReplaceBlock(handle, text, block_type, attrs, sources)
    elif kind == "delete":
        op = Delete(_handle(item, path, errors, required=True))
    elif kind == "add_edge":
        edge_type = _string(item, "type", path, errors, max_chars=MAX_TITLE_CHARS)
        if edge_type and not _EDGE_TYPE.match(edge_type):
            errors.add(f"{path}.type", "invalid_value", "An edge type is a name: a letter, then letters, digits, _ : or -.")
        to_note = item.get("to_note_id")
        if not is_ulid(to_note):
            errors.add(f"{path}.to_note_id", "ulid", "to_note_id must be the target note's ULID.")
        to_block = item.get("to_block_id")
        if to_block is not None and not is_ulid(to_block):
            errors.add(f"{path}.to_block_id", "ulid", "to_block_id must be a block ULID, or omitted.")
        evidence = _string(item, "evidence", path, errors, max_chars=MAX_EVIDENCE_CHARS, required=False)
        op = AddEdge(edge_type or "", to_note, to_block, _handle(item, path, errors, required=False), evidence)
    elif kind == "add_event":
        title = _string(item, "title", path, errors, max_chars=MAX_TITLE_CHARS)
        start, end = _window(item, path, errors)
        location = _string(item, "location", path, errors, max_chars=MAX_LOCATION_CHARS, required=False)
        op = AddEvent(title or "", start, end, _handle(item, path, errors, required=False), location)  # type: ignore[arg-type]
    elif kind == "move_event":
        event_id = item.get("event_id")
        if not is_ulid(event_id):
            errors.add(f"{path}.event_id", "ulid", "event_id must be the event's ULID.")
        start, end = _window(item, path, errors)
        op = MoveEvent(event_id, start, end)  # type: ignore[arg-type]
    return op if len(errors.items) == before else None


def _handle(item: Mapping[str, Any], path: str, errors: _Errors, *, required: bool) -> str | None:
    if "handle" not in item or item["handle"] is None:
        if required:
            errors.add(f"{path}.handle", "required", "handle is required: use one fastpad_fetch returned with with_handles: true.")
        return None
    handle = item["handle"]
    if not isinstance(handle, str) or not handle or len(handle) > MAX_HANDLE_CHARS:
        errors.add(f"{path}.handle", "invalid_handle", "handle must be a handle string from fastpad_fetch.")
        return None
    return handle


def _text(item: Mapping[str, Any], path: str, errors: _Errors) -> str:
    text = item.get("text")
    if text is None:
        errors.add(f"{path}.text", "required", "text is required.")
        return ""
    if not isinstance(text, str):
        errors.add(f"{path}.text", "invalid_type", "text must be a string.")
        return ""
    if not storable_text(text):
        errors.add(f"{path}.text", "invalid_text", "text must be valid Unicode (no lone surrogates, no U+0000).")
    if len(text) > MAX_TEXT_CHARS:
        errors.add(f"{path}.text", "max_length", f"At most {MAX_TEXT_CHARS} code points per block; this has {len(text)}.")
    return text


def _block_shape(
    item: Mapping[str, Any], path: str, errors: _Errors, *, default_type: str | None
) -> tuple[str | None, dict[str, Any] | None]:
    block_type = item.get("type", default_type)
    if block_type is not None and block_type not in BLOCK_TYPES:
        errors.add(f"{path}.type", "unknown_type", f"Unknown block type {block_type!r}; use one of {sorted(BLOCK_TYPES)}.")
        return None, None
    attrs = item.get("attrs")
    if attrs is None:
        return block_type, None if default_type is None else {}
    if not isinstance(attrs, Mapping):
        errors.add(f"{path}.attrs", "invalid_type", "attrs must be an object.")
        return block_type, None
    if block_type is None:
        # replace_block without a type: the block's own type decides which attrs exist;
        # only the value shapes can be checked here, the applier checks the keys.
        known = {key: default for spec in BLOCK_TYPES.values() for key, default in spec.items()}
    else:
        known = BLOCK_TYPES[block_type]
    for key, value in attrs.items():
        if key not in known:
            errors.add(f"{path}.attrs.{key}", "unknown_attr", f"A {block_type or 'block'} has no attribute {key!r}.")
        elif type(value) is not type(known[key]) and not (type(known[key]) is int and type(value) is float and value.is_integer()):
            errors.add(f"{path}.attrs.{key}", "invalid_type", f"{key} must be a {type(known[key]).__name__}.")
    return block_type, dict(attrs)


def _source_ids(raw: Any, path: str, errors: _Errors) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        errors.add(path, "invalid_type", "source_block_ids must be a list of block ULIDs.")
        return ()
    if len(raw) > MAX_SOURCE_BLOCK_IDS:
        errors.add(path, "max_items", f"At most {MAX_SOURCE_BLOCK_IDS} source block ids.")
        return ()
    out: list[str] = []
    for index, value in enumerate(raw):
        if not is_ulid(value):
            errors.add(f"{path}[{index}]", "ulid", "Each source block id must be a block ULID.")
        elif value not in out:
            out.append(value)
    return tuple(out)


def _string(
    item: Mapping[str, Any], key: str, path: str, errors: _Errors, *, max_chars: int, required: bool = True
) -> str | None:
    value = item.get(key)
    if value is None:
        if required:
            errors.add(f"{path}.{key}", "required", f"{key} is required.")
        return None
    if not isinstance(value, str) or not storable_text(value) or (required and not value.strip()):
        errors.add(f"{path}.{key}", "invalid_value", f"{key} must be a non-empty string of valid Unicode.")
        return None
    if len(value) > max_chars:
        errors.add(f"{path}.{key}", "max_length", f"At most {max_chars} code points.")
        return None
    return value


def _window(item: Mapping[str, Any], path: str, errors: _Errors) -> tuple[datetime | None, datetime | None]:
    start = _timestamp(item, "start", path, errors)
    end = _timestamp(item, "end", path, errors)
    if start is not None and end is not None and end < start:
        errors.add(f"{path}.end", "before_start", "end must not be before start.")
    return start, end


def _timestamp(item: Mapping[str, Any], key: str, path: str, errors: _Errors) -> datetime | None:
    value = item.get(key)
    if value is None:
        errors.add(f"{path}.{key}", "required", f"{key} is required (ISO 8601 with an offset).")
        return None
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        errors.add(f"{path}.{key}", "invalid_timestamp", f"{key} must be ISO 8601 with an offset, e.g. 2025-03-01T09:00:00+01:00.")
        return None
    return parsed


# -- handle resolution -----------------------------------------------------------------------


def resolve_handles(ops: Sequence[Op], open_one: Callable[[str, str], str], *, path: str = "ops") -> list[Op]:
    """Each op with its ``block_id`` filled in. ``open_one(handle, field_path)`` returns the
    block id the handle names, or raises (``out-of-scope``, ``handle-expired``, ``stale-frontier``)
    with ``field_path`` in its field errors. Ops without a handle pass through unchanged."""
    resolved: list[Op] = []
    for index, op in enumerate(ops):
        if op.handle is None:
            resolved.append(op)
        else:
            resolved.append(replace(op, block_id=open_one(op.handle, f"{path}[{index}].handle")))  # type: ignore[arg-type]
    return resolved


def normalized_attrs(block_type: str, attrs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Attrs as the note engine stores them (integral floats from JSON become ints)."""
    fixed = {
        key: int(value) if type(value) is float and type(BLOCK_TYPES[block_type].get(key)) is int else value
        for key, value in (attrs or {}).items()
    }
    return normalize_attrs(block_type, fixed)
