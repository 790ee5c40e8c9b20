"""cross-note-copy-denied: an injected copy is refused; a cited summary with a short quote passes."""

from __future__ import annotations

import pytest

from fastpad.errors import CrossNoteCopyDenied
from fastpad.review.apply import apply_prose
from fastpad.review.copy_guard import (
    RUN_WORDS,
    SHARE_MIN_WORDS,
    NewText,
    ReadText,
    check_copy,
    guard_copy,
    new_texts_from_diffs,
    tokens,
)

from .helpers import handles, note, resolved

NOTE_A = "01JB2K7Q9XN4M8YV3TD0FZ5ERA"  # the note the agent read (private salary review, say)
NOTE_B = "01JB2K7Q9XN4M8YV3TD0FZ5ERB"  # the note the proposal targets
BLOCK_A1 = "01JB2K7Q9XN4M8YV3TD0FZ5ER1"
BLOCK_A2 = "01JB2K7Q9XN4M8YV3TD0FZ5ER2"

A1 = (
    "The compensation committee met on the fourth of March and agreed that the engineering "
    "salary bands would rise by six percent from April, with the staff engineer band capped "
    "at one hundred and eighty thousand pending the board's review of the hiring plan."
)
A2 = (
    "Retention grants for the three people named in the appendix are approved, but they must "
    "not be discussed outside the committee until the letters have been signed and returned."
)
READ = [ReadText(NOTE_A, BLOCK_A1, A1), ReadText(NOTE_A, BLOCK_A2, A2)]


def inserted(*texts: str) -> list[NewText]:
    return [NewText(None, text, f"ops[{i}].text") for i, text in enumerate(texts)]


def test_injected_append_of_note_a_to_note_b_is_refused():
    with pytest.raises(CrossNoteCopyDenied) as denied:
        guard_copy(inserted(A1, A2), READ, note_id=NOTE_B)
    error = denied.value
    assert error.slug == "cross-note-copy-denied" and error.status == 422
    assert error.extra["rule"] == "run" and error.extra["source_note_ids"] == [NOTE_A]
    assert error.extra["longest_run_words"] >= len(tokens(A1)) - 1
    assert error.field_errors[0].field == "ops[0].text"
    assert "source_block_ids" in error.detail


def test_reformatting_does_not_hide_a_copy():
    disguised = "**" + A1.upper().replace(",", " —").replace(" the ", "\n the ") + "**"
    assert check_copy(inserted(disguised), READ, note_id=NOTE_B).rule == "run"


def test_a_copy_cut_into_short_pieces_and_reordered_is_refused_by_share():
    words = A1.split() + A2.split()
    pieces = [" ".join(words[i : i + RUN_WORDS - 2]) for i in range(0, len(words), RUN_WORDS - 2)]
    pieces.reverse()
    mixed = []
    for i, piece in enumerate(pieces):  # interleaved with the agent's own filler
        mixed.append(piece)
        mixed.append(f"Item {i} follows here.")
    verdict = check_copy(inserted(*mixed), READ, note_id=NOTE_B)
    assert verdict.longest_run_words < RUN_WORDS
    assert verdict.denied and verdict.rule == "share" and verdict.copied_words >= SHARE_MIN_WORDS


def test_a_cited_summary_with_a_short_quote_passes():
    summary = (
        "Summary of the committee's March meeting: engineering pay goes up from April, and the top "
        "band stays limited until the board looks at hiring again. The committee said the bands "
        "\"would rise by six percent from April\". Retention grants were approved but are confidential "
        "for now (see the linked block, https://fastpad.example/notes/01JB2K7Q9XN4M8YV3TD0FZ5ERA#block-1)."
    )
    verdict = guard_copy(inserted(summary), READ, note_id=NOTE_B)
    assert not verdict.denied
    assert 0 < verdict.copied_words < SHARE_MIN_WORDS and verdict.longest_run_words < RUN_WORDS


def test_eleven_words_pass_and_twelve_do_not():
    words = A1.split()
    assert not check_copy(inserted("He wrote: " + " ".join(words[:RUN_WORDS - 1]) + "."), READ, note_id=NOTE_B).denied
    assert check_copy(inserted("He wrote: " + " ".join(words[:RUN_WORDS]) + "."), READ, note_id=NOTE_B).denied


@pytest.mark.parametrize("first, second", [(7, 7), (7, 6), (6, 6)])
def test_a_run_split_across_consecutive_blocks_is_one_run(first, second):
    words = A1.split()
    assert check_copy(inserted(" ".join(words[:first + second])), READ, note_id=NOTE_B).denied  # one block
    split = inserted(" ".join(words[:first]), " ".join(words[first:first + second]))
    verdict = check_copy(split, READ, note_id=NOTE_B)
    assert verdict.denied and verdict.rule == "run" and verdict.longest_run_words == first + second
    assert verdict.field == "ops[0].text"  # the op the run begins in


def test_a_split_run_with_the_agents_own_words_between_passes():
    words = A1.split()
    split = inserted(" ".join(words[:7]), "My own words in between.", " ".join(words[7:14]))
    assert check_copy(split, READ, note_id=NOTE_B).longest_run_words == 7


def test_a_copy_split_over_consecutive_proposed_blocks_is_refused_end_to_end():
    doc_b = note("Team notes.", "Next steps.")
    h = handles(doc_b, NOTE_B)
    words = A1.split()
    result = apply_prose(doc_b, resolved(doc_b, NOTE_B, [
        {"op": "insert_after", "handle": h[1], "text": " ".join(words[:7])},
        {"op": "insert_after", "handle": h[1], "text": " ".join(words[7:13])},
    ]))
    texts = [diff.after.text for diff in result.diffs if diff.after is not None and diff.before is None]
    assert len(texts) == 2 and " ".join(texts) in " ".join(words)  # the proposal's order is the note's
    with pytest.raises(CrossNoteCopyDenied) as denied:
        guard_copy(new_texts_from_diffs(result.diffs), READ, note_id=NOTE_B,
                   own_texts=[block.text for block in result.before])
    assert denied.value.extra["longest_run_words"] == 13


def test_reading_the_target_note_itself_is_not_cross_note():
    assert not check_copy(inserted(A1), [ReadText(NOTE_B, BLOCK_A1, A1)], note_id=NOTE_B).denied


def test_text_the_target_note_already_holds_is_not_counted():
    # B already quotes A1 (a person put it there); an agent moving it around copies nothing new
    assert not check_copy(inserted(A1), READ, note_id=NOTE_B, own_texts=[A1]).denied


def test_only_the_words_a_replace_adds_count():
    before = A1  # the block already said this
    after = A1 + " The agent adds one new sentence of its own here."
    assert not check_copy([NewText(before, after)], READ, note_id=NOTE_B).denied
    # ...but appending note A's other paragraph to it is a copy
    assert check_copy([NewText("Intro.", "Intro. " + A2)], READ, note_id=NOTE_B).denied


def test_common_phrases_shared_by_chance_pass():
    read = [ReadText(NOTE_A, None, "At the end of the day we shipped it, and on the other hand it was late.")]
    text = "At the end of the day the draft is fine; on the other hand it was late to start."
    assert not check_copy(inserted(text), read, note_id=NOTE_B).denied


def test_end_to_end_through_a_real_proposal():
    doc_b = note("Team notes.", "Next steps.")
    h = handles(doc_b, NOTE_B)
    result = apply_prose(doc_b, resolved(doc_b, NOTE_B, [
        {"op": "insert_after", "handle": h[1], "text": A1},  # "append note A to note B"
    ]))
    own = [block.text for block in result.before]
    with pytest.raises(CrossNoteCopyDenied):
        guard_copy(new_texts_from_diffs(result.diffs), READ, note_id=NOTE_B, own_texts=own)

    cited = apply_prose(doc_b, resolved(doc_b, NOTE_B, [
        {"op": "insert_after", "handle": h[1], "text": "Pay bands rise in April; see the committee note.",
         "source_block_ids": [BLOCK_A1]},
    ]))
    assert not guard_copy(new_texts_from_diffs(cited.diffs), READ, note_id=NOTE_B, own_texts=own).denied
    assert cited.diffs[0].source_block_ids == (BLOCK_A1,)


def test_tokens_treat_urls_as_one_and_split_unspaced_scripts():
    assert tokens("See https://a.example/x/y/z?q=1, then GO.") == ["see", "https://a.example/x/y/z?q=1", "then", "go"]
    assert tokens("東京へ行く") == ["東", "京", "へ", "行", "く"]


def _copied(pieces: list[int], filler: int) -> tuple[list[ReadText], list[NewText]]:
    """A source of distinct words, and a proposal holding ``pieces`` (word counts, each under the
    run rule's twelve) copied from far-apart places of it, then ``filler`` words of its own."""
    source = " ".join(f"s{i}" for i in range(40 * len(pieces)))
    copied = [" ".join(f"s{40 * n + i}" for i in range(size)) for n, size in enumerate(pieces)]
    own = [f"f{i}" for i in range(filler)]
    text = " ".join(piece + " " + own.pop() if own else piece for piece in copied) + " " + " ".join(own)
    return [ReadText(NOTE_A, BLOCK_A1, source)], inserted(text.strip())


@pytest.mark.parametrize(("pieces", "filler", "denied"), [
    ([8, 8, 8], 56, True),  # 24 copied of 80 new words: exactly 30 %, exactly 24 — refused
    ([8, 8, 8], 57, False),  # 24 of 81: under 30 %
    ([8, 8, 7], 3, False),  # 23 copied, nearly all the new words: under 24 whatever the share
    ([11, 11, 11], 77, True),  # 33 of 110: 30 % again, with longer pieces
])
def test_the_share_rule_holds_at_exactly_24_copied_words_and_exactly_30_percent(pieces, filler, denied):
    read, proposal = _copied(pieces, filler)
    verdict = check_copy(proposal, read, note_id=NOTE_B)
    assert (verdict.copied_words, verdict.new_words) == (sum(pieces), sum(pieces) + filler)
    assert verdict.longest_run_words < RUN_WORDS
    assert verdict.denied is denied and verdict.rule == ("share" if denied else None)
