"""The ledger's caps on rows about links, and the summary (pure)."""

from __future__ import annotations

import pytest

from fastpad.importers import ledger as lg
from fastpad.importers.ledger import LedgerRow, LinkProblem, LinkRows, Tally


def problems(n: int) -> list[LinkProblem]:
    return [LinkProblem(f"target {i}", lg.UNRESOLVED_WIKILINK) for i in range(n)]


def test_a_note_lists_at_most_100_targets_then_one_row_for_the_rest() -> None:
    rows = LinkRows().rows("Big.md", "01J00000000000000000000000", problems(130))
    assert len(rows) == 101
    assert {r.kind for r in rows[:100]} == {lg.LINK} and rows[99].target == "target 99"
    assert rows[100].kind == lg.LINKS_MORE and rows[100].count == 30
    assert "30 more links" in rows[100].detail


def test_past_10000_link_rows_a_note_is_left_out_whole_and_one_row_says_so() -> None:
    links = LinkRows()
    listed = [links.rows(f"n{i}.md", None, problems(100)) for i in range(100)]
    assert links.listed == 10_000 and all(len(r) == 100 for r in listed)
    assert links.rows("late.md", None, problems(7)) == []
    assert links.rows("later.md", None, problems(150)) == []
    final = links.final_row()
    assert final is not None and final.count == 157 and final.kind == lg.LINKS_LEFT_OUT
    assert "157 link problems from 2 notes were left out" in final.detail
    assert LinkRows().final_row() is None


def test_the_summary_names_how_many_notes_did_not_come() -> None:
    tally = Tally()
    for status in [lg.IMPORTED] * 4810 + [lg.UNCHANGED] * 2:
        tally.add(LedgerRow("n.md", "note", status))
    for _ in range(191):
        tally.add(LedgerRow("x.md", "note", lg.SKIPPED, lg.PARSE_ERROR))
    tally.add(LedgerRow("x.png", "attachment", lg.STORED))
    tally.add(LedgerRow("x.md", lg.LINK, lg.SKIPPED, lg.UNRESOLVED_WIKILINK, target="y"))
    summary = tally.summary(LinkRows())
    assert summary["text"] == ("imported 4,812 of 5,003 notes (2 of them already there from an earlier attempt), "
                               "and here is each of the 191 we did not")
    assert summary["notes"] == {"total": 5003, "imported": 4810, "unchanged": 2, "not_imported": 191}
    assert summary["reasons"] == {"parse_error": 191, "unresolved_wikilink": 1}
    assert summary["items"]["total"] == 5004 and summary["ledger_rows"] == 5005


def test_a_skip_needs_a_reason_from_the_list() -> None:
    with pytest.raises(ValueError):
        LedgerRow("x", "note", lg.SKIPPED, "felt_like_it")
