"""Where each block's text came from, and whether a person ratified it.

Two separate axes, kept beside the CRDT (never in the Markdown), keyed by
block id. The store persists them in the block projection; trust floors in
search and the outbound path read them.

Provenance never rises by accident. A person's edit to a block that is not
their own — an agent's, an import's, a capture's — keeps its origin and its
review state: a typo fixed in an auto-applied paragraph leaves it
``agent_written`` and ``unreviewed``, and who last wrote it (a person) is
recorded beside it, in the block's author and the op log. The block becomes
the person's own (``human_typed``, ``human_accepted``) only once they have
rewritten it (:func:`rewritten`); any other text becomes ``human_accepted``
only by a person accepting a proposal or marking a turn reviewed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from fastpad.notes.blocks import Block


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
    stamp: Callable[[str], Provenance],
) -> dict[str, Provenance]:
    """Provenance after a write: changed or new blocks take ``stamp(block_id)``, untouched
    blocks keep theirs, deleted blocks drop out."""
    return {
        block_id: stamp(block_id) if block_id in changed_block_ids or block_id not in before else before[block_id]
        for block_id in surviving_block_ids
    }


# An unbroken stretch this long of a block's earlier text, still in it after a person's edits,
# means the earlier writer's words survive. About two words: long enough that a rewrite seldom
# repeats one by chance, too short to carry a sentence of the earlier text through a rewrite.
SURVIVING_STRETCH = 12


def rewritten(earlier: Block, now: Block) -> bool:
    """Whether a person's edits have rewritten a block, making it theirs: ``earlier`` is the
    block as a writer other than the person left it (an agent's landing, an import, a
    capture), ``now`` the block after the person's save.

    A rewrite holds text (an emptied block is not one: an undo would bring the earlier
    words back as the person's), and no stretch of ``SURVIVING_STRETCH`` consecutive
    characters of the earlier text, nor of half of it when that is shorter, is in it. The
    texts are compared, not the characters' identities: a client's diff keeps a letter
    that happens to match, and an undo or a paste puts the very same words back as new
    characters. A callout's title is part of the text compared.

    So a typo fix, or a sentence added to the earlier text, leaves it the earlier writer's;
    replacing every sentence makes it the person's. A short text survives while half of it
    does: "Summry" corrected to "Summary" keeps "Summ"."""
    before, after = _written(earlier), _written(now)
    if not after:
        return False
    needed = max(1, min(SURVIVING_STRETCH, (len(before) + 1) // 2))
    # Every stretch of that length in the earlier text, looked up from the new one: linear in
    # both, where a longest-common-substring search is quadratic on a long pasted block.
    stretches = {before[start:start + needed] for start in range(len(before) - needed + 1)}
    return not any(after[start:start + needed] in stretches for start in range(len(after) - needed + 1))


def _written(block: Block) -> str:
    """What someone wrote in the block: its text, after a callout's title if it has one."""
    title = block.attrs.get("title")
    return f"{title}\n{block.text}" if isinstance(title, str) and title else block.text
