"""A note's title held to the reader's trust floor, wherever a structured result carries it.

A title is text like any other: an auto-apply agent's unreviewed title, or a capture's first
line, must not reach the next agent at a floor that would leave the same words out of a block
(issue 29). Every mapping that pairs a ``title`` with the note it names (``note_id``, else
``id``: a note, a search hit, either end of an edge) is found here, whatever route or tool
built it, so a new surface is covered by construction; the caller looks up which of those
notes' titles its floor does not admit, and their titles become :data:`TITLE_BELOW_FLOOR`.

Pure: the caller says which titles are below (``below``), nothing here reads a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TITLE_BELOW_FLOOR = "Untitled (this note's title is below your trust floor; floor=all shows it)"
_NOTE_ID_KEYS = ("note_id", "id")


def titled_note_ids(value: Any) -> set[str]:
    """The ids of every note whose title ``value`` carries."""
    found: set[str] = set()
    _collect(value, found)
    return found


def hold_titles(value: Any, below: set[str]) -> Any:
    """``value`` with the title of every note in ``below`` replaced by the stand-in."""
    if not below:
        return value
    if isinstance(value, Mapping):
        held = {k: hold_titles(v, below) for k, v in value.items()}
        if _note_of(value) in below:
            held["title"] = TITLE_BELOW_FLOOR
        return held
    if isinstance(value, (list, tuple)):
        return [hold_titles(item, below) for item in value]
    return value


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, Mapping):
        note_id = _note_of(value)
        if note_id is not None:
            found.add(note_id)
        for item in value.values():
            _collect(item, found)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, found)


def _note_of(value: Mapping[str, Any]) -> str | None:
    if not isinstance(value.get("title"), str):
        return None
    return next((value[k] for k in _NOTE_ID_KEYS if isinstance(value.get(k), str)), None)
