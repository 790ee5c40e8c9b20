"""The checks every note edit runs on its inputs before its first write: Loro has no way to
abort a transaction, so a half-applied edit would ride along with the next commit."""

from __future__ import annotations

from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.notes.schema import storable_text, storable_value


def check_text(text: Any, field: str) -> None:
    if not isinstance(text, str) or not storable_text(text):
        raise invalid(field, "invalid_text", "Block text must be a string of valid Unicode (no lone surrogates, no U+0000).")


def check_attr(key: str, value: Any) -> None:
    if not storable_value(value, nested=False):
        raise invalid(f"attrs.{key}", "invalid_value", "An attribute must be null, a boolean, a number or a string.")


def check_offset(offset: Any, length: int) -> None:
    if type(offset) is not int or not 0 <= offset <= length:
        raise ValidationFailed(
            detail=f"Offset {offset!r} is outside the block's text, which has {length} code points; use 0 to {length}.",
            field_errors=[FieldError("offset", "out_of_range", f"Must be between 0 and {length} (code points).")],
            extra={"min": 0, "max": length, "actual": offset},
        )


def invalid(field: str, code: str, message: str) -> ValidationFailed:
    return ValidationFailed(detail=message, field_errors=[FieldError(field, code, message)])
