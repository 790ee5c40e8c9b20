"""The general reader: any CommonMark + GFM text, through markdown-it's block tokens.

Only block structure is parsed (inline parsing is off, so text stays the
source the person typed) and link reference definitions stay paragraphs, so
nothing written is consumed. Each token's source map says which lines a block
came from.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from fastpad.notes.block_syntax import QUOTE_PREFIX, SourceBlocks

_MD = MarkdownIt("commonmark").enable("table").disable("reference")
_MD.core.ruler.disable("inline")

# Tokens that start a block: a list item whose first child is one of these has no text of its own.
_BLOCK_STARTS = frozenset(
    {"bullet_list_open", "ordered_list_open", "heading_open", "blockquote_open", "fence", "code_block", "hr", "table_open", "html_block"}
)


def read_markdown(body: str, first_line: int) -> SourceBlocks:
    """Blocks of ``body``, whose first line is line ``first_line`` of the file."""
    return _TokenWalk(body.split("\n"), first_line).read(_MD.parse(body))


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
