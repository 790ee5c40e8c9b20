"""JSON Schema (2020-12, MCP's default dialect) building blocks for the twelve tools.

Schemas are written tersely on purpose: the whole ``tools/list`` must fit in
3,500 tokens (tests/mcp/test_tools_list.py counts it), so a property gets a
description only where its name and type do not already say what it is.

Every output schema also admits the RFC 9457 problem document a failed call
carries as its ``structuredContent`` (some clients — the TypeScript SDK among
them — validate ``structuredContent`` against ``outputSchema`` even when
``isError`` is true): its properties describe the success shape, and an
``anyOf`` requires either the success members or the problem members. So no
success result uses ``type``, ``title``, ``status`` or ``detail`` as a
top-level member (they would clash with the problem document's).
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

STR: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
BOOL: Schema = {"type": "boolean"}
OBJ: Schema = {"type": "object"}
STRS: Schema = {"type": "array", "items": STR}
NULLABLE_STR: Schema = {"type": ["string", "null"]}

PROBLEM_MEMBERS = ("type", "title", "status", "detail")


def desc(schema: Schema, text: str) -> Schema:
    return {**schema, "description": text}


def array(items: Schema, **extra: Any) -> Schema:
    return {"type": "array", "items": items, **extra}


def integer(minimum: int, maximum: int, default: int | None = None) -> Schema:
    schema: Schema = {"type": "integer", "minimum": minimum, "maximum": maximum}
    if default is not None:
        schema["default"] = default
    return schema


def enum(*values: str) -> Schema:
    return {"enum": list(values)}


def inputs(properties: dict[str, Schema], *required: str) -> Schema:
    """A tool's input schema: an object that takes exactly these members."""
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def obj(properties: dict[str, Schema], *required: str) -> Schema:
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def outputs(properties: dict[str, Schema], *required: str) -> Schema:
    """A tool's output schema: the success shape, or a problem document (see the module docstring)."""
    clash = set(properties) & set(PROBLEM_MEMBERS)
    if clash:
        raise ValueError(f"a success result may not use the problem members {sorted(clash)}")
    return {
        "type": "object",
        "properties": properties,
        "anyOf": [{"required": list(required)}, {"required": list(PROBLEM_MEMBERS)}],
    }


# -- arguments several tools share -------------------------------------------------------

SESSION: Schema = desc(STR, "from fastpad_capabilities")
FLOOR: Schema = desc(enum("human", "reviewed", "all"), "default human: text a person wrote, accepted or verified as theirs; lower only on purpose")
CURSOR: Schema = STR  # every cut result's hint says to pass its next_cursor back here

# -- members the outbound path adds to a result it had to cut ---------------------------------

BUDGET: dict[str, Schema] = {"next_cursor": STR, "hint": STR}
