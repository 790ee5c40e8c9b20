"""Hypothesis strategies for notes whose block texts are valid inline Markdown.

Texts never start a line with block syntax and never end a line with an
anchor: those are what a block's text cannot hold (the editor escapes them).
"""

from __future__ import annotations

from hypothesis import strategies as st

from fastpad.notes.blocks import Block, NoteMeta
from fastpad.notes.ids import new_id

_FIRST_WORDS = st.sampled_from(["alpha", "Beta", "gamma", "délta", "漢字", "note", "x"])
_WORDS = st.sampled_from(
    ["alpha", "beta", "*em*", "**strong**", "`code`", "[link](https://example.com/a)", "100%", "(AMPK)",
     "1,000", "é", "snake_case", "a|b", "#tag", "x+y", "<b>", "end.", "—", "AND", "q?"]
)


@st.composite
def line(draw, max_words: int = 6) -> str:
    words = [draw(_FIRST_WORDS)] + draw(st.lists(_WORDS, max_size=max_words))
    return " ".join(words)


@st.composite
def lines(draw, max_lines: int = 3) -> str:
    return "\n".join(draw(st.lists(line(), min_size=1, max_size=max_lines)))


@st.composite
def quote_text(draw) -> str:
    parts = draw(st.lists(lines(2), min_size=1, max_size=3))
    return "\n\n".join(parts)


def _with_id(block: Block) -> Block:
    return block.with_id(new_id())


@st.composite
def list_run(draw) -> list[Block]:
    blocks: list[Block] = []
    depth = 0
    for _ in range(draw(st.integers(1, 5))):
        depth = draw(st.integers(0, depth + 1)) if blocks else 0
        ordered = draw(st.booleans())
        attrs = {
            "ordered": ordered,
            "marker": draw(st.sampled_from([".", ")"] if ordered else ["-", "*", "+"])),
            "number": draw(st.integers(1, 12)) if ordered else 1,
            "depth": depth,
        }
        if draw(st.booleans()):
            attrs["checked"] = draw(st.booleans())
            blocks.append(_with_id(Block(None, "task", draw(st.one_of(st.just(""), lines(2))), attrs)))
        else:
            blocks.append(_with_id(Block(None, "list_item", draw(lines(2)), attrs)))
    return blocks


@st.composite
def table(draw) -> list[Block]:
    columns = draw(st.integers(1, 3))
    # A bare pipe would split the cell; an escaped one stays inside it.
    cell = st.one_of(line(2).map(lambda text: text.replace("|", "\\|")), st.just(""))

    def row() -> str:
        return "| " + " | ".join(draw(cell) for _ in range(columns)) + " |"

    delimiter = "| " + " | ".join(draw(st.sampled_from(["---", ":--", ":-:", "--:"])) for _ in range(columns)) + " |"
    rows = [_with_id(Block(None, "table_row", row(), {"header": True, "delimiter": delimiter}))]
    rows += [_with_id(Block(None, "table_row", row())) for _ in range(draw(st.integers(0, 3)))]
    return rows


@st.composite
def single_block(draw) -> list[Block]:
    kind = draw(st.sampled_from(["heading", "paragraph", "quote", "callout", "code", "divider"]))
    if kind == "heading":
        block = Block(None, "heading", draw(line()), {"level": draw(st.integers(1, 6))})
    elif kind == "paragraph":
        block = Block(None, "paragraph", draw(lines()))
    elif kind == "quote":
        block = Block(None, "quote", draw(quote_text()))
    elif kind == "callout":
        attrs = {
            "kind": draw(st.sampled_from(["note", "warning", "tip"])),
            "fold": draw(st.sampled_from(["", "+", "-"])),
            "title": draw(st.one_of(st.just(""), line(3))),
        }
        block = Block(None, "callout", draw(st.one_of(st.just(""), quote_text())), attrs)
    elif kind == "code":
        body = draw(st.lists(st.one_of(line(), st.just("```"), st.just("    indented();"), st.just("")), max_size=4))
        attrs = {"language": draw(st.sampled_from(["", "python", "js"])), "fence": draw(st.sampled_from(["```", "~~~"]))}
        block = Block(None, "code", "\n".join(body).strip("\n"), attrs)
    else:
        block = Block(None, "divider", "", {"marker": draw(st.sampled_from(["---", "***", "___"]))})
    return [_with_id(block)]


@st.composite
def note_blocks(draw, max_groups: int = 8) -> list[Block]:
    groups = draw(st.lists(st.one_of(single_block(), list_run(), table()), max_size=max_groups))
    return [block for group in groups for block in group]


_SCALARS = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
    st.integers(-10**6, 10**6),
    st.booleans(),
    st.sampled_from(["yes", "null", "2024-01-01", "1.5", "a: b", "- x"]),
)


@st.composite
def note_meta(draw) -> NoteMeta:
    properties = draw(
        st.dictionaries(st.sampled_from(["status", "Person.email", "due", "tags", "score"]),
                        st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3)), max_size=3)
    )
    title = draw(st.one_of(st.just(""), line(4)))
    types = tuple(draw(st.lists(st.sampled_from(["Project", "Person", "Meeting"]), max_size=2, unique=True)))
    return NoteMeta(title, types, properties)
