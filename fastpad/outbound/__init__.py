"""The one outbound path: what every agent-facing read passes through on its way out.

- :mod:`.secrets` — deterministic secret detection; masking with visible, keyed placeholders.
- :mod:`.links` — URLs neutralised (defanged) unless their host is allowlisted.
- :mod:`.fence` — note content fenced and labelled as data, with an unforgeable boundary.
- :mod:`.tokens` — offline o200k_base token counting (tiktoken + the vocabulary shipped by bpe-openai).
- :mod:`.budget` — results cut at block boundaries, with a cursor and a one-line hint.
- :mod:`.pipeline` — :class:`OutboundPolicy` and :func:`prepare`: redact, then neutralise.

All of it is pure: nothing here reads or writes a note.
"""

from fastpad.outbound.budget import BudgetResult, InvalidCursor, fit_blocks
from fastpad.outbound.fence import fence_note, new_boundary
from fastpad.outbound.links import neutralize, neutralize_links
from fastpad.outbound.pipeline import (
    OutboundPolicy,
    OutboundText,
    PreparedBlocks,
    prepare,
    prepare_blocks,
    prepare_note,
    prepare_value,
)
from fastpad.outbound.secrets import Redaction, RedactionResult, SecretMatch, find_secrets, locate, redact
from fastpad.outbound.tokens import count_tokens

__all__ = [
    "BudgetResult",
    "InvalidCursor",
    "OutboundPolicy",
    "OutboundText",
    "PreparedBlocks",
    "Redaction",
    "RedactionResult",
    "SecretMatch",
    "count_tokens",
    "fence_note",
    "find_secrets",
    "fit_blocks",
    "locate",
    "neutralize",
    "neutralize_links",
    "new_boundary",
    "prepare",
    "prepare_blocks",
    "prepare_note",
    "prepare_value",
    "redact",
]
