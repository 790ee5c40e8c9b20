"""The canonical Markdown codec: byte-identical round trips and typed refusals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from fastpad.errors import ValidationFailed
from fastpad.notes.blocks import Block, NoteMeta, table_cells
from fastpad.notes.canonical_reader import read_canonical
from fastpad.notes.markdown import canonical_form, parse_markdown, serialize_markdown
from fastpad.notes.markdown_reader import read_markdown
from tests.notes.strategies import note_blocks, note_meta

SPEC_EXAMPLE = """\
---
title: Retrieval design
types: [Project]
status: active
---

# Retrieval design {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}

Four arms, fused by weighted RRF. {#01JB2K7Q9XN4M8YV3TD0FZ5ESX}

- lexical {#01JB2K7Q9XN4M8YV3TD0FZ5ETY}
- dense {#01JB2K7Q9XN4M8YV3TD0FZ5EVZ}
"""


@settings(max_examples=300, deadline=None)
@given(meta=note_meta(), blocks=note_blocks())
def test_canonical_text_round_trips_byte_for_byte(meta: NoteMeta, blocks: list[Block]) -> None:
    text = serialize_markdown(meta, blocks)
    parsed = parse_markdown(text)
    assert serialize_markdown(parsed.meta, parsed.blocks) == text
    assert parsed.blocks == [canonical_form(block) for block in blocks]
    assert parsed.meta == meta


def test_spec_example_is_canonical() -> None:
    parsed = parse_markdown(SPEC_EXAMPLE)
    assert parsed.meta == NoteMeta("Retrieval design", ("Project",), {"status": "active"})
    assert [(b.type, b.text) for b in parsed.blocks] == [
        ("heading", "Retrieval design"),
        ("paragraph", "Four arms, fused by weighted RRF."),
        ("list_item", "lexical"),
        ("list_item", "dense"),
    ]
    assert serialize_markdown(parsed.meta, parsed.blocks) == SPEC_EXAMPLE


def test_hand_written_markdown_keeps_what_was_typed() -> None:
    text = "Some _emphasis_ and __strong__ with a [ref][1]\nand a second line  \nhard-broken\n\n[1]: https://example.com\n"
    blocks = parse_markdown(text).blocks
    assert blocks[0].text == "Some _emphasis_ and __strong__ with a [ref][1]\nand a second line  \nhard-broken"
    assert blocks[1].text == "[1]: https://example.com"  # a reference definition is never consumed


def test_code_fence_carries_anchor_on_info_string() -> None:
    block = Block("01JB2K7Q9XN4M8YV3TD0FZ5ERW", "code", "print('x')", {"language": "python"})
    text = serialize_markdown(NoteMeta(), [block])
    assert text == "```python {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\nprint('x')\n```\n"
    assert parse_markdown(text).blocks == [block]


def test_table_row_carries_anchor_in_last_cell_and_keeps_escaped_pipe() -> None:
    text = (
        "| name | value {#01JB2K7Q9XN4M8YV3TD0FZ5ERW} |\n| --- | --- |\n"
        "| a \\| b | c {#01JB2K7Q9XN4M8YV3TD0FZ5ESX} |\n"
    )
    header, row = parse_markdown(text).blocks
    assert header.attrs == {"header": True, "delimiter": "| --- | --- |"}
    assert row.text == "| a \\| b | c |"
    assert table_cells(row.text) == ["a \\| b", "c"]
    assert serialize_markdown(NoteMeta(), [header, row]) == text


def test_obsidian_foldable_callout_round_trips() -> None:
    text = "> [!warning]- Mind the gap\n> first line\n>\n> second {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\n"
    (block,) = parse_markdown(text).blocks
    assert block.type == "callout"
    assert block.attrs == {"kind": "warning", "fold": "-", "title": "Mind the gap"}
    assert block.text == "first line\n\nsecond"
    assert serialize_markdown(NoteMeta(), [block]) == text


def test_divider_with_anchor_reads_back_as_divider() -> None:
    (block,) = parse_markdown("--- {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\n").blocks
    assert block.type == "divider"


def test_unanchored_blocks_are_new_and_joined_anchors_keep_the_first() -> None:
    text = "fresh paragraph\n\njoined {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\nmore text {#01JB2K7Q9XN4M8YV3TD0FZ5ESX}\n"
    fresh, joined = parse_markdown(text).blocks
    assert fresh.id is None
    assert joined.id == "01JB2K7Q9XN4M8YV3TD0FZ5ERW"
    assert joined.text == "joined\nmore text"


def _refusal(text: str) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as caught:
        parse_markdown(text)
    return caught.value


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: [unclosed\n---\n\nbody\n",
        "---\n- a list\n- not a mapping\n---\n",
        "---\ntitle: fine\n",
        "---\ntitle: {a: 1}\n---\n",
        "---\ntypes: [1, 2]\n---\n",
    ],
)
def test_malformed_frontmatter_is_a_typed_error(text: str) -> None:
    error = _refusal(text)
    assert error.field_errors[0].code == "malformed_frontmatter"
    assert error.status == 422


@pytest.mark.parametrize(
    "anchor", ["01JB2K7Q9XN4M8YV3TD0FZ5EUZ", "intro", "01JB2K7Q9XN4M8YV3TD0FZ5ER", "81JB2K7Q9XN4M8YV3TD0FZ5ERW"]
)
def test_anchor_that_is_not_a_ulid_is_refused(anchor: str) -> None:
    error = _refusal(f"# Title\n\ntext {{#{anchor}}}\n")
    assert error.field_errors[0].code == "anchor_not_ulid"
    assert error.extra["line"] == 3


def test_two_blocks_claiming_one_anchor_are_refused() -> None:
    error = _refusal("one {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\n\ntwo {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\n")
    assert error.field_errors[0].code == "duplicate_anchor"
    assert "line 1" in error.detail and "line 3" in error.detail


@settings(max_examples=300, deadline=None)
@given(blocks=note_blocks())
def test_fast_reader_takes_all_canonical_text_and_agrees_with_markdown_it(blocks: list[Block]) -> None:
    body = serialize_markdown(NoteMeta(), blocks)
    fast = read_canonical(body, 1)
    assert fast is not None, "canonical text must never fall back to the slow reader"
    general = read_markdown(body, 1)
    assert (fast.blocks, fast.lines) == (general.blocks, general.lines)


@pytest.mark.parametrize(
    "body",
    [
        "para {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\n- lazy item\n",
        "- a {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\n2. two {#01JB2K7Q9XN4M8YV3TD0FZ5ERX}\n",
        "- a {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\nlazy {#01JB2K7Q9XN4M8YV3TD0FZ5ERX}\n",
        "> quote {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\nlazy line\n",
        "Title\n=====\n",
        "text {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\n---\n",
        "| a | b {#01JB2K7Q9XN4M8YV3TD0FZ5ERW} |\n| --- |\n",
        "```py {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\nunclosed\n",
        "    indented code\n",
        "<div>html {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}</div>\n",
        "joined {#01JB2K7Q9XN4M8YV3TD0FZ5ERW} text {#01JB2K7Q9XN4M8YV3TD0FZ5ERX}\n",
        "- a {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\n\n  second paragraph {#01JB2K7Q9XN4M8YV3TD0FZ5ERX}\n",
    ],
)
def test_non_canonical_text_is_left_to_markdown_it(body: str) -> None:
    assert read_canonical(body, 1) is None
    assert parse_markdown(body).blocks == read_markdown(body, 1).blocks


def test_frontmatter_dates_stay_as_written() -> None:
    text = "---\ntitle: Standup\ndue: 2025-01-14\nat: 2025-01-14T09:30:00+01:00\n---\n"
    parsed = parse_markdown(text)
    assert parsed.meta.properties == {"due": "2025-01-14", "at": "2025-01-14T09:30:00+01:00"}
    assert serialize_markdown(parsed.meta, parsed.blocks) == text
