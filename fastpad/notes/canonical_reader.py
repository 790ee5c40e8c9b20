"""The fast reader: canonical text, read line by line.

The server, the mirror and the agent tools read canonical text far more often
than anything else, and markdown-it spends about 30 µs a block finding
structure that the canonical form already spells out. This reader accepts only
the shapes ``serialize_markdown`` writes — blocks separated by blank lines
(list and table runs by single newlines), each with its anchor where the
writer puts it — and gives up on the first line that strays, returning None so
the general reader decides everything that is not canonical. A differential
test holds both readers to the same blocks on canonical text.
"""

from __future__ import annotations

import re

from fastpad.notes.block_syntax import QUOTE_PREFIX, ROW_ANCHOR, SourceBlocks
from fastpad.notes.blocks import table_cells
from fastpad.notes.ids import ULID_PATTERN

# "text {#ID}" or "{#ID}" alone: the only anchor placement the writer uses.
_ANCHORED = re.compile(rf"^(?:(.*) )?\{{#({ULID_PATTERN})\}}$", re.S)
_HEADING = re.compile(r"^(#{1,6}) (.*)$")
_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
_ITEM = re.compile(r"^( *)([-*+]|(\d{1,9})([.)])) (.*)$")
_DIVIDER = re.compile(rf"^(?:---|\*\*\*|___) \{{#{ULID_PATTERN}\}}$")
_DELIMITER_ROW = re.compile(r"^\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
# A line that could open a block or interrupt a paragraph; text lines never look like this.
_MAY_START_BLOCK = re.compile(
    r"^(?:[ \t]|#|>|`{3}|~{3}|<|\||=|[-*+_](?:[ \t]|$)|[-*_]{3}|\d{1,9}[.)](?:[ \t]|$)|:?-+:?\s*\|)"
)


class _NotCanonical(Exception):
    """The text strays from the canonical form; the general reader takes over."""


def read_canonical(body: str, first_line: int) -> SourceBlocks | None:
    """Blocks of canonical ``body``, or None when it is not canonical."""
    try:
        return _Reader(body.split("\n"), first_line).read()
    except _NotCanonical:
        return None


def _require_anchor(content: str) -> str:
    """Content that ends with exactly one anchor, where the writer puts it."""
    match = _ANCHORED.match(content)
    if match is None or "{#" in (match.group(1) or ""):
        raise _NotCanonical
    return content


class _Reader:
    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines = lines
        self.first_line = first_line
        self.out = SourceBlocks()

    def read(self) -> SourceBlocks:
        i, count = 0, len(self.lines)
        while i < count:
            line = self.lines[i]
            if not line:
                i += 1
                continue
            if _HEADING.match(line):
                end = self._heading(i)
            elif _FENCE.match(line):
                end = self._code(i)
            elif line[0] == ">":
                end = self._quote(i)
            elif line[0] == "|":
                end = self._table(i)
            elif _ITEM.match(line):
                i = self._list_run(i)
                continue
            elif _DIVIDER.match(line):
                self.out.paragraph(line, self.first_line + i)
                end = i + 1
            else:
                end = self._paragraph(i)
            if end < count and self.lines[end]:
                raise _NotCanonical  # every block but a list or table row ends at a blank line
            i = end
        return self.out

    def _heading(self, i: int) -> int:
        hashes, content = _HEADING.match(self.lines[i]).groups()
        if content.startswith(" "):
            raise _NotCanonical
        self.out.heading(_require_anchor(content), len(hashes), self.first_line + i)
        return i + 1

    def _code(self, i: int) -> int:
        fence, info = _FENCE.match(self.lines[i]).groups()
        if fence[0] == "`" and "`" in info:
            raise _NotCanonical
        _require_anchor(info.strip())
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        for j in range(i + 1, len(self.lines)):
            if closing.match(self.lines[j]):
                self.out.code("\n".join(self.lines[i + 1 : j]), info, fence, self.first_line + i)
                return j + 1
        raise _NotCanonical  # an unclosed fence runs to the end of the document

    def _quote(self, i: int) -> int:
        j = i
        while j < len(self.lines) and self.lines[j].startswith(">"):
            j += 1
        inner = [QUOTE_PREFIX.sub("", line, count=1) for line in self.lines[i:j]]
        _require_anchor(inner[-1])
        if any("{#" in line for line in inner[:-1]):
            raise _NotCanonical
        self.out.quote(inner, self.first_line + i)
        return j

    def _table(self, i: int) -> int:
        if i + 1 >= len(self.lines) or not _DELIMITER_ROW.match(self.lines[i + 1]):
            raise _NotCanonical
        delimiter = self.lines[i + 1]
        j = i
        while j < len(self.lines) and self.lines[j].startswith("|"):
            row = self.lines[j]
            anchor = ROW_ANCHOR.search(row)
            if anchor is None or "{#" in row[: anchor.start()]:
                raise _NotCanonical
            if j == i:
                header_cells = table_cells(row[: anchor.start()] + anchor.group(2) + "|")
                if len(header_cells) != len(table_cells(delimiter)):
                    raise _NotCanonical
            self.out.table_row(row, self.first_line + j, delimiter=delimiter if j == i else None)
            j += 2 if j == i else 1
        return j

    def _paragraph(self, i: int) -> int:
        j = i
        while j < len(self.lines) and self.lines[j]:
            if _MAY_START_BLOCK.match(self.lines[j]):
                raise _NotCanonical
            j += 1
        self.out.paragraph(_require_anchor("\n".join(self.lines[i:j])), self.first_line + i)
        return j

    def _list_run(self, i: int) -> int:
        """Consecutive list items; each item's depth follows from its indentation."""
        run_start = i
        columns: list[int] = []  # content column of each open item, outermost first
        previous: list[tuple[bool, str]] = []  # signature of the last item at each depth
        while i < len(self.lines):
            follows_blank = not self.lines[i - 1] if i > run_start else True
            if not self.lines[i]:
                # The writer separates items by a blank line where a list must restart.
                if i + 1 < len(self.lines) and _ITEM.match(self.lines[i + 1]):
                    i += 1
                    continue
                break
            item = _ITEM.match(self.lines[i])
            if item is None:
                raise _NotCanonical  # a lazy continuation line
            indent, marker, number, delimiter, first = item.groups()
            while columns and columns[-1] > len(indent):
                columns.pop()
            depth = len(columns)
            if len(indent) != (columns[-1] if columns else 0) or _MAY_START_BLOCK.match(first):
                raise _NotCanonical
            ordered = number is not None
            signature = (ordered, delimiter if ordered else marker)
            continues_list = len(previous) > depth and previous[depth] == signature
            # A new ordered list interrupts the line above only when numbered from 1.
            if ordered and int(number) != 1 and not follows_blank and not continues_list:
                raise _NotCanonical
            column = len(indent) + len(marker) + 1
            text_lines = [first]
            j = i + 1
            while j < len(self.lines) and self.lines[j] and not _ITEM.match(self.lines[j]):
                line = self.lines[j]
                if not line.startswith(" " * column) or _MAY_START_BLOCK.match(line[column:]):
                    raise _NotCanonical
                text_lines.append(line[column:])
                j += 1
            del previous[depth:]
            previous.append(signature)
            columns.append(column)
            self.out.list_item(
                _require_anchor("\n".join(text_lines)),
                ordered=ordered,
                marker=delimiter if ordered else marker,
                number=int(number) if ordered else 1,
                depth=depth,
                line=self.first_line + i,
            )
            i = j
        return i
