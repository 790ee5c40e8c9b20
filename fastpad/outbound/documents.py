"""Structured results (JSON-like values) prepared for a reader who is not a person, the same
way on every surface (the MCP tools' results, the HTTP API's JSON):

- every string that can hold note text is redacted (a short value read with its member's name,
  so ``{"password": "…"}`` is recognised as well as ``password: …`` in text), then its links neutralised
  (:func:`fastpad.outbound.prepare`); identifiers, handles, cursors, frontiers and the URLs this
  server mints (:data:`MACHINE_KEYS`) pass as they are — they are not note text, and a review URL
  is meant to be opened by a person;
- a block-shaped value — a mapping carrying both ``origin`` and ``review_state`` (a note's block,
  a block's version in its history) — that the reader's trust floor does not admit is left out of
  the list that holds it, so text below the floor never leaves, whatever route carried it.

Pure: the caller says what the floor admits (``admit``), nothing here reads a note.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fastpad.outbound.pipeline import OutboundPolicy, prepare

# Members whose values are never note text: left exactly as the server made them (``next`` is the
# server's own instruction, and may name a review URL a person is meant to open).
MACHINE_KEYS = frozenset({
    "session", "handles", "next_cursor", "frontier", "expected_frontier", "current_frontier", "review_url",
    "type", "docs_url", "instance", "note_id", "block_id", "turn_id", "id", "edge_id", "anchors", "note_ids",
    "cursor", "next",
})

Admit = Callable[[Any, Any], bool]  # (origin, review_state) -> may this reader see it?
_NAMED_VALUE_MAX = 512  # property values, titles, names: long text is never a bare secret value


def prepare_document(value: Any, policy: OutboundPolicy, admit: Admit | None = None, key: str | None = None) -> Any:
    """``value`` as it may leave (see the module docstring); ``admit`` None keeps every block."""
    if key in MACHINE_KEYS:
        return value
    if isinstance(value, str):
        return prepare(value, policy).text
    if isinstance(value, Mapping):
        return {k: _member(k, v, policy, admit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [prepare_document(item, policy, admit) for item in value if admit is None or _admitted(item, admit)]
    return value


def _member(key: str, value: Any, policy: OutboundPolicy, admit: Admit | None) -> Any:
    """One member of a mapping. A short one-line string is read with its name, as ``name: value``:
    some secrets are recognisable only by what they are called (a property ``password`` or
    ``aws_secret_access_key``), and the rules that know those names need to see them."""
    if isinstance(value, str) and key not in MACHINE_KEYS and len(value) <= _NAMED_VALUE_MAX and "\n" not in value:
        named = prepare(f"{key}: {value}", policy).text
        if named.startswith(f"{key}: "):
            return named[len(key) + 2:]
    return prepare_document(value, policy, admit, key)


def is_block(value: Any) -> bool:
    """A value carrying provenance: a block, or one version of one."""
    return isinstance(value, Mapping) and "origin" in value and "review_state" in value


def _admitted(item: Any, admit: Admit) -> bool:
    return not is_block(item) or admit(item["origin"], item["review_state"])
