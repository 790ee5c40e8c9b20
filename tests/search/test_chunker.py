"""Chunk boundaries: sections, packing, one block of overlap, unsplittable blocks, the prefix."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastpad.notes.blocks import Block, NoteMeta
from fastpad.search.chunker import DEFAULT_TARGET_CHARS, PREFIX_MAX_CHARS, chunk_note

META = NoteMeta(title="Q3 planning", types=("project", "meeting"))


def block(n: int, block_type: str, text: str, **attrs) -> Block:
    return Block(f"B{n:03d}", block_type, text, attrs)


def para(n: int, size: int, char: str = "x") -> Block:
    return block(n, "paragraph", char * size)


def test_blocks_under_one_heading_are_packed_to_the_target_with_one_block_of_overlap():
    blocks = [block(0, "heading", "Goals", level=2)] + [para(i, 250, chr(ord("a") + i)) for i in range(1, 9)]
    chunks = chunk_note("N", META, blocks, target_chars=800)
    assert [c.block_ids for c in chunks] == [
        ("B001", "B002", "B003"),  # 250*3 + 2 newlines = 752 <= 800
        ("B003", "B004", "B005"),
        ("B005", "B006", "B007"),
        ("B007", "B008"),
    ]
    for before, after in zip(chunks, chunks[1:]):
        assert set(before.block_ids) & set(after.block_ids) == {before.block_ids[-1]}
        assert after.block_ids[0] == before.block_ids[-1]
    assert all(len(c.text) <= 800 for c in chunks)
    # Every body block is in some chunk; the chunk text is its blocks, in order.
    assert {b for c in chunks for b in c.block_ids} == {b.id for b in blocks[1:]}
    assert chunks[0].text == "\n".join(b.text for b in blocks[1:4])


def test_chunks_never_cross_a_heading_and_carry_the_heading_path():
    blocks = [
        para(0, 100, "r"),
        block(1, "heading", "Goals", level=1),
        para(2, 100, "g"),
        block(3, "heading", "Hiring", level=2),
        para(4, 100, "h"),
        block(5, "heading", "Budget", level=2),
        para(6, 100, "b"),
        block(7, "heading", "Risks", level=1),
        para(8, 100, "k"),
    ]
    chunks = chunk_note("N", META, blocks)
    assert [(c.block_ids, c.heading_path) for c in chunks] == [
        (("B000",), ()),
        (("B002",), ("Goals",)),
        (("B004",), ("Goals", "Hiring")),
        (("B006",), ("Goals", "Budget")),
        (("B008",), ("Risks",)),
    ]
    assert "Section: Goals › Budget" in chunks[3].prefix
    assert "Section" not in chunks[0].prefix


def test_a_code_block_is_never_split_even_when_longer_than_the_target():
    code = "\n".join(f"    total += step_{i}(value)  # {i}" for i in range(80))  # ~2,900 chars
    blocks = [para(0, 300), block(1, "code", code, language="python"), para(2, 300), para(3, 300)]
    chunks = chunk_note("N", META, blocks, target_chars=800)
    holding = [c for c in chunks if "B001" in c.block_ids]
    assert len(holding) == 1 and holding[0].block_ids == ("B001",)
    assert code in holding[0].text  # whole, fenced
    assert holding[0].text.startswith("```python\n") and holding[0].text.endswith("\n```")
    # The over-size block is not repeated as overlap; the chunks around it still overlap normally.
    assert [c.block_ids for c in chunks] == [("B000",), ("B001",), ("B002", "B003")]


def test_a_code_block_that_fits_is_kept_whole_inside_a_packed_chunk():
    code = "def f():\n    return 1\n"
    blocks = [para(0, 200), block(1, "code", code, language="py"), para(2, 200)]
    (chunk,) = chunk_note("N", META, blocks)
    assert chunk.block_ids == ("B000", "B001", "B002")
    assert f"```py\n{code}\n```" in chunk.text


def test_table_rows_are_grouped_each_row_whole_and_continuation_chunks_name_the_columns():
    header = block(0, "table_row", "| Region | Revenue | Owner |", header=True, delimiter="| --- | --- | --- |")
    rows = [block(i, "table_row", f"| R{i:02d} | {i},000 | {'n' * 120} |") for i in range(1, 21)]
    chunks = chunk_note("N", META, [header, *rows], target_chars=800)
    assert len(chunks) > 2
    texts = {b.id: b.text for b in [header, *rows]}
    for chunk in chunks:
        lines = chunk.text.split("\n")
        assert lines == [texts[b] for b in chunk.block_ids]  # each row whole, one per line
    assert "Columns" not in chunks[0].prefix  # holds the header row itself
    for chunk in chunks[1:]:
        assert "Columns: Region | Revenue | Owner" in chunk.prefix
    for before, after in zip(chunks, chunks[1:]):
        assert after.block_ids[0] == before.block_ids[-1]


def test_a_table_row_longer_than_the_target_is_its_own_chunk_uncut():
    long_row = block(1, "table_row", "| " + " | ".join("cell " * 40 for _ in range(5)) + " |")
    chunks = chunk_note("N", META, [para(0, 100), long_row, para(2, 100)], target_chars=800)
    assert [c.block_ids for c in chunks] == [("B000",), ("B001",), ("B002",)]
    assert chunks[1].text == long_row.text


def test_the_structural_prefix_holds_title_path_types_entities_and_date_and_is_embedded():
    blocks = [block(0, "heading", "Hiring", level=2), para(1, 50)]
    (chunk,) = chunk_note(
        "N",
        META,
        blocks,
        linked_entities=["Alice Smith", "Acme Corp", "alice smith"],
        updated_at=datetime(2026, 11, 30, 9, 30, tzinfo=timezone.utc),
    )
    assert chunk.prefix.split("\n") == [
        "Title: Q3 planning",
        "Section: Hiring",
        "Types: project, meeting",
        "Entities: Alice Smith, Acme Corp",
        "Date: 2026-11-30",
    ]
    assert chunk.embed_text == chunk.prefix + "\n\n" + chunk.text
    assert chunk.note_id == "N" and chunk.heading_path == ("Hiring",)


def test_the_prefix_is_bounded_and_never_drops_the_title():
    entities = [f"Entity number {i} with a long name" for i in range(50)]
    meta = NoteMeta(title="T" * 40, types=tuple(f"type{i}" for i in range(40)))
    (chunk,) = chunk_note("N", meta, [para(0, 10)], linked_entities=entities, updated_at="2026-01-02")
    assert len(chunk.prefix) <= PREFIX_MAX_CHARS
    assert chunk.prefix.startswith("Title: " + "T" * 40)
    assert "(+42 more)" in chunk.prefix or "…" in chunk.prefix


def test_dividers_and_empty_blocks_are_skipped_and_a_leaf_heading_still_becomes_a_chunk():
    blocks = [
        block(0, "heading", "Parent", level=1),
        block(1, "heading", "Empty child", level=2),
        block(2, "divider", ""),
        block(3, "paragraph", "   "),
        block(4, "heading", "Full", level=2),
        block(5, "paragraph", "text"),
    ]
    chunks = chunk_note("N", META, blocks)
    # "Parent" has a child heading, so no chunk of its own; "Empty child" is a leaf.
    assert [(c.block_ids, c.heading_path, c.text) for c in chunks] == [
        (("B001",), ("Parent", "Empty child"), "Empty child"),
        (("B005",), ("Parent", "Full"), "text"),
    ]


def test_list_items_tasks_quotes_and_callouts_keep_their_markers():
    blocks = [
        block(0, "list_item", "one", depth=0),
        block(1, "list_item", "nested", depth=1),
        block(2, "task", "ship it", checked=True),
        block(3, "list_item", "first", ordered=True, number=3, marker="."),
        block(4, "quote", "said\nthis"),
        block(5, "callout", "mind the gap", kind="warning", title="Careful"),
    ]
    (chunk,) = chunk_note("N", META, blocks)
    assert chunk.text.split("\n") == [
        "- one",
        "  - nested",
        "- [x] ship it",
        "3. first",
        "> said",
        "> this",
        "[!warning] Careful",
        "mind the gap",
    ]


def test_chunk_ids_are_stable_and_distinct_and_the_digest_follows_the_embedded_text():
    blocks = [para(i, 300) for i in range(6)]
    first = chunk_note("N", META, blocks)
    again = chunk_note("N", META, blocks)
    assert [c.id for c in first] == [c.id for c in again]
    assert len({c.id for c in first}) == len(first)
    retitled = chunk_note("N", NoteMeta(title="Other"), blocks)
    assert [c.id for c in retitled] == [c.id for c in first]  # anchors unchanged
    assert [c.digest for c in retitled] != [c.digest for c in first]  # re-embed: prefix changed


def test_blocks_without_ids_are_refused_and_the_default_target_is_800():
    with pytest.raises(ValueError):
        chunk_note("N", META, [Block(None, "paragraph", "x")])
    assert DEFAULT_TARGET_CHARS == 800
    assert chunk_note("N", META, []) == []


KINDS = ["paragraph", "code", "table_row", "list_item", "quote", "heading", "divider"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 1200), st.integers(1, 3)), max_size=40),
    st.integers(100, 1000),
)
def test_invariants_on_arbitrary_notes(spec, target):
    blocks = []
    for n, (kind, size, level) in enumerate(spec):
        text = "" if kind == "divider" else ("w" * size if size else "")
        attrs = {"level": level} if kind == "heading" else {}
        blocks.append(Block(f"B{n:03d}", kind, text, attrs))
    chunks = chunk_note("N", META, blocks, target_chars=target)
    by_id = {b.id: b for b in blocks}
    covered = {b for c in chunks for b in c.block_ids}
    for b in blocks:
        if b.type not in ("heading", "divider") and b.text.strip():
            assert b.id in covered  # nothing indexed is lost
    for c in chunks:
        # Every block is whole: the chunk text contains each block's full text.
        for block_id in c.block_ids:
            assert by_id[block_id].text in c.text
        if len(c.block_ids) > 1:
            assert len(c.text) <= 2 * target + 1  # only an overlap pair can pass the target
    for before, after in zip(chunks, chunks[1:]):
        shared = set(before.block_ids) & set(after.block_ids)
        if before.heading_path != after.heading_path:
            continue
        assert len(shared) <= 1
