"""Token budgets: a result is cut only at a block boundary, with a cursor and a hint.

Every tool result is capped (25,000 tokens by default), because truncation
without guidance makes a model either hallucinate over the gap or re-issue the
same call. :func:`fit_blocks` packs whole blocks, in order, from the cursor on;
when they do not all fit it stops *between* two blocks and returns

- ``next_cursor``: opaque, resumes at the first block left out;
- ``hint``: one line telling the model how to continue and how to narrow.

Guarantee: ``count(text) + count(hint) <= max_tokens`` (the hint's cost is
reserved only when the result is cut). Counting is exact — the joined text is
counted again after packing, since BPE counts are not quite additive.

A block that could never fit on its own (larger than the budget minus the
hint) is not cut in the middle: it is left out with a visible one-line marker
in its place, ``[block 01J… omitted: 31,204 tokens, more than one result can
hold]``, its id listed in ``omitted_block_ids`` and named in the hint.

Cursor: ``c1.<scope>.<index>.<next id>.<previous id>`` — the next block by
position and id, the last block sent, and 8 hex digits of a digest of the
caller's ``scope`` (e.g. the tool and note id), so a cursor is refused for
another request. Compact because it rides in the hint (about 54 tokens with
ULIDs). Callers treat it as opaque; it is not secret: tampering with it can
only move where a read the caller may already make resumes. When the note changed between calls the
cursor resumes at the same block id if it still exists, else right after the
last block sent; if neither exists it is refused with :class:`InvalidCursor`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Sequence
from urllib.parse import quote, unquote

from fastpad.outbound.tokens import count_tokens

DEFAULT_MAX_TOKENS = 25_000
DEFAULT_NARROW = "ask for fewer notes or blocks, a structural digest, or search for the part you need"
CURSOR_PREFIX = "c1."
MIN_CONTENT_TOKENS = 64


class InvalidCursor(ValueError):
    """The cursor is malformed, belongs to another request, or its place in the note is gone."""


@dataclass(frozen=True)
class BudgetResult:
    text: str
    included_block_ids: tuple[str, ...]
    truncated: bool
    next_cursor: str | None
    hint: str
    tokens: int = 0                               # tokens in ``text``
    omitted_block_ids: tuple[str, ...] = ()       # blocks too large to ever fit, left out with a marker


def _scope_digest(scope: str) -> str:
    return hashlib.sha256(scope.encode("utf-8")).hexdigest()[:8]


def encode_cursor(index: int, next_id: str, previous_id: str | None, scope: str = "") -> str:
    """``c1.<scope digest>.<index>.<next id>.<previous id>`` — compact, because the hint carries it."""
    fields = [_scope_digest(scope), str(index), quote(next_id, safe=""), quote(previous_id or "", safe="")]
    return CURSOR_PREFIX + ".".join(fields)


def resume_index(cursor: str, block_ids: Sequence[str], scope: str = "") -> int:
    """Where a cursor resumes in ``block_ids`` (see the module docstring)."""
    fields = cursor[len(CURSOR_PREFIX):].split(".") if cursor.startswith(CURSOR_PREFIX) else []
    if len(fields) != 4 or not fields[1].isdigit():
        raise InvalidCursor("not a cursor this call returned: call again without a cursor")
    digest, index, next_id, previous_id = fields[0], int(fields[1]), unquote(fields[2]), unquote(fields[3])
    if digest != _scope_digest(scope):
        raise InvalidCursor("this cursor belongs to a different request: use it only with the call that returned it")
    if index < len(block_ids) and block_ids[index] == next_id:
        return index
    ids = list(block_ids)
    if next_id in ids:
        return ids.index(next_id)
    if previous_id and previous_id in ids:
        return ids.index(previous_id) + 1
    raise InvalidCursor("the note changed and the cursor's place is gone: call again without a cursor")


def omitted_marker(block_id: str, tokens: int) -> str:
    return f"[block {block_id} omitted: {tokens:,} tokens, more than one result can hold]"


def _hint(first: int, last: int, total: int, tokens: int, max_tokens: int, cursor: str | None,
          omitted: Sequence[str], narrow: str) -> str:
    parts: list[str] = []
    if cursor is not None:
        parts.append(
            f"Truncated at a block boundary: blocks {first}–{last} of {total} shown ({tokens:,} of {max_tokens:,} tokens). "
            f'Continue with cursor="{cursor}", or narrow: {narrow}.'
        )
    if omitted:
        shown = ", ".join(omitted[:3]) + (f" and {len(omitted) - 3} more" if len(omitted) > 3 else "")
        many = len(omitted) > 1
        parts.append(f"Block{'s' if many else ''} {shown} {'were' if many else 'was'} left out: too large for any one result.")
    return " ".join(parts)


def fit_blocks(
    blocks_markdown: Sequence[tuple[str, str]],
    max_tokens: int = DEFAULT_MAX_TOKENS,
    cursor: str | None = None,
    *,
    separator: str = "\n\n",
    scope: str = "",
    narrow: str = DEFAULT_NARROW,
    transform: Callable[[str, str], str] | None = None,
    count: Callable[[str], int] = count_tokens,
) -> BudgetResult:
    """Whole blocks from ``cursor`` on, joined by ``separator``, within ``max_tokens``.

    ``transform(block_id, markdown)`` (e.g. the outbound redaction) is applied
    to each block before it is counted, and only to the blocks looked at.
    """
    ids = [block_id for block_id, _ in blocks_markdown]
    start = resume_index(cursor, ids, scope) if cursor else 0
    total = len(ids)

    # What the hint can cost at most: the longest cursor and numbers this call can produce.
    longest = max(ids, key=len, default="")
    worst = _hint(total, total, total, max_tokens, max_tokens, encode_cursor(total, longest, longest, scope), [], narrow)
    reserve = count(worst) + 8
    fit_limit = max_tokens - reserve            # the content budget of a result that is cut
    if fit_limit < MIN_CONTENT_TOKENS:
        raise ValueError(f"max_tokens={max_tokens} leaves under {MIN_CONTENT_TOKENS} tokens next to the truncation hint")
    sep_cost = count(separator)

    # Scan from the cursor until the full budget is certainly exceeded.
    parts: list[tuple[str, str, int]] = []      # (block id, text, tokens); a too-large block becomes its marker
    omitted: list[str] = []
    running = 0
    i = start
    while i < total and running <= max_tokens:
        block_id, markdown = blocks_markdown[i]
        text = transform(block_id, markdown) if transform else markdown
        cost = count(text)
        if cost > fit_limit:                    # can never fit on its own: leave it out, visibly
            omitted.append(block_id)
            text = omitted_marker(block_id, cost)
            cost = count(text)
        running += cost + (sep_cost if parts else 0)
        parts.append((block_id, text, cost))
        i += 1

    if i == total:                              # everything left may fit without a cut
        text = separator.join(p[1] for p in parts)
        tokens = count(text)
        hint = _hint(0, 0, 0, 0, 0, None, omitted, narrow)
        if tokens + (count(hint) if hint else 0) <= max_tokens:
            included = tuple(b for b, _, _ in parts if b not in omitted)
            return BudgetResult(text, included, False, None, hint, tokens, tuple(omitted))

    # Cut: the longest prefix within the content budget, then checked exactly with its hint.
    k, running = 0, 0
    for _, _, cost in parts:
        added = cost + (sep_cost if k else 0)
        if running + added > fit_limit:
            break
        running += added
        k += 1
    k = max(k, 1)                               # one block (or marker) always fits: cost <= fit_limit
    while True:
        result = _cut(parts[:k], start, total, ids, omitted, separator, scope, narrow, max_tokens, count)
        if k == 1 or result.tokens + count(result.hint) <= max_tokens:
            return result
        k -= 1


def _cut(kept, start, total, ids, omitted, separator, scope, narrow, max_tokens, count) -> BudgetResult:
    text = separator.join(p[1] for p in kept)
    tokens = count(text)
    next_index = start + len(kept)
    kept_ids = {p[0] for p in kept}
    kept_omitted = [b for b in omitted if b in kept_ids]
    included = tuple(p[0] for p in kept if p[0] not in kept_omitted)
    if next_index >= total:                     # only when the hint alone tipped the balance
        hint = _hint(0, 0, 0, 0, 0, None, kept_omitted, narrow)
        return BudgetResult(text, included, False, None, hint, tokens, tuple(kept_omitted))
    next_cursor = encode_cursor(next_index, ids[next_index], ids[next_index - 1], scope)
    hint = _hint(start + 1, next_index, total, tokens, max_tokens, next_cursor, kept_omitted, narrow)
    return BudgetResult(text, included, True, next_cursor, hint, tokens, tuple(kept_omitted))
