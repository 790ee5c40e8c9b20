"""JSON shape limits: no array over N elements, no request over M values, and
no text that cannot be stored.

Checked on the parsed body before any model sees it. Every JSON value
counts once (objects and arrays included), so the total is independent of
how a client nests its data.

JSON can carry two things no store keeps: U+0000, which PostgreSQL refuses in
text and jsonb (SQLite would keep it, so a deployment could not move to
PostgreSQL), and a lone surrogate, which is not UTF-8. A string or member name
holding either is refused here, named in ``field_errors``, so no route ever
hands one to a service.

Nesting is bounded before any parser sees the body (``fastpad.jsontext``,
called from ``api/body_limits.py``, which runs these checks on every body).
"""

from __future__ import annotations

from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.notes.schema import why_unstorable


def check_shape(data: Any, *, max_array_items: int, max_values: int) -> None:
    """Raise :class:`ValidationFailed` naming every oversized array (and the total) and every
    string or member name that cannot be stored."""
    errors: list[FieldError] = []
    values = 0
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        node, path = stack.pop()
        values += 1
        if values > max_values:
            break
        children = len(node) if isinstance(node, (dict, list)) else 0
        if values + len(stack) + children > max_values:
            # every pending node counts at least once: the total is already over
            values = max_values + 1
        if isinstance(node, str) and (why := why_unstorable(node)):
            errors.append(FieldError(path or "body", "invalid_text", why))
        if isinstance(node, list) and len(node) > max_array_items:
            errors.append(
                FieldError(
                    path or "body",
                    "max_items",
                    f"array holds {len(node)} elements; at most {max_array_items} are allowed",
                )
            )
        if values > max_values:
            break
        if isinstance(node, dict):
            for key, child in node.items():
                why = why_unstorable(key)
                name = _escaped(key) if why else str(key)
                field = f"{path}.{name}" if path else name
                if why:
                    errors.append(FieldError(field, "invalid_text", f"member name: {why}"))
                stack.append((child, field))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                stack.append((child, f"{path}[{index}]"))
    if values > max_values:
        errors.append(
            FieldError("body", "max_values", f"the request holds more than {max_values} JSON values")
        )
    if errors:
        errors.sort(key=lambda fe: fe.field)
        raise ValidationFailed(
            detail="The request body is over a JSON shape limit or holds text that cannot be stored",
            field_errors=errors,
        )


def too_deep(depth: int, limit: int) -> ValidationFailed:
    return ValidationFailed(
        detail=f"The JSON body nests {depth} levels deep; at most {limit} levels of arrays and objects are allowed",
        field_errors=[FieldError("body", "max_depth", f"arrays and objects nest at most {limit} levels deep")],
        extra={"max_depth": limit},
    )


def _escaped(name: str) -> str:
    """An unstorable member name, spelled so a problem document (UTF-8 JSON) can name it."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\u0000")
