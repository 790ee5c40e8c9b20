"""What a read left out, and why: counts only, never the content, with the parameter that shows it.

An empty search an agent gets because its own unreviewed text sits below its trust floor looks
exactly like a search that found nothing; so a read that hides matches says how many, for which
reason, and what to send to see them. Search (``search/service.py``) counts notes below the
floor and archived ones; for a caller limited to a note set it says so on every short page, with
no count (:func:`limited_to_note_set`): that count, query by query, would tell a limited token
what the other notes say. ``fastpad_fetch`` counts blocks below the floor and, of the ids its
caller named, those outside the set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastpad.knowledge.trust import TrustFloor

TRUST_FLOOR = "trust_floor"
ARCHIVED = "archived"
SCOPE = "scope"


@dataclass(frozen=True)
class Hidden:
    reason: str  # TRUST_FLOOR | ARCHIVED | SCOPE
    count: int | None  # None: deliberately not counted (see limited_to_note_set)
    unit: str  # "notes" | "blocks" | "titles" (stood in for: outbound/titles.py)
    because: str
    show_with: dict[str, Any] | None  # the parameter (and value) that shows them; None: no parameter can
    at_least: bool = False  # the count stopped at a limit: there may be more

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reason": self.reason, "count": self.count, "unit": self.unit,
                               "because": self.because, "show_with": self.show_with}
        if self.at_least:
            out["at_least"] = True
        return out


def below_floor(count: int, unit: str, floor: TrustFloor, *, at_least: bool = False) -> Hidden:
    return Hidden(TRUST_FLOOR, count, unit,
                  f"below the trust floor {floor.value!r}, which admits what a person wrote, accepted or verified "
                  "as theirs: text an agent wrote that no person reviewed, or an import or capture no person "
                  "verified", {"floor": TrustFloor.ALL.value}, at_least)


def archived(count: int, *, at_least: bool = False) -> Hidden:
    return Hidden(ARCHIVED, count, "notes", "archived notes are left out unless asked for",
                  {"include_archived": True}, at_least)


def outside_note_set(count: int, unit: str, *, at_least: bool = False) -> Hidden:
    return Hidden(SCOPE, count, unit, "outside this credential's note set: only a person can mint a token whose "
                  "note set includes them; tagging cannot widen it", None, at_least)


def limited_to_note_set() -> Hidden:
    """Said on a search's short page whenever the caller is limited to a note set, whether or not
    anything outside it matched — so it tells nothing about the other notes."""
    return Hidden(SCOPE, None, "notes", "this credential reads only its note set, and notes outside it are never "
                  "counted: a count per query would tell what they hold; only a person can mint a token whose note "
                  "set includes more", None)
