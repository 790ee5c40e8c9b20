"""Structured results (JSON-like values) prepared for a reader who is not a person, the same
way on every surface (the MCP tools' results, the HTTP API's JSON):

- every string — every value *and every member name*, whatever the member is called — is
  redacted (a short value read with its member's name, so ``{"password": "…"}`` is recognised as
  well as ``password: …`` in text), then its links neutralised (:func:`fastpad.outbound.prepare`).
  No name is exempt: a note's property may be called ``id``, ``type`` or ``review_url`` as easily
  as anything else. What the server mints passes unchanged by construction, not by name:
  identifiers, frontiers, handles and cursors are shapes no secret rule matches, and the URLs
  it mints point at its own origin, which link neutralisation leaves live
  (``OutboundPolicy.own_origin``);
- the text of a block-shaped value is masked with the block's scope, so its placeholders are
  the ones the note's owner can expand (:func:`~fastpad.outbound.secrets.block_scope`);
- a block-shaped value — a mapping carrying both ``origin`` and ``review_state`` (a note's block,
  a block's version in its history) — that the reader's trust floor does not admit is left out of
  the list that holds it, so text below the floor never leaves, whatever route carried it.

Pure: the caller says what the floor admits (``admit``), nothing here reads a note.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fastpad.outbound.pipeline import OutboundPolicy, prepare
from fastpad.outbound.secrets import block_scope

Admit = Callable[[Any, Any], bool]  # (origin, review_state) -> may this reader see it?
_NAMED_VALUE_MAX = 512  # property values, titles, names: long text is never a bare secret value


def prepare_document(value: Any, policy: OutboundPolicy, admit: Admit | None = None, scope: str = "") -> Any:
    """``value`` as it may leave (see the module docstring); ``admit`` None keeps every block;
    ``scope`` names the text the strings belong to (a block's, inside a block)."""
    return _Document(policy, admit).prepare(value, scope)


class _Document:
    """One document's preparation. A string met twice in it — a member name on every item, an id
    named in two places — is prepared once: what :func:`prepare` makes of a string depends on the
    string, its scope and the policy alone, and a search result's member names were two thirds of
    its strings (issue 29)."""

    def __init__(self, policy: OutboundPolicy, admit: Admit | None) -> None:
        self.policy, self.admit = policy, admit
        self._prepared: dict[tuple[str, str], str] = {}

    def text(self, text: str, scope: str = "") -> str:
        prepared = self._prepared.get((text, scope))
        if prepared is None:
            prepared = self._prepared[(text, scope)] = prepare(text, self.policy, scope).text
        return prepared

    def prepare(self, value: Any, scope: str) -> Any:
        if isinstance(value, str):
            return self.text(value, scope)
        if isinstance(value, Mapping):
            scope = _block_scope(value) or scope
            return {self.text(str(k)): self._member(str(k), v, scope) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.prepare(item, scope) for item in value if self.admit is None or _admitted(item, self.admit)]
        return value

    def _member(self, key: str, value: Any, scope: str) -> Any:
        """One member of a mapping. A short one-line string is read with its name, as ``name: value``:
        some secrets are recognisable only by what they are called (a property ``password`` or
        ``aws_secret_access_key``), and the rules that know those names need to see them."""
        if isinstance(value, str) and len(value) <= _NAMED_VALUE_MAX and "\n" not in value:
            named = self.text(f"{key}: {value}", scope)
            if named.startswith(f"{key}: "):
                return named[len(key) + 2:]
        return self.prepare(value, scope)


def is_block(value: Any) -> bool:
    """A value carrying provenance: a block, or one version of one."""
    return isinstance(value, Mapping) and "origin" in value and "review_state" in value


def _block_scope(value: Mapping[str, Any]) -> str:
    block_id = value.get("block_id") or value.get("id") if is_block(value) else None
    return block_scope(block_id) if isinstance(block_id, str) else ""


def _admitted(item: Any, admit: Admit) -> bool:
    return not is_block(item) or admit(item["origin"], item["review_state"])
