"""Trust floors: what an agent read path may hand an agent (spec: Agents › Trust
is two questions; Search › What search will not return).

Every block carries two separate facts: its **origin** (``human_typed``,
``agent_written``, ``inbound_untrusted``) and its **review state**
(``human_accepted``, ``agent_accepted``, ``unreviewed``). A *floor* is a named
level; a read at a floor returns only blocks whose (origin, review) pair that
floor admits. Floors are ordered, highest first, and each admits everything the
one above it does:

``human`` — the default for agents: what a person wrote or ratified.
    ``human_typed`` blocks (unless ``agent_accepted``), ``agent_written``
    blocks a person accepted (``human_accepted``: "an agent wrote this and I
    read the diff"), and ``inbound_untrusted`` blocks a person verified as
    theirs (``human_accepted``: "Verify as mine" on an import). Verifying is
    the person saying "this is mine", the same act as accepting an agent's
    diff, so the default admits it; unverified imports and captures stay below.
``reviewed``
    Admits exactly what ``human`` does. It sat between ``human`` and ``all``
    while verified imports were held out of the default (issue 29 moved them
    in); the name stays because callers send it.
``all`` — the lowest floor; an agent must ask for it explicitly.
    Everything: adds unreviewed agent text, unconfirmed ``inbound_untrusted``
    text, and every ``agent_accepted`` block. ``agent_accepted`` is excluded by
    every floor above the lowest, exactly as unreviewed agent text is, so an
    agent cannot ratify its own work into what the next agent is told is
    established fact. A pair this module does not know is admitted only here.

A person's own reads default to ``all`` (it is their workspace); an agent's to
``human``.

Edges are the other half: an edge is *asserted* (a person made or confirmed
it) or *inferred* (the system or an agent made it and no person confirmed it).
An agent is never handed an inferred edge, and nobody's search, context or
ask walks one (:data:`WALKED_BY_SEARCH`) — asserting a link is a cheap write,
and a walkable claim would let one agent pull arbitrary content into the next
one's context, or into what a person's question sends to the model provider.
A person browsing a note's links still sees its inferred edges, marked so.
``edge_status_for_block`` says which a link written in a block is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any, TypeVar

from fastpad.errors import FieldError, ValidationFailed
from fastpad.notes.provenance import Origin, ReviewState
from fastpad.security.principals import Principal

ASSERTED = "asserted"
INFERRED = "inferred"


class TrustFloor(str, Enum):
    HUMAN = "human"
    REVIEWED = "reviewed"
    ALL = "all"


FLOORS: tuple[TrustFloor, ...] = (TrustFloor.HUMAN, TrustFloor.REVIEWED, TrustFloor.ALL)  # highest first
AGENT_DEFAULT_FLOOR = TrustFloor.HUMAN
PERSON_DEFAULT_FLOOR = TrustFloor.ALL

# (origin, review) -> the highest floor that still admits it; anything else: ALL only.
_HIGHEST_ADMITTING: dict[tuple[str, str], TrustFloor] = {
    (Origin.HUMAN_TYPED.value, ReviewState.HUMAN_ACCEPTED.value): TrustFloor.HUMAN,
    (Origin.HUMAN_TYPED.value, ReviewState.UNREVIEWED.value): TrustFloor.HUMAN,
    (Origin.AGENT_WRITTEN.value, ReviewState.HUMAN_ACCEPTED.value): TrustFloor.HUMAN,
    (Origin.INBOUND_UNTRUSTED.value, ReviewState.HUMAN_ACCEPTED.value): TrustFloor.HUMAN,
}
_RANK = {floor: len(FLOORS) - i for i, floor in enumerate(FLOORS)}  # higher = stricter


def parse_floor(value: str | TrustFloor, *, field: str = "floor") -> TrustFloor:
    """A floor by name; anything else is a 422 naming the known floors."""
    try:
        return TrustFloor(value)
    except ValueError:
        names = ", ".join(f.value for f in FLOORS)
        raise ValidationFailed(detail=f"unknown trust floor {value!r}; known: {names}",
                               field_errors=[FieldError(field, "unknown_floor", f"one of {names}")]) from None


def floor_for(principal: Principal, requested: str | TrustFloor | None = None) -> TrustFloor:
    """The floor a read runs at: what the caller asked for, else its kind's default."""
    if requested is not None:
        return parse_floor(requested)
    return PERSON_DEFAULT_FLOOR if principal.is_person else AGENT_DEFAULT_FLOOR


def admits(floor: TrustFloor, origin: str | None, review_state: str | None) -> bool:
    """Does ``floor`` admit content with this provenance?"""
    highest = _HIGHEST_ADMITTING.get((str(origin), str(review_state)), TrustFloor.ALL)
    return _RANK[floor] <= _RANK[highest]


B = TypeVar("B")


def filter_blocks(blocks: Iterable[B], floor: TrustFloor) -> list[B]:
    """The blocks ``floor`` admits, in their order. Takes store ``BlockRow``s,
    search hits, or block dicts (anything with ``origin`` and ``review_state``
    as attributes or keys)."""
    return [b for b in blocks if admits(floor, *_provenance(b))]


def _provenance(block: Any) -> tuple[str | None, str | None]:
    if isinstance(block, Mapping):
        return block.get("origin"), block.get("review_state")
    return getattr(block, "origin", None), getattr(block, "review_state", None)


# The edges search, context and ask follow to reach a note, whoever asks (spec: Search › What
# search will not return: "anything reached only by an edge an agent asserted and no person
# confirmed" is a rule of search, not of agents only).
WALKED_BY_SEARCH: tuple[str, ...] = (ASSERTED,)


def edge_walkable(principal: Principal, status: str) -> bool:
    """May ``principal`` be handed an edge with this status when it reads a note's links?
    Agents: only asserted edges; a person sees every edge of their workspace."""
    return principal.is_person or status == ASSERTED


def edge_status_for_block(origin: str | None, review_state: str | None) -> str:
    """A link written in a block is asserted when a person wrote the block or
    accepted it, inferred otherwise (agent text nobody reviewed, an agent's own
    accept, an unconfirmed import)."""
    if review_state == ReviewState.AGENT_ACCEPTED.value:
        return INFERRED
    by_person = review_state == ReviewState.HUMAN_ACCEPTED.value or origin == Origin.HUMAN_TYPED.value
    return ASSERTED if by_person else INFERRED
