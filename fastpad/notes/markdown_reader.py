"""The general reader: any CommonMark + GFM text, through markdown-it's block tokens.

Only block structure is parsed (inline parsing is off, so text stays the
source the person typed) and link reference definitions stay paragraphs, so
nothing written is consumed. Each token's source map says which lines a block
came from.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

from fastpad.notes.block_syntax import QUOTE_PREFIX, SourceBlocks, invalid_markdown

# Block nesting markdown-it may open: a quote is one level, a list two (the list and its item),
# so 32 lists or 64 quotes deep. markdown-it silently drops everything past its own limit,
# so the reader refuses a deeper block instead (it would also recurse once per level).
MAX_NESTING = 64


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        self.line = line  # 0-based, in the body


def _refuse_deeper(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """A block rule tried before every other: a block starting past ``MAX_NESTING`` is an error."""
    if state.level > MAX_NESTING:
        raise _TooDeep(start_line)
    return False


# The rest of a thematic-break line after its first marker: that marker and blanks only.
_BREAK_TAIL = {marker: re.compile(rf"(?:{re.escape(marker)}|[ \t])*") for marker in "*-_"}


def _thematic_break(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """markdown-it's ``hr`` rule with its character loop as one regex match. Each list level
    tries the rule on the rest of the line, so on ``- - - … x`` the loop cost a Python step per
    character per level (5 s for 200 KB); the match is the same work in C."""
    pos = state.bMarks[start_line] + state.tShift[start_line]
    maximum = state.eMarks[start_line]
    if state.is_code_block(start_line) or pos >= maximum:
        return False
    marker = state.src[pos]
    if marker not in _BREAK_TAIL or _BREAK_TAIL[marker].match(state.src, pos + 1, maximum).end() != maximum:
        return False
    count = state.src.count(marker, pos, maximum)
    if count < 3:
        return False
    if silent:
        return True
    state.line = start_line + 1
    token = state.push("hr", "hr", 0)
    token.map = [start_line, state.line]
    token.markup = marker * (count + 1)  # what markdown-it's rule sets
    return True


# markdown-it skips (drops) whatever starts at its maxNesting; a list steps two levels at once, so
# its limit stays well above ours, which refuses first.
_MD = MarkdownIt("commonmark", {"maxNesting": 2 * MAX_NESTING}).enable("table").disable("reference")
_MD.core.ruler.disable("inline")
_MD.block.ruler.before("table", "refuse_deeper", _refuse_deeper)
_MD.block.ruler.at("hr", _thematic_break, {"alt": ["paragraph", "reference", "blockquote", "list"]})

# Tokens that start a block: a list item whose first child is one of these has no text of its own.
_BLOCK_STARTS = frozenset(
    {"bullet_list_open", "ordered_list_open", "heading_open", "blockquote_open", "fence", "code_block", "hr", "table_open", "html_block"}
)


def read_markdown(body: str, first_line: int) -> SourceBlocks:
    """Blocks of ``body``, whose first line is line ``first_line`` of the file."""
    try:
        tokens = _MD.parse(body)
    except _TooDeep as deep:
        line = first_line + deep.line
        raise invalid_markdown(
            "too_deep",
            f"line {line}: lists and quotes nest more than {MAX_NESTING} levels deep here (a list counts "
            "two: the list and its item); flatten the outline",
            line=line,
        ) from None
    return _TokenWalk(body.split("\n"), first_line).read(tokens)


class _TokenWalk:
    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines = lines
        self.first_line = first_line
        self.out = SourceBlocks()

    def _line(self, token: Token) -> int:
        return self.first_line + (token.map[0] if token.map else 0)

    def read(self, tokens: list[Token]) -> SourceBlocks:
        lists: list[Token] = []  # open list tokens, innermost last
        item: Token | None = None  # a list item whose first paragraph is still to come
        i = 0
        while i < len(tokens):
            token = tokens[i]
            kind = token.type
            if item is not None and kind in _BLOCK_STARTS:
                self._list_item(item, lists, "")
                item = None
            if kind in ("bullet_list_open", "ordered_list_open"):
                lists.append(token)
            elif kind in ("bullet_list_close", "ordered_list_close"):
                lists.pop()
            elif kind == "list_item_open":
                item = token
            elif kind == "list_item_close":
                if item is not None:  # an empty item: "-" alone on its line
                    self._list_item(item, lists, "")
                    item = None
            elif kind == "paragraph_open":
                content = tokens[i + 1].content
                if item is not None:
                    self._list_item(item, lists, content)
                    item = None
                else:
                    self.out.paragraph(content, self._line(token))
                i += 2
            elif kind == "heading_open":
                level = len(token.markup) if token.markup.startswith("#") else (1 if token.markup[0] == "=" else 2)
                self.out.heading(tokens[i + 1].content, level, self._line(token))
                i += 2
            elif kind == "blockquote_open":
                start, end = token.map
                inner = [QUOTE_PREFIX.sub("", line, count=1) for line in self.lines[start:end]]
                self.out.quote(inner, self._line(token))
                i = _matching_close(tokens, i)
            elif kind == "fence":
                self.out.code(_code_text(token), token.info, token.markup, self._line(token))
            elif kind == "code_block":  # indented code is kept as a fence
                self.out.code(_code_text(token), "", "```", self._line(token))
            elif kind == "hr":
                self.out.divider(self.lines[token.map[0]].strip(), self._line(token))
            elif kind == "table_open":
                i = self._table(tokens, i)
            elif kind == "html_block":
                self.out.paragraph(token.content.rstrip("\n"), self._line(token))
            i += 1
        return self.out

    def _list_item(self, item: Token, lists: list[Token], content: str) -> None:
        ordered = lists[-1].type == "ordered_list_open"
        self.out.list_item(
            content,
            ordered=ordered,
            marker=item.markup,
            number=int(item.info) if ordered and item.info else 1,
            depth=len(lists) - 1,
            line=self._line(item),
        )

    def _table(self, tokens: list[Token], i: int) -> int:
        header = True
        while tokens[i].type != "table_close":
            token = tokens[i]
            if token.type == "tr_open":
                row_line = token.map[0]
                delimiter = self.lines[row_line + 1].strip() if header else None
                self.out.table_row(self.lines[row_line].strip(), self._line(token), delimiter=delimiter)
                header = False
            i += 1
        return i


def _code_text(token: Token) -> str:
    return token.content[:-1] if token.content.endswith("\n") else token.content


def _matching_close(tokens: list[Token], i: int) -> int:
    depth = 0
    while True:
        kind = tokens[i].type
        if kind == "blockquote_open":
            depth += 1
        elif kind == "blockquote_close":
            depth -= 1
            if depth == 0:
                return i
        i += 1
