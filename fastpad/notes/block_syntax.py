"""Building blocks from Markdown source: anchors, and one constructor per block type.

Both readers — the general one over markdown-it's tokens and the fast one for
canonical text — hand their slices to ``SourceBlocks``, so a block reads the
same whichever reader found it.
"""

from __future__ import annotations

import re
from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.notes import blocks as bt
from fastpad.notes.blocks import Block
from fastpad.notes.ids import ULID_PATTERN, is_ulid

# An anchor at the end of a line (after one space, or alone on it).
LINE_END_ANCHOR = re.compile(r"(?:^| )\{#([^\s{}]*)\}[ \t]*$", re.M)
# A block id left mid-line, where two blocks were joined on one line.
INLINE_ANCHOR = re.compile(rf" ?\{{#({ULID_PATTERN})\}}")
# A table row's anchor inside its last cell: ``| a | b {#ID} |``.
ROW_ANCHOR = re.compile(r" ?\{#([^\s{}]*)\}( *)\|[ \t]*$")
TASK = re.compile(r"^\[([ xX])\](?: |$)")
CALLOUT = re.compile(r"^\[!([A-Za-z][\w-]*)\]([+-]?)(?:[ \t]+(.*))?$")
DIVIDER = re.compile(r"^(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
QUOTE_PREFIX = re.compile(r"^ {0,3}> ?")


def invalid_markdown(code: str, message: str, *, line: int | None = None) -> ValidationFailed:
    extra = {"line": line} if line is not None else {}
    return ValidationFailed(message, field_errors=[FieldError("markdown", code, message)], extra=extra)


class SourceBlocks:
    """Blocks read so far, each with the 1-based source line it starts on."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.lines: list[int] = []

    def add(self, block: Block, line: int) -> None:
        self.blocks.append(block)
        self.lines.append(line)

    @staticmethod
    def check_anchor(candidate: str, line: int) -> str:
        if not is_ulid(candidate):
            raise invalid_markdown(
                "anchor_not_ulid",
                f"line {line}: anchor {{#{candidate}}} is not a block id (a 26-character ULID); "
                "remove it to make the block new, or restore the id it had",
                line=line,
            )
        return candidate

    def take_anchor(self, text: str, line: int) -> tuple[str, str | None]:
        """Strip anchors from line ends. The first names the block; any later one
        belonged to a block joined into this one on disk, which keeps the first id."""
        ids = [self.check_anchor(match.group(1), line) for match in LINE_END_ANCHOR.finditer(text)]
        text = LINE_END_ANCHOR.sub("", text)
        inline = [match.group(1) for match in INLINE_ANCHOR.finditer(text)]
        if inline:
            ids = inline + ids
            text = INLINE_ANCHOR.sub("", text)
        return text, (ids[0] if ids else None)

    def paragraph(self, content: str, line: int) -> None:
        text, block_id = self.take_anchor(content, line)
        if block_id is not None and DIVIDER.match(text):
            self.add(Block(block_id, bt.DIVIDER, "", {"marker": text}), line)
        else:
            self.add(Block(block_id, bt.PARAGRAPH, text), line)

    def heading(self, content: str, level: int, line: int) -> None:
        text, block_id = self.take_anchor(content, line)
        self.add(Block(block_id, bt.HEADING, text.replace("\n", " "), {"level": level}), line)

    def list_item(self, content: str, *, ordered: bool, marker: str, number: int, depth: int, line: int) -> None:
        text, block_id = self.take_anchor(content, line)
        attrs: dict[str, Any] = {"ordered": ordered, "marker": marker, "number": number, "depth": depth}
        task = TASK.match(text)
        if task:
            attrs["checked"] = task.group(1) != " "
            self.add(Block(block_id, bt.TASK, text[task.end() :], attrs), line)
        else:
            self.add(Block(block_id, bt.LIST_ITEM, text, attrs), line)

    def quote(self, inner: list[str], line: int) -> None:
        """A blockquote from its lines with the ``>`` prefix already removed."""
        while inner and not inner[-1].strip():
            inner.pop()
        block_id = None
        if inner:
            inner[-1], block_id = self.take_anchor(inner[-1], line)
        callout = CALLOUT.match(inner[0]) if inner else None
        if callout:
            attrs = {"kind": callout.group(1), "fold": callout.group(2), "title": callout.group(3) or ""}
            self.add(Block(block_id, bt.CALLOUT, "\n".join(inner[1:]), attrs), line)
        else:
            self.add(Block(block_id, bt.QUOTE, "\n".join(inner)), line)

    def code(self, text: str, info: str, fence: str, line: int) -> None:
        language, block_id = self.take_anchor(info.strip(), line)
        self.add(Block(block_id, bt.CODE, text, {"language": language.strip(), "fence": fence}), line)

    def divider(self, marker: str, line: int) -> None:
        self.add(Block(None, bt.DIVIDER, "", {"marker": marker}), line)

    def table_row(self, row: str, line: int, *, delimiter: str | None) -> None:
        """One row's source line; ``delimiter`` is the alignment line of a header row."""
        block_id = None
        match = ROW_ANCHOR.search(row) or LINE_END_ANCHOR.search(row)
        if match is not None:
            block_id = self.check_anchor(match.group(1), line)
            tail = match.group(2) + "|" if match.re is ROW_ANCHOR else ""
            row = row[: match.start()] + tail
        attrs = {"header": True, "delimiter": delimiter} if delimiter is not None else {"header": False}
        self.add(Block(block_id, bt.TABLE_ROW, row, attrs), line)
