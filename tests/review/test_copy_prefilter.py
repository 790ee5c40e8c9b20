"""The copy guard's prefilter is exact: dropping the texts it rules out never changes a verdict."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fastpad.review.copy_guard import NewText, ReadText, check_copy, could_share_shingles

from .test_copy_guard import A1, A2, NOTE_A, NOTE_B

FILLER = "we shipped the new plan after lunch and everyone agreed it was fine for now".split()
SOURCES = [A1, A2, "The STAFF engineer band, capped!", " ".join(FILLER),
           "Ünïcödé ＦＵＬＬＷＩＤＴＨ text https://ex.am/ple."]
WORDS = A1.split() + A2.split() + FILLER + ["ＦＵＬＬＷＩＤＴＨ", "https://ex.am/ple", "ünïcödé"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=40), min_size=1, max_size=3),
       st.lists(st.sampled_from(SOURCES), min_size=0, max_size=5))
def test_filtering_never_changes_the_verdict(new_texts: list[list[str]], own: list[str]) -> None:
    changes = [NewText(None, " ".join(words), f"ops[{i}].text") for i, words in enumerate(new_texts)]
    read = [ReadText(NOTE_A, None, text) for text in SOURCES]
    kept_read = [r for r, keep in zip(read, could_share_shingles(changes, [r.text for r in read])) if keep]
    kept_own = [t for t, keep in zip(own, could_share_shingles(changes, own)) if keep]
    assert check_copy(changes, kept_read, note_id=NOTE_B, own_texts=kept_own) == \
        check_copy(changes, read, note_id=NOTE_B, own_texts=own)


def test_it_rules_out_unrelated_text_and_keeps_a_source() -> None:
    changes = [NewText(None, A1[:120])]
    assert could_share_shingles(changes, [A1, A2, "nothing alike"]) == [True, False, False]
    assert could_share_shingles([NewText(None, "four words only here")], [A1]) == [False]
