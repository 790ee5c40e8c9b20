"""What a note's Loro document may hold — its containers and the values in them — and the check
that a received update kept to it.

A note is two root containers, and neither ``NoteDocument`` nor the browser's model writes
anything else:

- ``blocks``: a movable list of block maps, each ``{id: ULID, type: str, text: LoroText,
  attrs: LoroMap of null/bool/number/str}``;
- ``meta``: a map ``{title: str, types: LoroList of str, properties: LoroMap of plain values}``.

A peer's update can express anything Loro can (a new root container with thousands of entries,
an integer title, ``types`` as a text container); Fastpad's readers would skip or coerce it, but
it would be stored, synced to every replica and paid for on every load. ``schema_violation``
looks only at what an import touched (the containers it changed, and the list of roots), so
checking a keystroke costs one path lookup and one block read.

Text is held to what both backends store: no U+0000 (PostgreSQL refuses it) and no lone
surrogate (not UTF-8, so Loro cannot hold one either).
"""

from __future__ import annotations

from typing import Any

from loro import ContainerType, LoroDoc, LoroMap, LoroText, VersionVector

from fastpad.jsontext import json_depth
from fastpad.notes.ids import is_ulid

BLOCKS, META = "blocks", "meta"
# How deeply a plain value (a property) may nest. Loro turns a value into Python recursively and
# crashes the process on one some ten thousand levels deep: a 24 KB update did it.
MAX_VALUE_DEPTH = 64
# The levels Loro's JSON form of an update puts around a value: the update, its changes, a
# change, its ops, an op, the op's content.
_JSON_UPDATE_LEVELS = 6
_I64 = range(-(2**63), 2**63)
# ContainerType.X are classes here: a container id's ``container_type`` is an instance of one.
_ROOTS = {BLOCKS: ContainerType.MovableList, META: ContainerType.Map}
# What a block map and the meta map hold: a container's type, or (test, what a plain value must be).
_BLOCK_SHAPE: dict[str, Any] = {
    "id": (lambda value: isinstance(value, str) and is_ulid(value), "must be a ULID string"),
    "type": (lambda value: isinstance(value, str), "must be a string"),
    "text": ContainerType.Text,
    "attrs": ContainerType.Map,
}
_META_SHAPE: dict[str, Any] = {
    "title": (lambda value: isinstance(value, str) and storable_text(value), "must be a string of storable text"),
    "types": ContainerType.List,
    "properties": ContainerType.Map,
}


def why_unstorable(text: str) -> str | None:
    """Why ``text`` cannot be stored on both backends; None when it can."""
    if "\x00" in text:
        return "text must not contain U+0000 (NUL)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "text must be valid Unicode (no lone surrogates)"
    return None


def storable_text(text: str) -> bool:
    """Text both backends store as sent: valid Unicode without U+0000."""
    return why_unstorable(text) is None


def storable_value(value: Any, *, nested: bool) -> bool:
    """Whether ``value`` may be stored as a plain value (lists/dicts only if ``nested``)."""
    if value is None or isinstance(value, (bool, float)):
        return True
    if isinstance(value, int):
        return value in _I64
    if isinstance(value, str):
        return storable_text(value)
    if nested and isinstance(value, list):
        return all(storable_value(item, nested=True) for item in value)
    if nested and isinstance(value, dict):
        return all(isinstance(k, str) and storable_text(k) and storable_value(v, nested=True) for k, v in value.items())
    return False


def schema_violation(doc: LoroDoc, before: VersionVector, changed: list[Any]) -> tuple[str, str] | None:
    """Where ``doc`` left the note's schema since ``before``, and how: ``(path, why)``, or None.
    ``changed`` are the containers the import changed; only they (and the roots) are looked at,
    and nothing is turned into Python before the imported ops' nesting is known (from their JSON
    form, counted on its bytes)."""
    imported = doc.export_json_updates(before, doc.oplog_vv)
    if json_depth(imported.encode()) > MAX_VALUE_DEPTH + _JSON_UPDATE_LEVELS:
        return "ops", f"a value nests more than {MAX_VALUE_DEPTH} levels deep"
    for name, container in doc.get_value().items():
        expected = _ROOTS.get(name)
        if expected is None:
            return name, "a note has no such root container (only blocks and meta)"
        if not isinstance(container.container_type, expected):
            return name, f"must be a {_kind(expected)}"
    checked: set[Any] = set()
    for container in changed:
        path = doc.get_path_to_container(container)
        if not path:
            continue  # detached (its block was deleted): nothing the note reads holds it
        root = getattr(path[0][1], "key", None)
        if root == META and META not in checked:
            checked.add(META)
            if found := _meta_violation(doc.get_map(META)):
                return found
        elif root == BLOCKS and len(path) == 1 and BLOCKS not in checked:
            checked.add(BLOCKS)
            for index, item in enumerate(doc.get_movable_list(BLOCKS).get_value()):
                if not isinstance(getattr(item, "container_type", None), ContainerType.Map):
                    return f"blocks[{index}]", "a block must be a map"
        elif root == BLOCKS and len(path) > 1:
            index = getattr(path[1][1], "index", None)
            if index in checked:
                continue
            checked.add(index)
            block = doc.get_movable_list(BLOCKS).get(index)
            block_map = getattr(block, "container", None)
            if isinstance(block_map, LoroMap) and (found := _block_violation(block_map, f"blocks[{index}]")):
                return found
    return None


def _entries_violation(target: LoroMap, path: str, shape: dict[str, Any]) -> tuple[str, str] | None:
    """The first entry of ``target`` that ``shape`` does not admit: each key maps to the container
    type its value must be, or to (test, what it must be) for a plain value."""
    for key, value in target.get_value().items():
        field = f"{path}.{key}"
        expected = shape.get(key)
        if expected is None:
            return field, f"{path.split('[')[0]} entries are only {', '.join(shape)}"
        if isinstance(expected, tuple):
            admits, must = expected
            if not admits(value):
                return field, must
        elif not isinstance(getattr(value, "container_type", None), expected):
            return field, f"must be a {_kind(expected)}"
    return None


def _block_violation(block: LoroMap, path: str) -> tuple[str, str] | None:
    if found := _entries_violation(block, path, _BLOCK_SHAPE):
        return found
    text = block.get("text")
    if text is not None and isinstance(text.container, LoroText) and not storable_text(text.container.to_string()):
        return f"{path}.text", "text must not contain U+0000 (NUL)"
    attrs = block.get("attrs")
    if attrs is not None and isinstance(attrs.container, LoroMap):
        for key, value in attrs.container.get_value().items():
            if not storable_value(value, nested=False):
                return f"{path}.attrs.{key}", "an attribute is null, a boolean, a number or a string"
    return None


def _meta_violation(meta: LoroMap) -> tuple[str, str] | None:
    if found := _entries_violation(meta, META, _META_SHAPE):
        return found
    types = meta.get("types")
    if types is not None:
        for index, name in enumerate(types.container.get_value()):
            if not (isinstance(name, str) and storable_text(name)):
                return f"meta.types[{index}]", "a type is a string"
    properties = meta.get("properties")
    if properties is not None:
        for key, value in properties.container.get_value().items():
            if not storable_value(value, nested=True):
                return f"meta.properties.{key}", "a property is a plain value (no container, no NUL)"
    return None


def _kind(container_type: type) -> str:
    return {ContainerType.Text: "text", ContainerType.Map: "map", ContainerType.List: "list",
            ContainerType.MovableList: "movable list"}[container_type]
