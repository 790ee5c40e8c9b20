"""Rank fusion: by position only, weighted per kind of query, every hit explained."""

from __future__ import annotations

import pytest

from fastpad.search.fusion import (
    DENSE,
    EVERY_WORD,
    GRAPH,
    IN_ORDER,
    LEXICAL,
    QUERY_WEIGHTS,
    RECENCY,
    RRF_K,
    Fusion,
    Penalty,
    RankedList,
    StrategyHit,
    classify_query,
    fuse,
)
from fastpad.search.hybrid import hybrid_search


def ranked(strategy: str, *note_ids: str, scores=None, **extra) -> RankedList:
    scores = scores or [float(len(note_ids) - i) for i in range(len(note_ids))]
    return RankedList(strategy, tuple(StrategyHit(n, s, **extra.get(n, {})) for n, s in zip(note_ids, scores)))


def test_fusion_is_by_rank_a_list_with_huge_raw_scores_gets_no_extra_weight():
    small = ranked(LEXICAL, "a", "b", "c", scores=[0.003, 0.002, 0.001])
    huge = ranked(DENSE, "c", "b", "a", scores=[9e12, 8e12, 7e12])
    hits = fuse([small, huge], {LEXICAL: 1.0, DENSE: 1.0})
    by_note = {h.note_id: h.score for h in hits}
    # a: ranks 1 and 3; c: ranks 3 and 1 → identical fused scores, whatever the raw scales.
    assert by_note["a"] == pytest.approx(by_note["c"])
    assert by_note["a"] == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + 3))
    assert by_note["b"] == pytest.approx(2 / (RRF_K + 2))
    # Rescaling a list's scores changes nothing.
    rescaled = ranked(DENSE, "c", "b", "a", scores=[3.0, 2.0, 1.0])
    assert [(h.note_id, h.score) for h in fuse([small, rescaled], {LEXICAL: 1, DENSE: 1})] == [(h.note_id, h.score) for h in hits]


def test_weights_scale_a_strategys_share_and_zero_weight_drops_it():
    lexical = ranked(LEXICAL, "x", "y")
    dense = ranked(DENSE, "y", "x")
    assert fuse([lexical, dense], {LEXICAL: 2.0, DENSE: 1.0})[0].note_id == "x"
    assert fuse([lexical, dense], {LEXICAL: 1.0, DENSE: 2.0})[0].note_id == "y"
    only_dense = fuse([lexical, dense], {LEXICAL: 0.0, DENSE: 1.0})
    assert all(c.strategy == DENSE for h in only_dense for c in h.explanation.contributions)


def test_agreement_beats_a_single_first_place_and_nothing_is_thresholded():
    lists = [ranked(LEXICAL, "solo", "both"), ranked(DENSE, "other", "both"), ranked(GRAPH, *[f"g{i}" for i in range(200)])]
    hits = fuse(lists, {LEXICAL: 1, DENSE: 1, GRAPH: 1})
    assert hits[0].note_id == "both"
    # Every document of every list is returned, however tiny its fused score: cut by rank only.
    assert len(hits) == 3 + 200
    assert min(h.score for h in hits) < 0.005
    assert len(fuse(lists, {LEXICAL: 1, DENSE: 1, GRAPH: 1}, limit=5)) == 5
    assert [h.rank for h in hits[:3]] == [1, 2, 3]


def test_every_hit_explains_itself():
    lexical = ranked(LEXICAL, "n1", "n2", scores=[-7.5, -3.1], n1={"block_ids": ("b1",), "matched_terms": ("AMPK", "1,000"), "snippet": "…AMPK…"})
    dense = ranked(DENSE, "n2", "n1", scores=[0.82, 0.55], n1={"block_ids": ("b9", "b1")})
    graph = ranked(GRAPH, "n3", "n1", scores=[1.0, 0.5], n1={"graph_path": ("n2", "mentions", "n1")})
    hits = fuse([lexical, dense, graph], QUERY_WEIGHTS["keywords"], query_kind="keywords", superseded_by={"n1": "n7"}, penalties={"n2": [Penalty("stale", 0.9)]})
    n1 = next(h for h in hits if h.note_id == "n1")
    explanation = n1.explanation
    assert explanation.query_kind == "keywords"
    assert {(c.strategy, c.rank, c.score) for c in explanation.contributions} == {(LEXICAL, 1, -7.5), (DENSE, 2, 0.55), (GRAPH, 2, 0.5)}
    lex = next(c for c in explanation.contributions if c.strategy == LEXICAL)
    assert lex.weight == QUERY_WEIGHTS["keywords"][LEXICAL] and lex.rrf == pytest.approx(lex.weight / (RRF_K + 1))
    assert explanation.matched_terms == ("AMPK", "1,000")
    assert explanation.graph_path == ("n2", "mentions", "n1")
    assert explanation.superseded_by == "n7"
    assert [p.reason for p in explanation.penalties] == ["superseded by n7"]
    assert n1.score == pytest.approx(sum(c.rrf for c in explanation.contributions) * 0.5)
    assert n1.block_ids[:2] == ("b1", "b9") and n1.snippet == "…AMPK…"
    n2 = next(h for h in hits if h.note_id == "n2")
    assert n2.explanation.penalties == (Penalty("stale", 0.9),) and n2.explanation.superseded_by is None
    d = n1.to_dict()
    assert set(d["explanation"]) == {"query_kind", "contributions", "matched_terms", "graph_path", "penalties", "superseded_by", "title_match",
                                "holds_query"}


def test_a_superseded_note_is_demoted_below_its_equal_and_names_its_successor():
    lists = [ranked(LEXICAL, "old", "new"), ranked(DENSE, "new", "old")]
    hits = fuse(lists, {LEXICAL: 1, DENSE: 1}, superseded_by={"old": "new"})
    assert [h.note_id for h in hits] == ["new", "old"]
    assert hits[1].explanation.superseded_by == "new"


def test_duplicates_within_a_list_count_once_at_their_best_position_and_order_is_deterministic():
    lexical = RankedList(LEXICAL, (StrategyHit("a", 3, ("b1",)), StrategyHit("b", 2), StrategyHit("a", 1, ("b2",))))
    (a, b) = fuse([lexical], {LEXICAL: 1})
    assert (a.note_id, a.block_ids, a.explanation.contributions[0].rank) == ("a", ("b1", "b2"), 1)
    assert b.explanation.contributions[0].rank == 2
    tie = fuse([ranked(LEXICAL, "z"), ranked(DENSE, "y")], {LEXICAL: 1, DENSE: 1})
    assert [h.note_id for h in tie] == ["y", "z"]  # equal in every way: by id


@pytest.mark.parametrize(
    "text, kind",
    [
        ('"exact phrase" here', "phrase"),
        ("“curly quoted” words", "phrase"),
        ("How do I rotate the API keys", "sentence"),
        ("rotate keys?", "sentence"),
        ("what changed in the budget", "sentence"),
        ("notes about the quarterly planning meeting with finance", "sentence"),
        ("Alice Smith", "name"),
        ("AMPK", "name"),
        ("Jean-Luc Picard", "name"),
        ("O'Neil", "name"),
        ("rotate keys", "keywords"),
        ("Alice budget", "keywords"),
        ("Alice Bob Carol Dave", "keywords"),
        ("What Happened", "keywords"),
        ("1,000 (AMPK)", "keywords"),
        ("", "keywords"),
        ('unbalanced "quote', "keywords"),
    ],
)
def test_classifier_decisions(text, kind):
    assert classify_query(text) == kind


def test_weights_lean_as_documented():
    w = QUERY_WEIGHTS
    assert max(w["phrase"], key=w["phrase"].get) == LEXICAL
    assert max(w["name"], key=w["name"].get) == GRAPH
    # Unquoted text does not say which retrieval arm it is for: they weigh the same.
    assert all(w[kind][LEXICAL] == w[kind][DENSE] for kind in ("sentence", "name", "keywords"))
    assert all(v > 0 for row in w.values() for v in row.values())


class Fixed:
    def __init__(self, name: str, *note_ids: str, fail: bool = False):
        self.name, self.note_ids, self.fail = name, note_ids, fail
        self.seen = None

    def search(self, request):
        self.seen = request
        if self.fail:
            raise RuntimeError("index offline")
        return ranked(self.name, *self.note_ids)


def test_hybrid_search_without_an_embedding_provider_runs_the_others_and_says_so():
    lexical, graph, recency = Fixed(LEXICAL, "a", "b"), Fixed(GRAPH, "c"), Fixed(RECENCY, "b")
    results = hybrid_search("Alice Smith", {LEXICAL: lexical, DENSE: None, GRAPH: graph, RECENCY: recency}, workspace_id="w")
    assert results.unavailable == {DENSE: "no embedding provider configured"}
    assert results.query_kind == "name" and results.weights == QUERY_WEIGHTS["name"]
    assert {h.note_id for h in results.hits} == {"a", "b", "c"}
    # Graph was handed what lexical found (dense had nothing) as seeds.
    assert [s.strategy for s in graph.seen.seeds] == [LEXICAL]
    assert graph.seen.workspace_id == "w"
    assert set(results.timings_ms) == {LEXICAL, GRAPH, RECENCY, "fusion"}
    assert results.to_dict()["unavailable"] == {DENSE: "no embedding provider configured"}


def test_a_failing_strategy_is_left_out_and_named_and_supersession_is_looked_up():
    results = hybrid_search(
        "budget",
        {LEXICAL: Fixed(LEXICAL, "a", "b"), DENSE: Fixed(DENSE, fail=True)},
        superseded_by=lambda ids: {"a": "b"} if "a" in ids else {},
    )
    assert results.unavailable[DENSE] == "failed: RuntimeError (details in the server log)"  # not its text
    assert results.unavailable[GRAPH] == "not configured"
    assert results.hits[0].note_id == "b" and results.hits[1].explanation.superseded_by == "b"
    assert results.strategies[LEXICAL][0].note_id == "a"


def test_a_note_the_query_names_ranks_first_whatever_the_other_shares():
    lexical = RankedList(LEXICAL, (StrategyHit("linked", 9.0), StrategyHit("named", 1.0, names_it=True)))
    graph = RankedList(GRAPH, (StrategyHit("linked", 1.0), StrategyHit("other", 0.5)))
    hits = fuse([lexical, graph], QUERY_WEIGHTS["name"], query_kind="name")
    assert [h.note_id for h in hits] == ["named", "linked", "other"]
    assert [h.explanation.title_match for h in hits] == [True, False, False]
    assert hits[0].score < hits[1].score, "its score is still its own: only its place is decided by the name"
    assert [n for n, _ in Fusion([lexical, graph], QUERY_WEIGHTS["name"]).order()] == ["named", "linked", "other"]


def test_notes_holding_what_was_typed_rank_above_the_rest_and_among_themselves_by_fused_score():
    """Held as typed, then every word, then the rest, each group in fused order: a name query still
    leans graph among the notes that hold its words."""
    lexical = ranked(LEXICAL, "scattered", "typed", "typed_linked", "part")
    dense = ranked(DENSE, "meaning", "part", "typed_linked")
    graph = ranked(GRAPH, "neighbour", "typed_linked", "meaning")
    lists = [lexical, dense, graph]
    holding = {"typed": IN_ORDER, "typed_linked": IN_ORDER, "scattered": EVERY_WORD}
    plain = [h.note_id for h in fuse(lists, QUERY_WEIGHTS["name"])]
    assert plain.index("meaning") < plain.index("scattered"), "without the rule, meaning and links win"
    fusion = Fusion(lists, QUERY_WEIGHTS["name"], holding=holding)
    hits = fusion.hits(query_kind="name")
    assert [h.note_id for h in hits][:3] == ["typed_linked", "typed", "scattered"]
    assert [h.explanation.holds_query for h in hits[:4]] == [IN_ORDER, IN_ORDER, EVERY_WORD, None]
    assert [n for n, _ in fusion.order()] == [h.note_id for h in hits]
    rest = [h.note_id for h in hits[3:]]
    assert rest == [n for n in plain if n in rest], "the rest keep their fused order"
