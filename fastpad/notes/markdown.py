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
from fastpad.notes import blocks as bt
from fastpad.notes.block_syntax import invalid_markdown
from fastpad.notes.blocks import Block, NoteMeta
from fastpad.notes.canonical_reader import read_canonical
from fastpad.notes.markdown_reader import read_markdown

_FRONTMATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M)


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


def _without_timestamps(resolvers: dict) -> dict:
    return {
        first: [(tag, pattern) for tag, pattern in entries if tag != "tag:yaml.org,2002:timestamp"]
        for first, entries in resolvers.items()
    }


# Frontmatter is a note's title, types and properties: these bound what one may cost to read.
FRONTMATTER_MAX_DEPTH = 32
FRONTMATTER_MAX_NODES = 10_000
# libyaml when installed (PyYAML's wheels carry it): ten times faster, and its scanner's work per
# token does not grow with the nesting as the pure-Python one's does.
_YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPENS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSES = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


class _FrontmatterLoader(_YamlLoader):  # type: ignore[misc, valid-type]
    """Dates stay the ISO strings the person wrote: a property holds text, numbers,
    booleans and lists, and ``due: 2025-01-14`` round-trips as written."""


def _check_frontmatter_bounds(raw: str) -> None:
    """Refuse, from the YAML's events and before anything is built, frontmatter whose reading
    would cost more than its size: an alias (``*name``: a few hundred bytes of aliases of
    aliases stand for billions of values to every later walk, the "billion laughs"), nesting
    past ``FRONTMATTER_MAX_DEPTH`` or more than ``FRONTMATTER_MAX_NODES`` values."""
    depth = nodes = 0
    for event in yaml.parse(raw, Loader=_FrontmatterLoader):
        line = event.start_mark.line + 2  # the frontmatter starts on the note's line 2
        if isinstance(event, yaml.AliasEvent):
            raise invalid_markdown(
                "frontmatter_alias",
                f"frontmatter line {line}: aliases (*{event.anchor}) are not allowed; write the value out",
                line=line,
            )
        if isinstance(event, _CLOSES):
            depth -= 1
            continue
        if not isinstance(event, (yaml.ScalarEvent, *_OPENS)):
            continue
        nodes += 1
        if nodes > FRONTMATTER_MAX_NODES:
            raise invalid_markdown(
                "frontmatter_too_large", f"frontmatter holds more than {FRONTMATTER_MAX_NODES} values (line {line})",
                line=line,
            )
        if isinstance(event, _OPENS):
            depth += 1
            if depth > FRONTMATTER_MAX_DEPTH:
                raise invalid_markdown(
                    "frontmatter_too_deep",
                    f"frontmatter line {line}: values nest more than {FRONTMATTER_MAX_DEPTH} levels deep", line=line,
                )


class _FrontmatterDumper(yaml.SafeDumper):
    """Block-style mapping; a list of scalars on one line, as in ``types: [Project]``."""


_FrontmatterLoader.yaml_implicit_resolvers = _without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)
_FrontmatterDumper.yaml_implicit_resolvers = _without_timestamps(yaml.SafeDumper.yaml_implicit_resolvers)


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
    anchor that is not a ULID, or two blocks claiming one anchor. U+0000 reads as U+FFFD, as
    CommonMark says it must (and as markdown-it reads it), whichever reader takes the text.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
    meta, body, body_line = _split_frontmatter(text)
    found = read_canonical(body, body_line) or read_markdown(body, body_line)
    seen: dict[str, int] = {}
    for block, line in zip(found.blocks, found.lines):
        if block.id is None:
            continue
        if block.id in seen:
            raise invalid_markdown(
                "duplicate_anchor",
                f"line {line}: anchor {{#{block.id}}} is already used by the block on line {seen[block.id]}; "
                "each anchor names one block — remove one of them (a block without an anchor is new)",
                line=line,
            )
        seen[block.id] = line
    return ParsedNote(meta, found.blocks)


def _split_frontmatter(text: str) -> tuple[NoteMeta, str, int]:
    """(meta, body, 1-based line number where the body starts)."""
    if not text.startswith("---\n"):
        return NoteMeta(), text, 1
    end = _FRONTMATTER_END.search(text, 4)
    if end is None:
        raise invalid_markdown("malformed_frontmatter", "frontmatter opened with '---' on line 1 is never closed", line=1)
    raw = text[4 : end.start()]
    try:
        _check_frontmatter_bounds(raw)
        data = yaml.load(raw, Loader=_FrontmatterLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        raise invalid_markdown("malformed_frontmatter", f"frontmatter is not valid YAML (line {line}): {exc}", line=line) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise invalid_markdown("malformed_frontmatter", "frontmatter must be a YAML mapping of keys to values", line=2)
    data = dict(data)
    title = data.pop("title", "") or ""
    types = data.pop("types", None) or []
    if not isinstance(title, str):
        raise invalid_markdown("malformed_frontmatter", "frontmatter 'title' must be a string", line=2)
    if isinstance(types, str):
        types = [types]
    if not isinstance(types, list) or not all(isinstance(t, str) and t for t in types):
        raise invalid_markdown("malformed_frontmatter", "frontmatter 'types' must be a list of type names", line=2)
    if not all(isinstance(key, str) for key in data):
        raise invalid_markdown("malformed_frontmatter", "frontmatter keys must be strings", line=2)
    body_start = end.end() + 1
    body = text[body_start:]
    if body.startswith("\n"):
        body = body[1:]
        body_start += 1
    return NoteMeta(title, tuple(types), data), body, text.count("\n", 0, body_start) + 1
