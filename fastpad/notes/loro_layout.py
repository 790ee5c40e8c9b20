"""The note's Loro layout (drawn in :mod:`fastpad.notes.document`) as any peer may have left
it: reading it leniently — whatever another peer wrote, each block reads as a valid
``Block`` — and writing it minimally, touching only what changed, so concurrent edits of
the rest survive the merge."""

from __future__ import annotations

from typing import Any

from loro import LoroList, LoroMap, LoroText

from fastpad.notes.blocks import BLOCK_TYPES, PARAGRAPH, Block
from fastpad.notes.ids import is_ulid

# Myers diff costs O(length × edit size): a 150k-character rewrite took 110 s. Past this
# budget a diff degrades to lines, then to a plain replace.
_DIFF_TIMEOUT_MS = 50


# -- reading what any peer may have written ---------------------------------------------------


def value_of(item: Any) -> Any:
    container = getattr(item, "container", None)
    return container.get_deep_value() if container is not None else getattr(item, "value", None)


def read_id(item: Any) -> str | None:
    container = getattr(item, "container", None)
    if not isinstance(container, LoroMap):
        return None
    block_id = value_of(container.get("id"))
    return block_id if is_ulid(block_id) else None


def read_block(value: Any) -> Block:
    if not isinstance(value, dict):
        return Block(None, PARAGRAPH)
    block_id, block_type, text, attrs = (value.get(key) for key in ("id", "type", "text", "attrs"))
    block_type = block_type if block_type in BLOCK_TYPES else PARAGRAPH
    return Block(
        block_id if is_ulid(block_id) else None,
        block_type,
        text if isinstance(text, str) else "",
        _coerce_attrs(block_type, attrs if isinstance(attrs, dict) else {}),
    )


def _coerce_attrs(block_type: str, attrs: dict[str, Any]) -> dict[str, Any]:
    """Each attribute with its default's type; a value of another type reads as the default.
    JS numbers arrive as floats, so an integral float is an int."""
    coerced = {}
    for key, default in BLOCK_TYPES[block_type].items():
        value = attrs.get(key, default)
        if type(default) is int and type(value) is float and value.is_integer():
            value = int(value)
        coerced[key] = value if type(value) is type(default) else default
    return coerced


# -- writing ------------------------------------------------------------------------------------


def existing_container(parent: LoroMap, key: str, kind: type) -> Any:
    """The ``kind`` container under ``key``, or None if there is none (or something else)."""
    container = getattr(parent.get(key), "container", None)
    return container if isinstance(container, kind) else None


def child_container(parent: LoroMap, key: str, kind: type) -> Any:
    """The ``kind`` container under ``key``, created if a peer left something else there."""
    container = existing_container(parent, key, kind)
    return parent.insert_container(key, kind()) if container is None else container


def text_container(block_map: LoroMap) -> LoroText:
    """The block's text container; a plain string left by another peer is converted in place."""
    text = existing_container(block_map, "text", LoroText)
    if text is not None:
        return text
    value = value_of(block_map.get("text"))
    text = block_map.insert_container("text", LoroText())
    if isinstance(value, str) and value:
        text.insert(0, value)
    return text


def rewrite_text(target: LoroText, text: str) -> None:
    """Make ``target`` read ``text`` through the smallest diff found in time, so concurrent
    edits to the parts that did not change survive the merge."""
    for diff in (target.update, target.update_by_line):
        try:
            diff(text, timeout_ms=_DIFF_TIMEOUT_MS)
            return
        except ValueError:  # Loro's timeout, raised before anything is written
            continue
    target.splice(0, target.len_unicode, text)


def sync_list(target: LoroList, old: list[Any], new: list[Any]) -> None:
    """Turn ``old`` into ``new`` touching only the differing middle, not the shared ends."""
    start = 0
    while start < min(len(old), len(new)) and same_value(old[start], new[start]):
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and same_value(old[-1 - end], new[-1 - end]):
        end += 1
    if len(old) - start - end:
        target.delete(start, len(old) - start - end)
    for offset, item in enumerate(new[start : len(new) - end]):
        target.insert(start + offset, item)


def same_value(a: Any, b: Any) -> bool:
    """Equality that tells ``True`` from ``1`` and ``1`` from ``1.0``, as Loro stores them apart."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same_value, a, b))
    return a == b
