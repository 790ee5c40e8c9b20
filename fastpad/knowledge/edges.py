"""What an edge is: its type vocabulary and how an inferred edge's confidence decays.

Asserted edges (a person made or confirmed them) do not decay and carry no
confidence. Inferred ones start at a confidence and halve every
``CONFIDENCE_HALF_LIFE``: a connection nobody confirmed fades rather than
lingering at full strength.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from fastpad.errors import FieldError, ValidationFailed

MENTIONS = "mentions"  # what a [[link]] or @mention in block text becomes
EMBEDS = "embeds"  # what an embed, ![[Note]], in block text becomes: the note shows the other's text
CITES = "cites"
RELATED = "related"
SUPERSEDES = "supersedes"  # made only by marking a note superseded (it has a fast lookup beside it)

EDGE_TYPE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")

TEXT_LINK_CONFIDENCE = 1.0  # the link is literally in the text; what is unconfirmed is who wrote it
DEFAULT_INFERRED_CONFIDENCE = 0.5
CONFIDENCE_HALF_LIFE = timedelta(days=30)


def check_edge_type(value: object, *, field: str = "type") -> str:
    """An edge type is a lower-case slug (``cites``, ``depends_on``); a 422 otherwise."""
    if not isinstance(value, str) or not EDGE_TYPE.match(value):
        raise ValidationFailed(
            detail="an edge type is a lower-case word: a letter, then letters, digits or _ (at most 40)",
            field_errors=[FieldError(field, "edge_type", "e.g. mentions, cites, related")],
        )
    return value


def decayed_confidence(confidence: float | None, since: datetime, now: datetime) -> float | None:
    """An inferred edge's confidence at ``now``; None (no decay) for an asserted edge."""
    if confidence is None:
        return None
    age = max(timedelta(0), now - since)
    return round(confidence * 0.5 ** (age / CONFIDENCE_HALF_LIFE), 4)
