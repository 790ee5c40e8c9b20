"""A note's title and properties held to the reader's trust floor, wherever a structured result
carries them.

A title and a property are text like any other: an auto-apply agent's unreviewed title, a
capture's first line or its frontmatter must not reach the next agent at a floor that would leave
the same words out of a block (issue 29). Every mapping that names a note (``note_id``, else
``id``) beside its ``title`` or ``properties`` — a note, a search hit, either end of an edge, an
export line — is found here, whatever route or tool built it, so a new surface is covered by
construction. The caller looks up which of those names its floor does not admit
(:class:`BelowFloor`); such a title becomes :data:`TITLE_BELOW_FLOOR`, and such a property is left
out, its name too (a name is text its writer chose), with ``properties_below_floor`` counting them.
A former title is held as it was while it was the title: a note's ``aliases`` (beside its id, or
beside the ``note`` it belongs to, as a note's links carry them) lose the ones below the floor,
``aliases_below_floor`` counting them. A row grouped by a property (``group_by``, on the row's page
or given) that is below the floor for that row's note falls in the no-value group: ``group`` is
its value. An edge's ``target_title`` names its ``target`` (a link made by id copies the target's
title into it): it is held with that note's title.
An answer that already says what its read left out (a ``hidden`` list, as search has) also says
how many titles it stood in for (:func:`count_held_titles`).

Pure: the caller says what is below, nothing here reads a note.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

TITLE_BELOW_FLOOR = "Untitled (this note's title is below your trust floor; floor=all shows it)"
PROPERTIES_BELOW_FLOOR = "properties_below_floor"
ALIASES_BELOW_FLOOR = "aliases_below_floor"
_NOTE_ID_KEYS = ("note_id", "id")


@dataclass(frozen=True)
class BelowFloor:
    titles: frozenset[str] = frozenset()  # notes whose title the floor does not admit
    properties: Mapping[str, frozenset[str]] = field(default_factory=dict)  # note -> its properties below
    aliases: Mapping[str, frozenset[str]] = field(default_factory=dict)  # note -> its former titles below

    def __bool__(self) -> bool:
        return bool(self.titles or self.properties or self.aliases)

    def shown_properties(self, note_id: str, properties: Mapping[str, Any]) -> dict[str, Any]:
        below = self.properties.get(note_id, frozenset())
        return {name: value for name, value in properties.items() if name not in below}


def named_note_ids(value: Any) -> set[str]:
    """The ids of every note whose title or properties ``value`` carries."""
    found: set[str] = set()
    _collect(value, found)
    return found


def hold_names(value: Any, below: BelowFloor, *, group_by: str | None = None) -> Any:
    """``value`` with every title and property in ``below`` stood in for or left out; ``group_by``:
    the property the rows in ``value`` are grouped by, when ``value`` does not say it itself."""
    if not below:
        return value
    if isinstance(value, Mapping):
        group_by = value["group_by"] if isinstance(value.get("group_by"), str) else group_by
        held = {k: hold_names(v, below, group_by=group_by) for k, v in value.items()}
        note_id = _note_of(value)
        if note_id is not None:
            if note_id in below.titles and isinstance(value.get("title"), str):
                held["title"] = TITLE_BELOW_FLOOR
            if isinstance(value.get("properties"), Mapping) and note_id in below.properties:
                held["properties"] = below.shown_properties(note_id, value["properties"])
                held[PROPERTIES_BELOW_FLOOR] = len(value["properties"]) - len(held["properties"])
            if "group" in value and group_by in below.properties.get(note_id, ()):
                held["group"] = None
        target = value.get("target")
        if (isinstance(value.get("target_title"), str) and isinstance(target, Mapping)
                and _note_of(target) in below.titles):
            held["target_title"] = TITLE_BELOW_FLOOR
        aliased = _aliases_of(value)
        if aliased is not None and aliased in below.aliases:
            held["aliases"] = [a for a in value["aliases"] if a not in below.aliases[aliased]]
            held[ALIASES_BELOW_FLOOR] = len(value["aliases"]) - len(held["aliases"])
        return held
    if isinstance(value, (list, tuple)):
        return [hold_names(item, below, group_by=group_by) for item in value]
    return value


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, Mapping):
        found.update(n for n in (_note_of(value), _aliases_of(value)) if n is not None)
        for item in value.values():
            _collect(item, found)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, found)


def _note_of(value: Mapping[str, Any]) -> str | None:
    if not isinstance(value.get("title"), str) and not isinstance(value.get("properties"), Mapping):
        return None
    return next((value[k] for k in _NOTE_ID_KEYS if isinstance(value.get(k), str)), None)


def _aliases_of(value: Mapping[str, Any]) -> str | None:
    """The note whose former titles ``value["aliases"]`` lists: its own id, else its ``note``'s."""
    if not isinstance(value.get("aliases"), list):
        return None
    note = value.get("note")
    return _note_of(value) or (_note_of(note) if isinstance(note, Mapping) else None)


def count_held_titles(value: Any, below: BelowFloor, entry: Callable[[int], Any], *, naming: Any = None) -> Any:
    """``value`` (already held) with ``entry(n)`` added to its ``hidden`` list, when it has one and
    ``n`` of the notes it (or ``naming``: what it leaves with) names had their titles stood in for."""
    if not isinstance(value, Mapping) or not isinstance(value.get("hidden"), list):
        return value
    held = len(named_note_ids(value if naming is None else naming) & below.titles)
    return {**value, "hidden": [*value["hidden"], entry(held)]} if held else value
