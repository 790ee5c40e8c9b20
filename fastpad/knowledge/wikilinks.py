"""Links written in block text: ``[[Title]]``, ``[[Title|shown text]]``, ``@[[Title]]`` and ``@Name``.

Pure functions, no storage. The write path (``link_projection``) turns what
these find into edges. A link names a *title*; ``title_key`` is how titles are
compared (Unicode NFC, whitespace collapsed, case-folded), so ``[[meeting
notes]]`` finds "Meeting  Notes".

What is not a link: anything inside a code block or an inline code span,
``\\[[escaped]]`` brackets, an ``@`` in the middle of a word (``bob@example.com``),
and a ``[[…]]`` whose title is empty or longer than ``MAX_TITLE`` characters.
A bare ``@Name`` is one word (letters, digits, ``_``, ``-``, inner dots); a
multi-word mention is written ``@[[Two words]]``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from fastpad.notes.blocks import CODE

MAX_TITLE = 300
EVIDENCE_RADIUS = 120  # characters of context kept on each side of a link

_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_WIKILINK = re.compile(r"(?<!\\)\[\[([^\[\]\n|]+?)(?:\|[^\[\]\n]*)?\]\]")  # @[[…]] is the same link
_MENTION = re.compile(r"(?<![\w@/\\.])@(\w(?:[\w\-.]*\w)?)")


def title_key(title: str) -> str:
    """The normalised form titles are matched by (empty for a blank title)."""
    return " ".join(unicodedata.normalize("NFC", title).split()).casefold()


@dataclass(frozen=True)
class LinkRef:
    """One distinct title a block links to, with the text around its first occurrence."""

    title: str
    key: str
    evidence: str


def extract_links(block_type: str, text: str) -> list[LinkRef]:
    """The titles a block links to, each once, in order of first appearance."""
    if block_type == CODE or ("[[" not in text and "@" not in text):
        return []
    # Blank out code spans (same length, so offsets still point into `text`).
    scan = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text) if "`" in text else text
    found: list[tuple[int, int, str]] = []
    for match in _WIKILINK.finditer(scan):
        found.append((match.start(), match.end(), match.group(1)))
    taken = [(start, end) for start, end, _ in found]
    for match in _MENTION.finditer(scan):
        if not any(start <= match.start() < end for start, end in taken):
            found.append((match.start(), match.end(), match.group(1)))
    refs: dict[str, LinkRef] = {}
    for start, end, raw in sorted(found):
        title = " ".join(raw.split())
        key = title_key(title)
        if not key or len(title) > MAX_TITLE or key in refs:
            continue
        refs[key] = LinkRef(title, key, evidence_window(text, start, end))
    return list(refs.values())


def evidence_window(text: str, start: int, end: int, radius: int = EVIDENCE_RADIUS) -> str:
    """``text[start:end]`` with up to ``radius`` characters either side, cut at a
    space where one is near, marked with … where the block goes on."""
    left = max(0, start - radius)
    right = min(len(text), end + radius)
    if left > 0:
        space = text.find(" ", left, start)
        left = space + 1 if space != -1 else left
    if right < len(text):
        space = text.rfind(" ", end, right)
        right = space if space != -1 else right
    return ("…" if left > 0 else "") + text[left:right].strip() + ("…" if right < len(text) else "")
