"""Budgets: whole blocks only, a cursor that resumes exactly, a hint that fits."""

from __future__ import annotations

import random

import pytest

from fastpad.outbound.budget import InvalidCursor, fit_blocks, resume_index
from fastpad.outbound.tokens import count_tokens

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def make_blocks(n: int, seed: int = 1) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    words = "block note token budget cursor anchor agent person review proposal fence data".split()
    blocks = []
    for i in range(n):
        block_id = "01" + "".join(rng.choice(_CROCKFORD) for _ in range(24))
        text = " ".join(rng.choice(words) for _ in range(rng.randint(5, 60)))
        blocks.append((block_id, f"Para {i}: {text} {{#{block_id}}}"))
    return blocks


def walk(blocks, max_tokens, **kwargs):
    pages, cursor = [], None
    while True:
        page = fit_blocks(blocks, max_tokens, cursor, **kwargs)
        pages.append(page)
        if not page.truncated:
            return pages
        cursor = page.next_cursor
        assert len(pages) < 10_000


def test_everything_fits_no_cursor_no_hint() -> None:
    blocks = make_blocks(10)
    page = fit_blocks(blocks)
    assert not page.truncated and page.next_cursor is None and page.hint == ""
    assert page.included_block_ids == tuple(b for b, _ in blocks)
    assert page.text == "\n\n".join(md for _, md in blocks)
    assert page.tokens == count_tokens(page.text)


@pytest.mark.parametrize("max_tokens", [300, 1_000, 5_000])
def test_pages_cover_every_block_once_in_order_within_the_cap(max_tokens: int) -> None:
    blocks = make_blocks(400)
    pages = walk(blocks, max_tokens)
    seen = [block_id for page in pages for block_id in page.included_block_ids]
    assert seen == [b for b, _ in blocks]
    for page in pages:
        assert count_tokens(page.text) + count_tokens(page.hint) <= max_tokens
        # cut only at block boundaries: the page is exactly its blocks, joined
        by_id = dict(blocks)
        assert page.text == "\n\n".join(by_id[b] for b in page.included_block_ids)
    assert all(p.truncated for p in pages[:-1]) and not pages[-1].truncated


def test_truncated_hint_is_one_line_with_cursor_and_how_to_narrow() -> None:
    page = fit_blocks(make_blocks(200), 1_000, narrow="pass fewer ids or digest: true")
    assert page.truncated and "\n" not in page.hint
    assert f'cursor="{page.next_cursor}"' in page.hint
    assert "pass fewer ids or digest: true" in page.hint
    assert page.hint.startswith("Truncated at a block boundary: blocks 1–")


def test_cap_is_dense_enough() -> None:
    page = fit_blocks(make_blocks(400), 5_000)
    assert page.tokens + count_tokens(page.hint) > 4_500    # not wasting a tenth of the window


def test_a_block_too_large_for_any_result_is_left_out_visibly() -> None:
    blocks = make_blocks(20)
    huge_id = blocks[5][0]
    blocks[5] = (huge_id, "word " * 3_000)
    pages = walk(blocks, 1_000)
    assert huge_id not in [b for p in pages for b in p.included_block_ids]
    (page,) = [p for p in pages if huge_id in p.omitted_block_ids]
    assert f"[block {huge_id} omitted: 3,001 tokens, more than one result can hold]" in page.text
    assert huge_id in page.hint
    others = [b for p in pages for b in p.included_block_ids]
    assert others == [b for b, _ in blocks if b != huge_id]


def test_cursor_resumes_after_the_note_changed() -> None:
    blocks = make_blocks(100)
    first = fit_blocks(blocks, 500)
    next_id = blocks[len(first.included_block_ids)][0]
    # blocks inserted before the cursor: resume at the same block id
    shifted = make_blocks(3, seed=99) + blocks
    assert fit_blocks(shifted, 500, first.next_cursor).included_block_ids[0] == next_id
    # the next block was deleted: resume right after the last block sent
    without = [b for b in blocks if b[0] != next_id]
    after = blocks[len(first.included_block_ids) + 1][0]
    assert fit_blocks(without, 500, first.next_cursor).included_block_ids[0] == after
    # both gone: refused
    last_sent = first.included_block_ids[-1]
    with pytest.raises(InvalidCursor):
        fit_blocks([b for b in blocks if b[0] not in (next_id, last_sent)], 500, first.next_cursor)


def test_cursor_is_bound_to_its_scope_and_validated() -> None:
    blocks = make_blocks(100)
    page = fit_blocks(blocks, 500, scope="fetch:note-a")
    with pytest.raises(InvalidCursor):
        fit_blocks(blocks, 500, page.next_cursor, scope="fetch:note-b")
    assert fit_blocks(blocks, 500, page.next_cursor, scope="fetch:note-a").included_block_ids
    for bad in ["", "garbage", "c1.", "c1.x.y.z.w", "c1.00000000.notanumber.a.b"]:
        with pytest.raises(InvalidCursor):
            resume_index(bad, [b for b, _ in blocks])


def test_transform_applies_to_what_is_counted_and_only_to_blocks_looked_at() -> None:
    blocks = make_blocks(500)
    seen = []

    def shout(block_id: str, markdown: str) -> str:
        seen.append(block_id)
        return markdown.upper()

    page = fit_blocks(blocks, 1_000, transform=shout)
    assert page.text == page.text.upper()
    assert len(seen) < 100


def test_too_small_a_budget_is_refused() -> None:
    with pytest.raises(ValueError):
        fit_blocks(make_blocks(3), 50)


def test_empty_input() -> None:
    page = fit_blocks([])
    assert page.text == "" and not page.truncated and page.included_block_ids == ()
