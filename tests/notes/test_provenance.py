"""``rewritten``: when a person's edits leave nothing of a block's earlier text."""

from __future__ import annotations

import pytest

from fastpad.notes import Block
from fastpad.notes.provenance import SURVIVING_STRETCH, rewritten

EARLIER = "The launch moves to June; book the venue in Porto before the end of the month."


def paragraph(text: str) -> Block:
    return Block("01HZX5K3Q8Y2B7N4M6V9C1D0EF", "paragraph", text)


@pytest.mark.parametrize(("now", "expected"), [
    (EARLIER.replace("Porto", "Lisbon"), False),                       # a typo fix
    (EARLIER + " Confirmed by the team.", False),                       # a sentence added
    ("We keep May and Lisbon; the team agreed today.", True),           # every sentence replaced
    ("", False),                                                        # emptied: nothing written yet
    (f"Quoted:{EARLIER[20:20 + SURVIVING_STRETCH]}", False),            # a stretch of the agent's text kept
    (f"Quoted:{EARLIER[20:20 + SURVIVING_STRETCH - 1]}", True),         # one character short of one
])
def test_a_rewrite_keeps_no_stretch_of_the_earlier_text(now: str, expected: bool) -> None:
    assert rewritten(paragraph(EARLIER), paragraph(now)) is expected


def test_a_short_text_survives_while_half_of_it_does() -> None:
    assert not rewritten(paragraph("Summry"), paragraph("Summary"))
    assert rewritten(paragraph("Summry"), paragraph("Overview"))
    assert rewritten(paragraph(""), paragraph("Typed into an empty block."))


def test_a_callouts_title_is_part_of_what_was_written() -> None:
    def callout(title: str, text: str) -> Block:
        return Block("01HZX5K3Q8Y2B7N4M6V9C1D0EF", "callout", text, {"kind": "warning", "title": title})

    title = "Wire the deposit to the new account"
    assert not rewritten(callout(title, "Before Friday."), callout(title, "Something else entirely."))
    assert rewritten(callout(title, "Before Friday."), callout("Deposit", "Something else entirely."))
