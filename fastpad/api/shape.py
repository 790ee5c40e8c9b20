"""JSON shape limits: no array over N elements, no request over M values.

Checked on the parsed body before any model sees it. Every JSON value
counts once (objects and arrays included), so the total is independent of
how a client nests its data.
"""

from __future__ import annotations

from typing import Any

from fastpad.errors import FieldError, ValidationFailed


def check_shape(data: Any, *, max_array_items: int, max_values: int) -> None:
    """Raise :class:`ValidationFailed` naming every oversized array (and the total)."""
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
                stack.append((child, f"{path}.{key}" if path else str(key)))
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
            detail="The request body is over a JSON shape limit", field_errors=errors
        )
