"""The one outbound path: every agent-facing text goes through :func:`prepare`.

Order matters, and is fixed here:

1. **Redact** secrets (:mod:`fastpad.outbound.secrets`) on the text exactly
   as stored. Rules match the credential's real shape — a password in
   ``postgres://app:S3cret@db.internal``, a Slack webhook URL, a token in a
   query string — and neutralising first would bend those shapes
   (``hxxps://hooks[.]slack[.]com/…`` no longer matches the webhook rule) or,
   for an allowlisted host, leave a live URL carrying a live password.
2. **Neutralise** links (:mod:`fastpad.outbound.links`) on the redacted text.
   A placeholder ``[redacted:url-password:1a2b3c]`` inside a URL's userinfo is
   kept as it is and the URL around it is defanged as usual.

Fencing (:mod:`fastpad.outbound.fence`) and budgets
(:mod:`fastpad.outbound.budget`) come after, on prepared text, so the token
count is the count of what actually leaves. :func:`prepare_blocks` does both
for a list of blocks, preparing only the blocks the budget looks at.

Everything here is pure: the stored note is never modified.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from fastpad.outbound.budget import DEFAULT_MAX_TOKENS, DEFAULT_NARROW, BudgetResult, fit_blocks
from fastpad.outbound.fence import fence_note
from fastpad.outbound.links import neutralize_links, normalize_allow_hosts
from fastpad.outbound.secrets import Redaction, redact
from fastpad.outbound.tokens import count_tokens

MIN_SECRET_KEY_BYTES = 16
# The redaction fingerprint key is derived from the deployment secret for this purpose only.
_REDACTION_KEY_CONTEXT = b"fastpad/outbound/redaction/v1"


def redaction_key(secret: bytes) -> bytes:
    return hmac.new(secret, _REDACTION_KEY_CONTEXT, hashlib.sha256).digest()


@dataclass(frozen=True)
class OutboundPolicy:
    """What a caller's results may carry: the redaction key, the link allowlist, the token cap.

    ``secret_key`` is the server's fingerprint key (at least 16 bytes), never a
    per-token value, so the same secret shows the same placeholder to everyone.
    ``allow_hosts`` comes from the token (``example.com`` or ``*.example.com``).
    ``own_origin`` is the server's base URL: the URLs it mints (review URLs, problem types)
    point there, and links to it stay live, whoever wrote them.
    """

    secret_key: bytes
    allow_hosts: tuple[str, ...] = ()
    max_tokens: int = DEFAULT_MAX_TOKENS
    own_origin: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.secret_key, bytes) or len(self.secret_key) < MIN_SECRET_KEY_BYTES:
            raise ValueError(f"secret_key must be at least {MIN_SECRET_KEY_BYTES} bytes")
        if self.max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        object.__setattr__(self, "allow_hosts", normalize_allow_hosts(self.allow_hosts))


@dataclass(frozen=True)
class OutboundText:
    """Prepared text. ``redactions`` carry offsets into the text *as given* to :func:`prepare`."""

    text: str
    redactions: tuple[Redaction, ...] = ()
    neutralized_links: int = 0

    @property
    def redacted(self) -> bool:
        return bool(self.redactions)


def prepare(text: str, policy: OutboundPolicy, scope: str = "") -> OutboundText:
    """Redact secrets, then neutralise links (see the module docstring for why in that order).
    ``scope`` names the text the placeholders are bound to (:func:`~fastpad.outbound.secrets.block_scope`)."""
    redaction = redact(text, policy.secret_key, scope)
    links = neutralize_links(redaction.text, policy.allow_hosts, policy.own_origin)
    return OutboundText(links.text, redaction.matches, links.neutralized)


@dataclass
class PreparedBlocks:
    """A budgeted page of prepared blocks, with what preparing them did."""

    result: BudgetResult
    redactions: dict[str, tuple[Redaction, ...]] = field(default_factory=dict)   # block id -> its redactions
    neutralized_links: int = 0


def prepare_blocks(
    blocks_markdown: Sequence[tuple[str, str]],
    policy: OutboundPolicy,
    cursor: str | None = None,
    *,
    separator: str = "\n\n",
    scope: str = "",
    narrow: str = DEFAULT_NARROW,
    count: Callable[[str], int] = count_tokens,
) -> PreparedBlocks:
    """:func:`prepare` each block the budget looks at, then :func:`fit_blocks` within ``policy.max_tokens``."""
    redactions: dict[str, tuple[Redaction, ...]] = {}
    links: dict[str, int] = {}

    def transform(block_id: str, markdown: str) -> str:
        out = prepare(markdown, policy)
        if out.redactions:
            redactions[block_id] = out.redactions
        links[block_id] = out.neutralized_links
        return out.text

    result = fit_blocks(
        blocks_markdown, policy.max_tokens, cursor,
        separator=separator, scope=scope, narrow=narrow, transform=transform, count=count,
    )
    kept = result.included_block_ids
    return PreparedBlocks(
        result,
        {block_id: redactions[block_id] for block_id in kept if block_id in redactions},
        sum(links.get(block_id, 0) for block_id in kept),
    )


def prepare_note(note_id: str, title: str, markdown: str, policy: OutboundPolicy, *,
                 boundary: str | None = None, with_label: bool = True) -> str:
    """A whole note prepared (title and body) and fenced as data."""
    return fence_note(
        note_id, prepare(title, policy).text, prepare(markdown, policy).text,
        boundary=boundary, with_label=with_label,
    )


def prepare_value(value: Any, policy: OutboundPolicy) -> Any:
    """Every string in a JSON-like value prepared (dict keys are left as they are).

    For structured tool results: snippets, titles and properties carry note
    text too. Identifiers pass unchanged (no rule matches a ULID).
    """
    if isinstance(value, str):
        return prepare(value, policy).text
    if isinstance(value, dict):
        return {key: prepare_value(item, policy) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(prepare_value(item, policy) for item in value)
    return value
