"""The canonical Markdown codec: one serialization, with a ``{#ULID}`` anchor after every block.

CommonMark + GFM tables and task lists + YAML frontmatter. ``serialize_markdown``
writes the canonical form; ``parse_markdown`` reads canonical text back
byte-for-byte and reads hand-written Markdown without rewriting what the person
typed: a block's text is its inline source, sliced from the input.

Where an anchor goes, per block type (chosen so common renderers still show the
document):

- most blocks: at the end of the block's last line, ``text {#ID}``;
- a code fence: on the opening fence's info string, ```` ```python {#ID} ````;
- a table row: inside its last cell, ``| a | b {#ID} |``;
- a divider: ``--- {#ID}`` (read back as a divider, not as a paragraph).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from fastpad.errors import FieldError, ValidationFailed
from fastpad.notes import blocks as bt
from fastpad.notes.blocks import Block, NoteMeta
from fastpad.notes.ids import ULID_PATTERN, is_ulid

# Block structure only: inline parsing is skipped (text stays source) and link
# reference definitions stay paragraphs, so nothing the person wrote is consumed.
_MD = MarkdownIt("commonmark").enable("table").disable("reference")
_MD.core.ruler.disable("inline")

_ANCHOR = re.compile(r"(?:^| )\{#([^\s{}]*)\}[ \t]*$", re.M)
_INLINE_ANCHOR = re.compile(rf" ?\{{#({ULID_PATTERN})\}}")
_ROW_ANCHOR = re.compile(r" ?\{#([^\s{}]*)\}( *)\|[ \t]*$")
_TASK = re.compile(r"^\[([ xX])\](?: |$)")
_CALLOUT = re.compile(r"^\[!([A-Za-z][\w-]*)\]([+-]?)(?:[ \t]+(.*))?$")
_DIVIDER = re.compile(r"^(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_QUOTE_PREFIX = re.compile(r"^ {0,3}> ?")
_FRONTMATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M)
_BLOCK_STARTS = frozenset(
    {"bullet_list_open", "ordered_list_open", "heading_open", "blockquote_open", "fence", "code_block", "hr", "table_open", "html_block"}
)


@dataclass(frozen=True)
class ParsedNote:
    meta: NoteMeta
    blocks: list[Block]


# --------------------------------------------------------------------------- serialize


def serialize_markdown(meta: NoteMeta, blocks: Sequence[Block]) -> str:
    """The canonical Markdown of a note. Every block must have an id."""
    front = _serialize_frontmatter(meta)
    body = _serialize_body(blocks)
    return front + ("\n" if front and body else "") + (body + "\n" if body else "")


def _serialize_frontmatter(meta: NoteMeta) -> str:
    data: dict[str, Any] = {}
    if meta.title:
        data["title"] = meta.title
    if meta.types:
        data["types"] = list(meta.types)
    data.update(meta.properties)
    if not data:
        return ""
    dumped = yaml.dump(data, Dumper=_FrontmatterDumper, sort_keys=False, allow_unicode=True, width=1 << 30)
    return f"---\n{dumped}---\n"


class _FrontmatterDumper(yaml.SafeDumper):
    """Block-style mapping; a list of scalars on one line, as in ``types: [Project]``."""


def _represent_list(dumper: yaml.SafeDumper, value: list) -> yaml.Node:
    flat = all(not isinstance(item, (list, dict)) for item in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flat)


_FrontmatterDumper.add_representer(list, _represent_list)


def _serialize_body(blocks: Sequence[Block]) -> str:
    out: list[str] = []
    previous: Block | None = None
    # List nesting state: per depth, the content column and the list's signature.
    content_columns: list[int] = []
    signatures: list[tuple[bool, str]] = []
    for block in blocks:
        if block.id is None:
            raise ValueError("every block needs an id before it is serialized")
        if block.type in bt.LIST_TYPES:
            in_list = previous is not None and previous.type in bt.LIST_TYPES
            if not in_list:
                content_columns, signatures = [], []
            depth = min(block.attrs["depth"], len(content_columns))
            signature = (block.attrs["ordered"], block.attrs["marker"])
            # A nested list that is not numbered from 1 cannot interrupt its parent's
            # paragraph, and a list of another kind starts a new list: both need a blank line.
            opens_nested = depth == len(content_columns)
            tight = in_list and (
                (opens_nested and (not block.attrs["ordered"] or block.attrs["number"] == 1))
                or (not opens_nested and signatures[depth] == signature)
            )
            del content_columns[depth:], signatures[depth:]
            indent = content_columns[-1] if content_columns else 0
            text, column = _list_item(block, indent)
            content_columns.append(column)
            signatures.append(signature)
            separator = "\n" if tight else "\n\n"
        else:
            text = _SERIALIZERS[block.type](block)
            tight = block.type == bt.TABLE_ROW and previous is not None and previous.type == bt.TABLE_ROW
            separator = "\n" if tight and not block.attrs["header"] else "\n\n"
        if out:
            out.append(separator)
        out.append(text)
        previous = block
    return "".join(out)


def _anchored(text: str, block_id: str) -> str:
    return f"{text} {{#{block_id}}}" if text else f"{{#{block_id}}}"


def _indent_continuation(text: str, column: int) -> str:
    pad = " " * column
    return "\n".join(line if i == 0 or not line else pad + line for i, line in enumerate(text.split("\n")))


def _list_item(block: Block, indent: int) -> tuple[str, int]:
    attrs = block.attrs
    marker = f"{attrs['number']}{attrs['marker']}" if attrs["ordered"] else attrs["marker"]
    column = indent + len(marker) + 1
    text = block.text
    if block.type == bt.TASK:
        text = ("[x] " if attrs["checked"] else "[ ] ") + text if text else ("[x]" if attrs["checked"] else "[ ]")
    body = _indent_continuation(_anchored(text, block.id), column)
    return f"{' ' * indent}{marker} {body}", column


def _heading(block: Block) -> str:
    return "#" * block.attrs["level"] + " " + _anchored(block.text.replace("\n", " "), block.id)


def _paragraph(block: Block) -> str:
    return _anchored(block.text, block.id)


def _quote_lines(text: str, block_id: str) -> str:
    lines = _anchored(text, block_id).split("\n")
    return "\n".join(f"> {line}" if line else ">" for line in lines)


def _quote(block: Block) -> str:
    return _quote_lines(block.text, block.id)


def _callout(block: Block) -> str:
    attrs = block.attrs
    header = f"[!{attrs['kind']}]{attrs['fold']}" + (f" {attrs['title']}" if attrs["title"] else "")
    return _quote_lines(header + ("\n" + block.text if block.text else ""), block.id)


def canonical_form(block: Block) -> Block:
    """The block as its canonical Markdown reads back: a code fence is lengthened
    past any fence-like run inside the code, so the code cannot close it early."""
    if block.type != bt.CODE:
        return block
    fence = block.attrs["fence"] or "```"
    runs = re.finditer(re.escape(fence[0]) + "{3,}", block.text)
    longest = max((len(run.group(0)) for run in runs), default=0)
    if longest < len(fence):
        return block
    return Block(block.id, block.type, block.text, {**block.attrs, "fence": fence[0] * (longest + 1)})


def _code(block: Block) -> str:
    fence = canonical_form(block).attrs["fence"]
    info = f"{block.attrs['language']} {{#{block.id}}}"
    body = block.text + "\n" if block.text else ""
    return f"{fence}{info}\n{body}{fence}"


def _divider(block: Block) -> str:
    marker = re.sub(r"[ \t]", "", block.attrs["marker"]) or "---"
    return _anchored(marker, block.id)


def _table_row(block: Block) -> str:
    row = block.text.rstrip()
    if row.endswith("|") and not row.endswith("\\|"):
        cells = row[:-1]
        trailing = cells[len(cells.rstrip()) :]
        row = f"{cells.rstrip()} {{#{block.id}}}{trailing}|"
    else:
        row = _anchored(row, block.id)
    if block.attrs["header"]:
        row += "\n" + block.attrs["delimiter"]
    return row


_SERIALIZERS = {
    bt.HEADING: _heading,
    bt.PARAGRAPH: _paragraph,
    bt.QUOTE: _quote,
    bt.CALLOUT: _callout,
    bt.CODE: _code,
    bt.DIVIDER: _divider,
    bt.TABLE_ROW: _table_row,
}


# --------------------------------------------------------------------------- parse


def parse_markdown(text: str) -> ParsedNote:
    """Blocks and metadata from Markdown. A block without an anchor has id None.

    Raises ValidationFailed (field ``markdown``) for malformed frontmatter, an
    anchor that is not a ULID, or two blocks claiming one anchor.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    meta, body, body_line = _split_frontmatter(text)
    reader = _BlockReader(body.split("\n"), body_line)
    blocks = reader.read(_MD.parse(body))
    seen: dict[str, int] = {}
    for block, line in zip(blocks, reader.lines_of_blocks):
        if block.id is None:
            continue
        if block.id in seen:
            raise _invalid(
                "duplicate_anchor",
                f"line {line}: anchor {{#{block.id}}} is already used by the block on line {seen[block.id]}; "
                "each anchor names one block — remove one of them (a block without an anchor is new)",
                line=line,
            )
        seen[block.id] = line
    return ParsedNote(meta, blocks)


def _invalid(code: str, message: str, *, line: int | None = None) -> ValidationFailed:
    extra = {"line": line} if line is not None else {}
    return ValidationFailed(message, field_errors=[FieldError("markdown", code, message)], extra=extra)


def _split_frontmatter(text: str) -> tuple[NoteMeta, str, int]:
    """(meta, body, 1-based line number where the body starts)."""
    if not text.startswith("---\n"):
        return NoteMeta(), text, 1
    end = _FRONTMATTER_END.search(text, 4)
    if end is None:
        raise _invalid("malformed_frontmatter", "frontmatter opened with '---' on line 1 is never closed", line=1)
    raw = text[4 : end.start()]
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        raise _invalid("malformed_frontmatter", f"frontmatter is not valid YAML (line {line}): {exc}", line=line) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise _invalid("malformed_frontmatter", "frontmatter must be a YAML mapping of keys to values", line=2)
    data = dict(data)
    title = data.pop("title", "") or ""
    types = data.pop("types", None) or []
    if not isinstance(title, str):
        raise _invalid("malformed_frontmatter", "frontmatter 'title' must be a string", line=2)
    if isinstance(types, str):
        types = [types]
    if not isinstance(types, list) or not all(isinstance(t, str) and t for t in types):
        raise _invalid("malformed_frontmatter", "frontmatter 'types' must be a list of type names", line=2)
    if not all(isinstance(key, str) for key in data):
        raise _invalid("malformed_frontmatter", "frontmatter keys must be strings", line=2)
    body_start = end.end() + 1
    body = text[body_start:]
    if body.startswith("\n"):
        body = body[1:]
        body_start += 1
    return NoteMeta(title, tuple(types), data), body, text.count("\n", 0, body_start) + 1


class _BlockReader:
    """Walks markdown-it's block tokens and slices each block's source."""

    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines = lines
        self.first_line = first_line
        self.blocks: list[Block] = []
        self.lines_of_blocks: list[int] = []

    def read(self, tokens: list[Token]) -> list[Block]:
        lists: list[Token] = []  # open list tokens, innermost last
        item: Token | None = None  # a list item whose first paragraph is still to come
        i = 0
        while i < len(tokens):
            token = tokens[i]
            kind = token.type
            if item is not None and kind in _BLOCK_STARTS:  # an item whose first child is not a paragraph
                self._list_item(item, lists, "", item.map)
                item = None
            if kind in ("bullet_list_open", "ordered_list_open"):
                lists.append(token)
            elif kind in ("bullet_list_close", "ordered_list_close"):
                lists.pop()
            elif kind == "list_item_open":
                item = token
            elif kind == "list_item_close":
                if item is not None:  # an empty item: "-" alone on its line
                    self._list_item(item, lists, "", item.map)
                    item = None
            elif kind == "paragraph_open":
                content = tokens[i + 1].content
                if item is not None:
                    self._list_item(item, lists, content, token.map)
                    item = None
                else:
                    self._paragraph(content, token.map)
                i += 2
            elif kind == "heading_open":
                level = len(token.markup) if token.markup.startswith("#") else (1 if token.markup[0] == "=" else 2)
                text, block_id = self._take_anchor(tokens[i + 1].content, token.map)
                self._add(Block(block_id, bt.HEADING, text.replace("\n", " "), {"level": level}), token.map)
                i += 2
            elif kind == "blockquote_open":
                self._blockquote(token)
                i = self._skip_to_close(tokens, i)
            elif kind in ("fence", "code_block"):
                self._code(token)
            elif kind == "hr":
                self._add(Block(None, bt.DIVIDER, "", {"marker": self.lines[token.map[0]].strip()}), token.map)
            elif kind == "table_open":
                i = self._table(tokens, i)
            elif kind == "html_block":
                self._paragraph(token.content.rstrip("\n"), token.map)
            i += 1
        return self.blocks

    def _add(self, block: Block, source_map: list[int] | None) -> None:
        self.blocks.append(block)
        self.lines_of_blocks.append(self.first_line + (source_map[0] if source_map else 0))

    def _line(self, source_map: list[int] | None) -> int:
        return self.first_line + (source_map[0] if source_map else 0)

    def _check_anchor(self, candidate: str, source_map: list[int] | None) -> str:
        if not is_ulid(candidate):
            line = self._line(source_map)
            raise _invalid(
                "anchor_not_ulid",
                f"line {line}: anchor {{#{candidate}}} is not a block id (a 26-character ULID); "
                "remove it to make the block new, or restore the id it had",
                line=line,
            )
        return candidate

    def _take_anchor(self, text: str, source_map: list[int] | None) -> tuple[str, str | None]:
        """Strip anchors from line ends. The first names the block; any later one
        belonged to a block joined into this one on disk, which keeps the first id."""
        line_ends = list(_ANCHOR.finditer(text))
        ids = [self._check_anchor(match.group(1), source_map) for match in line_ends]
        text = _ANCHOR.sub("", text)
        inline = list(_INLINE_ANCHOR.finditer(text))  # a join on one line leaves one mid-line
        if inline:
            ids = [match.group(1) for match in inline] + ids
            text = _INLINE_ANCHOR.sub("", text)
        return text, (ids[0] if ids else None)

    def _paragraph(self, content: str, source_map: list[int] | None) -> None:
        text, block_id = self._take_anchor(content, source_map)
        if block_id is not None and _DIVIDER.match(text):
            self._add(Block(block_id, bt.DIVIDER, "", {"marker": text}), source_map)
        else:
            self._add(Block(block_id, bt.PARAGRAPH, text), source_map)

    def _list_item(self, item: Token, lists: list[Token], content: str, source_map: list[int] | None) -> None:
        text, block_id = self._take_anchor(content, source_map)
        ordered = lists[-1].type == "ordered_list_open"
        attrs: dict[str, Any] = {
            "ordered": ordered,
            "marker": item.markup,
            "number": int(item.info) if ordered and item.info else 1,
            "depth": len(lists) - 1,
        }
        task = _TASK.match(text)
        if task:
            attrs["checked"] = task.group(1) != " "
            self._add(Block(block_id, bt.TASK, text[task.end() :], attrs), item.map)
        else:
            self._add(Block(block_id, bt.LIST_ITEM, text, attrs), item.map)

    def _blockquote(self, token: Token) -> None:
        start, end = token.map
        inner = [_QUOTE_PREFIX.sub("", line, count=1) for line in self.lines[start:end]]
        while inner and not inner[-1].strip():
            inner.pop()
        last = inner[-1] if inner else ""
        last, block_id = self._take_anchor(last, token.map)
        if inner:
            inner[-1] = last
        callout = _CALLOUT.match(inner[0]) if inner else None
        if callout:
            attrs = {"kind": callout.group(1), "fold": callout.group(2), "title": callout.group(3) or ""}
            self._add(Block(block_id, bt.CALLOUT, "\n".join(inner[1:]), attrs), token.map)
        else:
            self._add(Block(block_id, bt.QUOTE, "\n".join(inner)), token.map)

    @staticmethod
    def _skip_to_close(tokens: list[Token], i: int) -> int:
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

    def _code(self, token: Token) -> None:
        text = token.content[:-1] if token.content.endswith("\n") else token.content
        if token.type == "code_block":  # indented code is kept as a fence
            self._add(Block(None, bt.CODE, text, {"language": "", "fence": "```"}), token.map)
            return
        language, block_id = self._take_anchor(token.info.strip(), token.map)
        attrs = {"language": language.strip(), "fence": token.markup}
        self._add(Block(block_id, bt.CODE, text, attrs), token.map)

    def _table(self, tokens: list[Token], i: int) -> int:
        header = True
        while tokens[i].type != "table_close":
            token = tokens[i]
            if token.type == "tr_open":
                row_line = token.map[0]
                row = self.lines[row_line].strip()
                block_id = None
                match = _ROW_ANCHOR.search(row) or _ANCHOR.search(row)
                if match is not None:
                    block_id = self._check_anchor(match.group(1), token.map)
                    tail = match.group(2) + "|" if match.re is _ROW_ANCHOR else ""
                    row = row[: match.start()] + tail
                attrs = {"header": header}
                if header:
                    attrs["delimiter"] = self.lines[row_line + 1].strip()
                self._add(Block(block_id, bt.TABLE_ROW, row, attrs), token.map)
                header = False
            i += 1
        return i

