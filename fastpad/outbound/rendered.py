"""The text as a reader sees it once rendered, with a map back to the source.

A secret in a note is a secret however Markdown or HTML spells it:
``ghp\\_…`` (the escaped underscore Notion-style converters write),
``ghp_**abc**def…`` (emphasis inside the token), ``ghp_`abc`def…`` (an
inline-code split), ``ghp&#95;…`` (an HTML character reference),
``[ghp_abc](https://…)def…`` (a link-text split), or a zero-width character
slipped in by copy-paste all render as the token. :func:`render_view` undoes
those spellings so the rules see the token, and :meth:`View.source_span` maps a
hit back to the source characters that render as it, so the mask covers
exactly them.

What the view changes, and only that (anything else is copied as it is):

- zero-width characters (U+200B, U+200C, U+200D, U+2060, U+FEFF) are removed;
- a backslash before an ASCII punctuation mark is removed (CommonMark escapes);
- an HTML character reference (``&#95;``, ``&#x5f;``, ``&lowbar;``) becomes
  the character it stands for;
- an emphasis, strike-through or code-span marker run (``*``, ``~~``, a
  backtick; a single ``~`` is part of tokens such as Azure's ``…8Q~…``), an inline HTML formatting tag (``<b>``, ``</em>``…) and link
  syntax are removed where they are *glued* inside a word: a token character
  on both sides (``ghp_**abc**def``). Markers with a space on one side
  (``**API key:** value``) delimit words, not a token, and stay: the rules
  already read around them.

A glued link's destination leaves the view; :attr:`View.dropped_links` lists
where each was in the source, and the caller scans those too, so a URL
password in the destination is still found.
"""

from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"

# Characters a token is made of (the side of a glued marker run): letters, digits and the joiners
# credential alphabets use. A space, a colon or a quote on either side means the marker is prose.
_TOKEN = r"[A-Za-z0-9_\-+/=.]"
_INLINE_TAGS = r"(?:b|i|em|strong|code|s|del|strike|mark|u|sub|sup|kbd|span)"
_SPELLING = re.compile(
    "(?P<zw>[" + ZERO_WIDTH + "]+)"
    r"|\\(?P<escaped>[!-/:-@\[-`{-~])"
    r"|(?P<reference>&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)"
    r"|(?<=" + _TOKEN + r")(?P<marker>\*+|~~+|`+|</?" + _INLINE_TAGS + r"(?:\s[^<>\n]{0,80})?>)(?=" + _TOKEN + ")"
    r"|(?P<link>\[(?P<label>[^\[\]\n]{1,200})\]\([^()\s]{0,500}\))"
)
# The first character of anything _SPELLING changes.
_TRIGGER = re.compile("[" + ZERO_WIDTH + r"\\&*~`<\[]")
_TOKEN_CHAR = re.compile(_TOKEN)


@dataclass(frozen=True)
class View:
    """``text`` as rendered; ``pieces`` map it back (view start, source start, copied?) per piece."""

    text: str
    source: str
    piece_starts: tuple[int, ...] = ()            # view offsets where each piece starts (ascending)
    pieces: tuple[tuple[int, int, bool, int, int], ...] = ()
    # per piece: (source start, source end, copied verbatim, markup before it, markup after it) -- a link
    # label's "[" and "](destination)", which a span starting or ending with the label takes with it
    dropped_links: tuple[tuple[int, int], ...] = ()   # source spans of the destinations of glued links

    @property
    def identical(self) -> bool:
        return not self.pieces

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The source characters that render as ``text[start:end]`` (``end > start``)."""
        if self.identical:
            return start, end
        first = bisect.bisect_right(self.piece_starts, start) - 1
        source_start, _, copied, before, _ = self.pieces[first]
        mapped_start = source_start + (start - self.piece_starts[first]) if copied else source_start
        if mapped_start == source_start:
            mapped_start -= before
        last = bisect.bisect_right(self.piece_starts, end - 1) - 1
        source_start, source_end, copied, _, after = self.pieces[last]
        mapped_end = source_start + (end - self.piece_starts[last]) if copied else source_end
        if mapped_end == source_end:
            mapped_end += after
        return mapped_start, mapped_end


def _glued_link(text: str, m: re.Match[str]) -> bool:
    """A link whose text runs on into a word on either side: part of a token, not a link in prose."""
    before = m.start() > 0 and _TOKEN_CHAR.match(text, m.start() - 1) is not None
    after = m.end() < len(text) and _TOKEN_CHAR.match(text, m.end()) is not None
    return before or after


def render_view(text: str) -> View:
    """``text`` with the spellings listed in the module docstring undone, and the map back."""
    if _TRIGGER.search(text) is None:
        return View(text, text)
    parts: list[str] = []
    starts: list[int] = []
    pieces: list[tuple[int, int, bool, int, int]] = []
    length = 0
    position = 0
    dropped_links: list[tuple[int, int]] = []

    def emit(value: str, source_start: int, source_end: int, copied: bool, before: int = 0, after: int = 0) -> None:
        nonlocal length
        if value:
            parts.append(value)
            starts.append(length)
            pieces.append((source_start, source_end, copied, before, after))
            length += len(value)

    # Every spelling starts at a trigger character: finding those is a fast scan, and trying the
    # spelling only there costs ~15 ms/MB against ~280 for letting the alternation try every position.
    for trigger in _TRIGGER.finditer(text):
        if trigger.start() < position:
            continue
        m = _SPELLING.match(text, trigger.start())
        if m is None:
            continue
        kind = m.lastgroup if m.lastgroup != "label" else "link"
        if kind == "reference":
            decoded = html.unescape(m.group())
            if decoded == m.group():
                continue
        elif kind == "link":
            if not _glued_link(text, m):
                continue
        emit(text[position:m.start()], position, m.start(), True)
        if kind == "escaped":
            emit(m.group("escaped"), m.start("escaped"), m.end(), True)
        elif kind == "reference":
            emit(decoded, m.start(), m.end(), False)
        elif kind == "link":
            dropped_links.append((m.end("label") + 2, m.end() - 1))
            # the "[" and "](destination)" render as nothing: the next piece starts after them
            emit(m.group("label"), m.start("label"), m.end("label"), True, 1, m.end() - m.end("label"))
        position = m.end()
    if not pieces:
        return View(text, text)
    emit(text[position:], position, len(text), True)
    return View("".join(parts), text, tuple(starts), tuple(pieces), tuple(dropped_links))
