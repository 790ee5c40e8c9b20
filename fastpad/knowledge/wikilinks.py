"""Links written in block text: ``[[Title]]``, ``[[Title|shown text]]``, ``@[[Title]]``, ``@Name``
and embeds, ``![[Title]]``.

Pure functions, no storage. The write path (``link_projection``) turns what
these find into edges. A link names a *title*; ``title_key`` is how titles are
compared (Unicode NFC, whitespace collapsed, case-folded), so ``[[meeting
notes]]`` finds "Meeting  Notes".

What is not a link: anything inside a code block or an inline code span,
``\\[[escaped]]`` brackets, an ``@`` in the middle of a word (``bob@example.com``),
a ``[[…]]`` whose title is empty or longer than ``MAX_TITLE`` characters, and a person
mention, ``[@Name](/people/{id})`` (``fastpad/notes/mentions.py``).
A bare ``@Name`` starts with one word (letters, digits, ``_``, ``-``, inner dots)
and names the longest run of up to ``MAX_MENTION_WORDS`` such words, one space
apart, that is a title (``extract_links(…, titles=…)``): ``@First note`` is the
note "First note" when there is one, and never a note "First" instead; with no
such title it is its first word alone. ``@[[Two words]]`` names a title exactly.

An embed (Obsidian's ``![[Note]]``, ``![[Note#Heading]]``: the other note's text
shown in this one) names its title the same way, and is a link of its own kind
(``EMBEDS``): a block that embeds a note and mentions it has one link of each.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Container
from dataclasses import dataclass

from fastpad.knowledge.edges import EMBEDS, MENTIONS
from fastpad.notes.blocks import CODE
from fastpad.notes.mentions import PERSON_MENTION, without_code_spans

MAX_TITLE = 300
MAX_MENTION_WORDS = 12  # the longest title a bare @mention can name, in words
EVIDENCE_RADIUS = 120  # characters of context kept on each side of a link

_WIKILINK = re.compile(r"(?<!\\)\[\[([^\[\]\n|]+?)(?:\|[^\[\]\n]*)?\]\]")  # @[[…]] is the same link
_MENTION = re.compile(r"(?<![\w@/\\.])@(\w(?:[\w\-.]*\w)?)")
_MENTION_NEXT_WORD = re.compile(r" (\w(?:[\w\-.]*\w)?)")  # one space, then a word as a mention's


def title_key(title: str) -> str:
    """The normalised form titles are matched by (empty for a blank title)."""
    return " ".join(unicodedata.normalize("NFC", title).split()).casefold()


@dataclass(frozen=True)
class LinkRef:
    """One distinct title a block links to (as a mention or an embed), with the text around its
    first occurrence."""

    title: str
    key: str
    evidence: str
    type: str = MENTIONS  # the edge it becomes: MENTIONS, or EMBEDS for ![[…]]


def mention_titles(block_type: str, text: str) -> set[str]:
    """The title keys the block's bare @mentions could name past their first word: the
    titles ``extract_links`` needs told about (which of them are titles) to choose among."""
    return {title_key(raw) for *_, longer in _occurrences(block_type, text) for _, raw in longer}


def extract_links(block_type: str, text: str, *, titles: Container[str] = frozenset()) -> list[LinkRef]:
    """The titles a block links to, each once per kind of link (mention, embed), in order of
    first appearance. ``titles``: the title keys that name a note, from which a bare @mention
    takes its longest reading."""
    refs: dict[tuple[str, str], LinkRef] = {}
    for start, end, raw, longer in _occurrences(block_type, text):
        end, raw = next(((e, r) for e, r in reversed(longer) if title_key(r) in titles), (end, raw))
        title = " ".join(raw.split())
        key = title_key(title)
        embed = text.startswith("[[", start) and _embedded(text, start)
        kind = EMBEDS if embed else MENTIONS
        if not key or len(title) > MAX_TITLE or (key, kind) in refs:
            continue
        refs[(key, kind)] = LinkRef(title, key, evidence_window(text, start - 1 if embed else start, end), kind)
    return list(refs.values())


def rewrite_wikilinks(block_type: str, text: str, rewrite: Callable[[str, str], str]) -> str:
    """``text`` with each ``[[Title]]`` / ``[[Title|shown]]`` (and ``@[[…]]``) replaced by
    ``rewrite(title key, shown text)``; code and escaped brackets are left alone, as the
    write path leaves them."""
    if block_type == CODE or "[[" not in text:
        return text
    scan = without_code_spans(text)
    out, position = [], 0
    for match in _WIKILINK.finditer(scan):
        start = match.start() - 1 if match.start() and text[match.start() - 1] == "@" else match.start()
        written = text[match.start():match.end()]
        shown = written[2:-2].split("|", 1)[-1].strip() or match.group(1).strip()
        out += [text[position:start], rewrite(title_key(match.group(1)), shown)]
        position = match.end()
    return "".join(out) + text[position:]


def _occurrences(block_type: str, text: str) -> list[tuple[int, int, str, list[tuple[int, str]]]]:
    """Every link written in the block, in order: (start, end, raw title, longer readings).
    Only a bare @mention has longer readings — (end, raw title) taking in one more word
    each, shortest first."""
    if block_type == CODE or ("[[" not in text and "@" not in text):
        return []
    # Blank out code spans and person mentions (same length, so offsets still point into `text`;
    # a blanked span is more than one space, so no mention reads on across it): the ``@Ada`` of
    # ``[@Ada](/people/…)`` names a person, not a note.
    scan = without_code_spans(text)
    if "](/people/" in scan:
        scan = PERSON_MENTION.sub(lambda m: " " * len(m.group(0)), scan)
    found: list[tuple[int, int, str, list[tuple[int, str]]]] = []
    for match in _WIKILINK.finditer(scan):
        found.append((match.start(), match.end(), match.group(1), []))
    taken = [(start, end) for start, end, *_ in found]
    for match in _MENTION.finditer(scan):
        if not any(start <= match.start() < end for start, end in taken):
            found.append((match.start(), match.end(), match.group(1), _longer_readings(scan, match)))
    return sorted(found)


def _embedded(text: str, start: int) -> bool:
    """Is the ``[[`` at ``start`` an embed's: after a ``!`` that is not escaped (``\\![[…]]`` is a
    "!", then a link)?"""
    return start > 0 and text[start - 1] == "!" and (start == 1 or text[start - 2] != "\\")


def _longer_readings(scan: str, mention: re.Match[str]) -> list[tuple[int, str]]:
    readings: list[tuple[int, str]] = []
    words, end = [mention.group(1)], mention.end()
    while len(words) < MAX_MENTION_WORDS:
        word = _MENTION_NEXT_WORD.match(scan, end)
        if word is None or word.end() - mention.start() - 1 > MAX_TITLE:
            break
        words.append(word.group(1))
        end = word.end()
        readings.append((end, " ".join(words)))
    return readings


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
