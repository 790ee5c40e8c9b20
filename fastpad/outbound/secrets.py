"""Deterministic secret detection and masking for everything that leaves the machine.

What a secret looks like is the rule catalogue in :mod:`fastpad.outbound.secret_rules`;
this module finds the rules' matches in a text and masks them.

Masking happens on the way out only. :func:`redact` is a pure function of the
text, a server key and the text's scope; the note itself is never edited. Each secret becomes a
visible placeholder ``[redacted:RULE:FINGERPRINT]``, so a false positive is
something a person can see and ask to expand (:func:`locate` finds the original
span again from the fingerprint), never silent loss.

The fingerprint names *where* a secret is, never *what* it is:
``HMAC-SHA256(key, scope + "\\0" + ordinal + "\\0" + rule_id)`` truncated to
:data:`FINGERPRINT_HEX` hex digits, where ``scope`` names the text (a block: ``block:ID``; see
:func:`block_scope`) and ``ordinal`` is the secret's place among the secrets of that text. The
value is not an input. A fingerprint of the value, however keyed, is an oracle: a reader who sees
``[redacted:generic-password:1a2b3c]`` and can have the server mask text of its own — a proposal's
dry run, a note it creates — sends guesses until one comes back with the same suffix. Bound to the
place, a correct and a wrong guess mask alike, and the placeholder still expands for a person
(the same block and ordinal find the same span) and is stable across reads while the secrets
before it in its block stay. Two copies of one secret show two suffixes; that the two are equal
is itself something a reader who cannot see them should not learn.

What detection sees through, because a secret pasted into a note is still a secret: the
rules run on the text as it renders (:mod:`fastpad.outbound.rendered`: zero-width characters,
Markdown escapes, HTML character references, and emphasis/code markers, inline tags and link
syntax glued inside a token undone), and each hit maps back to the source characters that render
as it, so the mask covers exactly those — Markdown emphasis *around* a token (``*sk_live_…*``)
stays outside the mask.

Where two rules claim overlapping text, the one listed first in
:data:`~fastpad.outbound.secret_rules.RULES` wins (specific before generic), so
results never overlap.

A placeholder typed into a note by hand is just text: it is never re-detected
(masking is idempotent) and :func:`locate` finds nothing behind it.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Iterable

from fastpad.outbound.rendered import ZERO_WIDTH, render_view  # noqa: F401 - ZERO_WIDTH is part of this API
from fastpad.outbound.secret_rules import RULES, Rule, is_documented_example

FINGERPRINT_HEX = 6
PLACEHOLDER_FORMAT = "[redacted:{rule}:{fingerprint}]"
PLACEHOLDER_RE = re.compile(r"\[redacted:([a-z0-9-]+):([0-9a-f]{%d})\]" % FINGERPRINT_HEX)


@dataclass(frozen=True)
class SecretMatch:
    """One detected secret: ``text[start:end]`` is the part that gets masked."""

    rule_id: str
    start: int
    end: int


@dataclass(frozen=True)
class Redaction(SecretMatch):
    """A match as it was masked: the fingerprint and the placeholder that replaced it."""

    fingerprint: str = ""
    placeholder: str = ""


@dataclass(frozen=True)
class RedactionResult:
    """The masked text; ``matches`` carry offsets into the *original* text."""

    text: str
    matches: tuple[Redaction, ...]

    @property
    def redacted(self) -> bool:
        return bool(self.matches)


# ---------------------------------------------------------------------------
# detection


_TRAILING = " \t\r\n"
_TRAILING_PROSE = _TRAILING + ".,"
_EMPHASIS = "*_"
_TRUNCATED = ("...", "\u2026")


def _trim(rule: Rule, text: str, start: int, end: int) -> int:
    """The end after dropping whitespace and, for greedy rules, sentence punctuation (``…token.``)."""
    strip = _TRAILING_PROSE if rule.id.startswith(("generic", "gitlab", "planetscale")) else _TRAILING
    while end > start and text[end - 1] in strip:
        end -= 1
    return end


def _unwrap_emphasis(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the Markdown emphasis around it (``*tok*``, ``__tok__``, a value ``_tok_``).

    The opening run is the span's own first ``*``/``_`` characters, or else the ones just
    before it; the span sheds a closing run only when it repeats the opening run exactly.
    """
    inner = start
    while inner < min(end, start + 3) and text[inner] in _EMPHASIS:
        inner += 1
    opener_start = start
    if inner == start:
        while opener_start > max(0, start - 3) and text[opener_start - 1] in _EMPHASIS:
            opener_start -= 1
    opener = text[opener_start:inner]
    closes = end - len(opener) > inner and text.endswith(opener, inner, end)
    if opener and opener == opener[0] * len(opener) and closes:
        return inner, end - len(opener)
    return start, end


def _secret_span(rule: Rule, text: str, m: re.Match[str]) -> tuple[int, int] | None:
    """Where the secret of ``rule``'s match ``m`` lies in ``text``: its group, trimmed, with its lead, unwrapped."""
    start, end = m.span(rule.group)
    end = _trim(rule, text, start, end)
    if rule.lead is not None:
        start = rule.lead.start(text, start)
        if start is None:
            return None
    start, end = _unwrap_emphasis(text, start, end)
    return (start, end) if end > start else None


_INLINE_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"))


def _any_of(rules: Iterable[Rule]) -> re.Pattern[str]:
    """One pattern matching wherever any of ``rules``' patterns matches, each keeping its own flags."""
    branches = []
    for rule in rules:
        if re.search(r"\\[1-9]|\(\?P=", rule.pattern.pattern):
            raise ValueError(f"{rule.id}: a back-reference would name another group in the combined screen")
        flags = "".join(letter for flag, letter in _INLINE_FLAGS if rule.pattern.flags & flag)
        branches.append(f"(?{flags}:{rule.pattern.pattern})")
    return re.compile("|".join(branches))


# Most of what a result carries is short — a title, a name, a path, a heading — and in a short text
# the rules' cost is per rule, not per character (85 searches and gate checks, ~15 µs for a name).
# One pass of every pattern at once answers "nothing here" for ~1/10 of that. A text no pattern
# matches anywhere has no candidate, so the screen changes no answer; it only decides whether to look
# rule by rule. An alternation gets no literal to jump between, so past ~200 characters it costs more
# than the rules' own scans (issue 29: 1.3 vs 14.7 µs under 30 characters, 28 vs 27 at 150–250).
_SCREEN_BELOW = 160
_ANY_CASED = _any_of(rule for rule in RULES if not rule.lower)
_ANY_LOWER = _any_of(rule for rule in RULES if rule.lower)
# What the loop below reads of each rule, looked up once: in a text no rule matches, most of the
# cost is the loop's own (issue 29: 0.78x on block-length texts).
_PLAN = tuple((priority, rule, rule.pattern, rule.gate, rule.lower) for priority, rule in enumerate(RULES))


def _candidates(text: str) -> list[tuple[int, SecretMatch]]:
    lowered = text.lower()
    # Lower-casing maps each character to one or more; equal lengths mean offsets line up exactly.
    aligned = len(lowered) == len(text)
    if aligned and len(text) < _SCREEN_BELOW and _ANY_CASED.search(text) is None and _ANY_LOWER.search(lowered) is None:
        return []
    found: list[tuple[int, SecretMatch]] = []
    for priority, rule, pattern, gate, lower in _PLAN:
        subject = lowered if lower else text
        if gate and gate not in subject:
            continue
        if lower and not aligned:
            pattern, subject = rule.ignorecase, text
        position = 0
        while (m := pattern.search(subject, position)) is not None:
            span = _secret_span(rule, text, m)
            if (
                span is None
                or (rule.context is not None and not rule.context(text, m))
                or (rule.validate is not None and not rule.validate(text[span[0]:span[1]]))
                or is_documented_example(text[span[0]:span[1]])
                or text.startswith(_TRUNCATED, span[1])      # ops_eyJzaWdu... is a shortened quote, not a key
            ):
                # A rejected name = value must not hide a name that starts inside it (key_secret = …);
                # a rejected token is skipped whole, which keeps adversarial input linear.
                position = m.start() + 1 if rule.lower else max(m.end(), m.start() + 1)
                continue
            found.append((priority, SecretMatch(rule.id, *span)))
            position = max(m.end(), m.start() + 1)
    return found


def _find_visible(text: str) -> list[SecretMatch]:
    # Placeholders already in the text claim their spans first, so nothing inside one (the
    # "password:1a2b3c" of "[redacted:url-password:1a2b3c]") is ever detected again.
    accepted = [SecretMatch("", *m.span()) for m in PLACEHOLDER_RE.finditer(text)]  # sorted by start; disjoint
    starts = [m.start for m in accepted]
    for _, match in sorted(_candidates(text), key=lambda c: (c[0], c[1].start, -c[1].end)):
        at = bisect.bisect_right(starts, match.start)
        if at > 0 and accepted[at - 1].end > match.start:
            continue
        if at < len(accepted) and accepted[at].start < match.end:
            continue
        accepted.insert(at, match)
        starts.insert(at, match.start)
    return [match for match in accepted if match.rule_id]


def _merge(primary: list[SecretMatch], extra: list[SecretMatch]) -> list[SecretMatch]:
    """``primary`` with the matches of ``extra`` that overlap none of it, in text order."""
    merged = list(primary)
    starts = [m.start for m in merged]
    for match in extra:
        at = bisect.bisect_right(starts, match.start)
        if (at > 0 and merged[at - 1].end > match.start) or (at < len(merged) and merged[at].start < match.end):
            continue
        merged.insert(at, match)
        starts.insert(at, match.start)
    return merged


def find_secrets(text: str) -> list[SecretMatch]:
    """Every secret in ``text``, non-overlapping, in text order.

    The rules run on the text as it renders (:func:`~fastpad.outbound.rendered.render_view`:
    zero-width characters, Markdown escapes, HTML character references and markup glued
    inside a token undone); each span covers the source characters that render as the
    secret. Where two rules claim overlapping spans, the rule listed first in
    :data:`~fastpad.outbound.secret_rules.RULES` wins (specific rules come before the
    generic ones).
    """
    view = render_view(text)
    found = _find_visible(view.text)
    if view.identical:
        return found
    mapped = [SecretMatch(m.rule_id, *view.source_span(m.start, m.end)) for m in found]
    for start, end in view.dropped_links:      # a glued link's destination left the view: read it as written
        found_there = _find_visible(text[start:end])
        mapped = _merge(mapped, [SecretMatch(m.rule_id, m.start + start, m.end + start) for m in found_there])
    return mapped


def block_scope(block_id: str) -> str:
    """The scope of a block's text: what its placeholders are bound to, wherever it is read."""
    return f"block:{block_id}"


def fingerprint(secret_key: bytes, rule_id: str, scope: str, ordinal: int) -> str:
    """The keyed short id of the ``ordinal``-th secret of the text ``scope`` names (see the module docstring)."""
    if not secret_key:
        raise ValueError("a non-empty server secret key is required to fingerprint redactions")
    digest = hmac.new(secret_key, f"{scope}\0{ordinal}\0{rule_id}".encode("utf-8"), hashlib.sha256).hexdigest()
    return digest[:FINGERPRINT_HEX]


def placeholder(rule_id: str, fp: str) -> str:
    return PLACEHOLDER_FORMAT.format(rule=rule_id, fingerprint=fp)


def redact(text: str, secret_key: bytes, scope: str = "") -> RedactionResult:
    """``text`` with every secret replaced by ``[redacted:RULE:FINGERPRINT]``.

    Pure: the input is not modified and the same input, key and scope always give the
    same output. ``matches`` give the spans in the original text. ``scope`` names the text
    (:func:`block_scope`); text with no home of its own (a query, an agent's proposal) keeps ``""``.
    """
    if not secret_key:
        raise ValueError("a non-empty server secret key is required to fingerprint redactions")
    matches = find_secrets(text)
    if not matches:
        return RedactionResult(text, ())
    parts: list[str] = []
    done: list[Redaction] = []
    position = 0
    for ordinal, m in enumerate(matches):
        fp = fingerprint(secret_key, m.rule_id, scope, ordinal)
        mask = placeholder(m.rule_id, fp)
        parts.append(text[position:m.start])
        parts.append(mask)
        done.append(Redaction(m.rule_id, m.start, m.end, fp, mask))
        position = m.end
    parts.append(text[position:])
    return RedactionResult("".join(parts), tuple(done))


def locate(text: str, secret_key: bytes, rule_id: str, fp: str, scope: str = "") -> list[SecretMatch]:
    """The spans of ``text`` (named by ``scope``) a placeholder ``[redacted:rule_id:fp]`` stood for.

    This is how a person's "expand" request is answered (after checking that
    the person may read the note): re-detect in the stored text and compare
    fingerprints. A placeholder typed into a note by hand finds nothing.
    """
    return [
        m for ordinal, m in enumerate(find_secrets(text))
        if m.rule_id == rule_id and hmac.compare_digest(fingerprint(secret_key, m.rule_id, scope, ordinal), fp)
    ]
