"""Where each block's text came from, and whether a person ratified it.

Two separate axes, kept beside the CRDT (never in the Markdown), keyed by
block id. The store persists them in the block projection; trust floors in
search and the outbound path read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Origin(str, Enum):
    HUMAN_TYPED = "human_typed"  # a person typed it, or a terminal they were holding did
    AGENT_WRITTEN = "agent_written"  # an agent authored it
    INBOUND_UNTRUSTED = "inbound_untrusted"  # a capture, an import, an email


class ReviewState(str, Enum):
    HUMAN_ACCEPTED = "human_accepted"
    AGENT_ACCEPTED = "agent_accepted"
    UNREVIEWED = "unreviewed"


@dataclass(frozen=True)
class Provenance:
    origin: Origin
    review: ReviewState

    @classmethod
    def for_write(cls, origin: Origin) -> "Provenance":
        """The stamp a fresh write gets: a person's own words need no review."""
        review = ReviewState.HUMAN_ACCEPTED if origin is Origin.HUMAN_TYPED else ReviewState.UNREVIEWED
        return cls(origin, review)


def restamp(
    before: dict[str, Provenance],
    changed_block_ids: set[str],
    surviving_block_ids: list[str],
    stamp: Provenance,
) -> dict[str, Provenance]:
    """Provenance after a write: changed or new blocks take the writer's stamp,
    untouched blocks keep theirs, deleted blocks drop out."""
    return {
        block_id: stamp if block_id in changed_block_ids or block_id not in before else before[block_id]
        for block_id in surviving_block_ids
    }
