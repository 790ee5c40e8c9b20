"""The rules a note's property values are held to when a person or an agent writes them.

One set of rules, whichever way the values arrive: the typed API (``PATCH
/v1/notes/{id}/types``), a note created with frontmatter or with ``types`` and
``properties`` fields, and a frontmatter edit sent as ops (``fp push``). A value
under ``Type.property`` of a defined type must be a property that type has
(``unknown_property``), on a note of that type (``type_not_applied``), of its kind
(``values.index_entries``), and — for ``person``, ``file`` and ``relation`` — a
member, a stored attachment, or a visible note of the target type.

What frontmatter may carry beyond that, the typed API may not: a type name nobody
has defined is a tag (types are tags: a capture's ``Inbox``, a vault's tags, a
pushed export's types in a workspace that has not defined them yet), and a key
that names no defined type's property (``status: active``) is the note's own,
kept as written. The typed API applies defined types only; it is how the app
picks one.

Only what a write changes is checked: a value that was accepted before its type
changed, or that an import brought in, stays until someone edits it (the index
holds it as empty meanwhile, ``property_index``). An import is held to none of
this: the importer sorts a vault's values into kept and left out, with a ledger row.
"""

from __future__ import annotations

from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.knowledge.attachments import ATTACHMENTS_PATH
from fastpad.knowledge.property_index import load_schema
from fastpad.knowledge.schema import PropertyDef, Schema
from fastpad.knowledge.values import InvalidValue, index_entries
from fastpad.notes import NoteMeta, is_ulid
from fastpad.security.principals import Principal
from fastpad.store import WorkspaceTx

MAX_FIELD_ERRORS = 50


def validation_failed(errors: list[FieldError]) -> ValidationFailed:
    """One refusal naming every bad field (the first ``MAX_FIELD_ERRORS``, and how many more)."""
    return ValidationFailed(detail=f"{len(errors)} field(s) failed validation", field_errors=errors[:MAX_FIELD_ERRORS],
                            extra={"field_errors_truncated": max(0, len(errors) - MAX_FIELD_ERRORS)})


def value_error(tx: WorkspaceTx, principal: Principal, schema: Schema, types: list[str], key: str,
                value: Any) -> FieldError | None:
    """Why ``key`` cannot take ``value`` on a note of ``types`` (None: it can)."""
    field = f"properties.{key}"
    resolved = schema.resolve(key)
    if resolved is None:
        return FieldError(field, "unknown_property", "no such property; properties are named Type.property")
    owner, prop = resolved
    if owner.name not in schema.closure(types):
        return FieldError(field, "type_not_applied",
                          f"the note is not of type {owner.name}: add it (or a type that extends it) first")
    if value is None:
        return None
    try:
        index_entries(prop, value)
    except InvalidValue as invalid:
        return FieldError(field, invalid.code, invalid.message)
    return _reference_error(tx, principal, schema, prop, value, field)


def changed_value_errors(tx: WorkspaceTx, principal: Principal, before: NoteMeta | None, after: NoteMeta) -> list[FieldError]:
    """What is wrong with the values of defined properties that ``after`` adds or changes over
    ``before`` (``None``: a new note), by the module's rules; an empty list when nothing is."""
    old_values = before.properties if before else {}
    changed = {key: value for key, value in after.properties.items()
               if key not in old_values or old_values[key] != value}
    if not changed:
        return []
    schema = load_schema(tx)
    errors = []
    for key, value in changed.items():
        owner, dot, _ = key.partition(".")
        if dot and schema.get(owner) is not None:
            error = value_error(tx, principal, schema, list(after.types), key, value)
            if error is not None:
                errors.append(error)
    return errors


def _reference_error(
    tx: WorkspaceTx, principal: Principal, schema: Schema, prop: PropertyDef, value: str, field: str
) -> FieldError | None:
    """A person must be a member of the workspace; a file an attachment stored in it; a
    relation's note must be one the caller can see, not in the trash, and of the property's
    target type."""
    if prop.kind == "person" and tx.member(value) is None:
        return FieldError(field, "member", "not a member of this workspace")
    if prop.kind == "file":
        attachment_id = value.removeprefix(ATTACHMENTS_PATH)
        if not is_ulid(attachment_id) or not tx.imports.attachment_exists(attachment_id):
            return FieldError(field, "attachment", f"an attachment of this workspace ({ATTACHMENTS_PATH}{{id}}, "
                                                   "as POST /v1/attachments returns it)")
    if prop.kind == "relation":
        if outside := principal.note_outside_set(value, field):
            return outside
        note = tx.note(value)
        if note is None or note.trashed_at is not None:
            return FieldError(field, "note", f"no note {value}")
        if prop.target not in schema.closure(note.types):
            return FieldError(field, "target_type", f"the note is not of type {prop.target}")
    return None
