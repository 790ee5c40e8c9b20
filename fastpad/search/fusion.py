"""Weighted reciprocal rank fusion, and the explanation every hit carries.

Fusion is by *position*, never by score: each strategy's scores live on their
own scale (bm25, cosine, path length, age), and normalising incomparable scales
is a tuning exercise that must be redone whenever any of them changes. A
document at rank ``r`` of strategy ``s`` earns ``w_s / (k + r)`` (Cormack,
Clarke & Büttcher 2009, ``k = 60``); its fused score is the sum, times any
penalties. Raw scores are carried only to explain a hit.

The fused score is an ordering key and nothing else: it compresses to ~0.016
for everything (a peer removed RRF after thresholding on it broke its
results). Nothing here — and nothing downstream — may threshold on it; cut by
rank (``limit``) instead.

The unit fused is the *note*: a strategy returns one hit per note, best first,
with the blocks that made it match as anchors (a strategy that ranks chunks or
blocks collapses them with :func:`collapse_by_note`, keeping each note's best).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Mapping, Sequence

from fastpad.search.query import (  # re-exported: the query side of fusion
    EVERY_WORD,
    HOLDS_RANK,
    IN_ORDER,
    KEYWORDS,
    NAME,
    PHRASE,
    QUERY_WEIGHTS,
    SENTENCE,
    ParsedQuery,
    classify_query,
    lexical_query_terms,
    matched_terms,
    parse_query,
    postgres_tsquery,
    postgres_websearch_text,
    weights_for,
)

LEXICAL, DENSE, GRAPH, RECENCY = "lexical", "dense", "graph", "recency"
STRATEGIES = (LEXICAL, DENSE, GRAPH, RECENCY)
RRF_K = 60
SUPERSEDED_PENALTY = 0.5

__all__ = [
    "DENSE", "EVERY_WORD", "GRAPH", "IN_ORDER", "KEYWORDS", "LEXICAL", "NAME", "PHRASE", "QUERY_WEIGHTS", "RECENCY", "RRF_K",
    "SENTENCE", "STRATEGIES", "Contribution", "Explanation", "FusedHit", "Fusion", "ParsedQuery", "Penalty",
    "RankedList", "StrategyHit", "classify_query", "collapse_by_note", "fuse", "lexical_query_terms",
    "matched_terms", "parse_query", "postgres_tsquery", "postgres_websearch_text", "weights_for",
]


@dataclass(frozen=True)
class StrategyHit:
    """One note as one strategy ranked it. ``score`` is on the strategy's own scale."""

    note_id: str
    score: float
    block_ids: tuple[str, ...] = ()  # anchors: the blocks/chunk that made it match
    matched_terms: tuple[str, ...] = ()  # lexical: which query terms/phrases matched
    graph_path: tuple[str, ...] = ()  # graph: how it was reached, e.g. (seed note, edge, note)
    snippet: str | None = None
    names_it: bool = False  # lexical: the whole query is this note's title or one of its aliases


@dataclass(frozen=True)
class RankedList:
    """A strategy's answer: hits best first (position is what fusion uses)."""

    strategy: str
    hits: tuple[StrategyHit, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "hits", tuple(self.hits))


@dataclass(frozen=True)
class Contribution:
    strategy: str
    rank: int  # 1-based position in that strategy's list
    score: float  # the strategy's raw score
    weight: float
    rrf: float  # weight / (k + rank): this strategy's share of the fused score


@dataclass(frozen=True)
class Penalty:
    reason: str
    factor: float  # multiplies the fused score; 0 < factor <= 1


@dataclass(frozen=True)
class Explanation:
    """Why a hit is where it is."""

    query_kind: str
    contributions: tuple[Contribution, ...]  # best share first
    matched_terms: tuple[str, ...] = ()
    graph_path: tuple[str, ...] = ()
    penalties: tuple[Penalty, ...] = ()
    superseded_by: str | None = None
    title_match: bool = False  # the query is the note's title or an alias: it ranks first
    holds_query: str | None = None  # "in_order" / "every_word": its text holds what was typed (ranks it up)

    def to_dict(self) -> dict:
        """JSON-ready (tuples become lists). Written out rather than ``asdict``,
        whose deep copy was a visible share of a search's time."""
        return {
            "query_kind": self.query_kind,
            "contributions": [dict(vars(c)) for c in self.contributions],
            "matched_terms": list(self.matched_terms),
            "graph_path": list(self.graph_path),
            "penalties": [dict(vars(p)) for p in self.penalties],
            "superseded_by": self.superseded_by,
            "title_match": self.title_match,
            "holds_query": self.holds_query,
        }


@dataclass(frozen=True)
class FusedHit:
    note_id: str
    rank: int  # 1-based
    score: float  # fused RRF after penalties: an ordering key, never a threshold
    block_ids: tuple[str, ...]
    explanation: Explanation
    snippet: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def collapse_by_note(hits: Iterable[StrategyHit]) -> list[StrategyHit]:
    """Keep each note's first (best) hit; later hits of the same note add their
    anchors and matched terms to it. Order of first appearance is kept."""
    merged: dict[str, StrategyHit] = {}
    for hit in hits:
        first = merged.get(hit.note_id)
        if first is None:
            merged[hit.note_id] = hit
            continue
        merged[hit.note_id] = StrategyHit(
            note_id=first.note_id,
            score=first.score,
            block_ids=_union(first.block_ids, hit.block_ids),
            matched_terms=_union(first.matched_terms, hit.matched_terms),
            graph_path=first.graph_path or hit.graph_path,
            snippet=first.snippet or hit.snippet,
            names_it=first.names_it or hit.names_it,
        )
    return list(merged.values())


def fuse(
    lists: Sequence[RankedList],
    weights: Mapping[str, float],
    *,
    k: int = RRF_K,
    limit: int | None = None,
    query_kind: str = "",
    superseded_by: Mapping[str, str] | None = None,
    penalties: Mapping[str, Sequence[Penalty]] | None = None,
    superseded_penalty: float = SUPERSEDED_PENALTY,
) -> list[FusedHit]:
    """Weighted RRF over ranked lists; every hit explained (:meth:`Fusion.hits`)."""
    return Fusion(lists, weights, k=k).hits(limit=limit, query_kind=query_kind, superseded_by=superseded_by,
                                            penalties=penalties, superseded_penalty=superseded_penalty)


class Fusion:
    """Ranked lists read once into each note's contributions, then ordered (to decide what a
    lookup such as supersession needs to be asked about) and fused, without reading them again.

    ``weights`` maps strategy name → weight (a strategy missing from it gets 1.0). A note
    appearing twice in one list counts at its first position."""

    def __init__(self, lists: Sequence[RankedList], weights: Mapping[str, float], *, k: int = RRF_K,
                 holding: Mapping[str, str] | None = None) -> None:
        """``holding``: how the notes that hold the query hold it (:data:`IN_ORDER`, the words as
        typed, then :data:`EVERY_WORD`; the caller decides, reading the text: ``hybrid_search``).
        Each such note ranks above every note that holds the query less — above all above what
        only dense, graph or recency reached — and notes holding it alike rank by fused score,
        so the query's weights (a name's lean on graph) still order them."""
        self.contributions, self.firsts = _contributions(lists, weights, k)
        # A note the whole query names (lexical's title or alias match) is what was asked for
        # by name: it ranks first, whatever its neighbours' shares.
        self.named = frozenset(n for n, hits in self.firsts.items() if any(h.names_it for h in hits.values()))
        self.holding = {n: how for n, how in (holding or {}).items() if n in self.contributions}
        self._orders: dict[tuple, list[tuple[str, float]]] = {}  # by the penalties applied

    def order(self, penalties: Mapping[str, Sequence[Penalty]] | None = None) -> list[tuple[str, float]]:
        """(note id, fused score) in :meth:`hits`' order, without building explanations."""
        return self._order({n: list(p) for n, p in (penalties or {}).items() if n in self.contributions and p})

    def _order(self, applied: Mapping[str, list[Penalty]]) -> list[tuple[str, float]]:
        """Sorted once per set of penalties: a search asks before its supersession lookup and
        again for its hits, and mostly nothing was superseded in between."""
        key = tuple(sorted((n, tuple(p.factor for p in found)) for n, found in applied.items()))
        if key not in self._orders:
            self._orders[key] = _ordered(self.contributions, applied, self.named, self.holding)
        return self._orders[key]

    def hits(
        self,
        *,
        limit: int | None = None,
        query_kind: str = "",
        superseded_by: Mapping[str, str] | None = None,
        penalties: Mapping[str, Sequence[Penalty]] | None = None,
        superseded_penalty: float = SUPERSEDED_PENALTY,
    ) -> list[FusedHit]:
        """The fused hits, every one explained. ``superseded_by`` maps a note to its successor:
        the hit names it and is demoted by ``superseded_penalty`` (recorded as a penalty);
        ``penalties`` adds others (e.g. a stale or low-trust demotion decided by the caller).
        Ordering: fused score, then best single rank, then more strategies, then note id —
        fully deterministic. Only the hits within ``limit`` are explained."""
        superseded_by = superseded_by or {}
        contributions, firsts = self.contributions, self.firsts
        applied: dict[str, list[Penalty]] = {}
        for note_id in contributions:
            found = list((penalties or {}).get(note_id, ()))
            successor = superseded_by.get(note_id)
            if successor and superseded_penalty < 1.0:
                found.append(Penalty(f"superseded by {successor}", superseded_penalty))
            if found:
                applied[note_id] = found
        ordered = self._order(applied)
        if limit is not None:
            ordered = ordered[: max(0, limit)]
        out = []
        for rank, (note_id, total) in enumerate(ordered, start=1):
            parts = contributions[note_id]
            hits = [firsts[note_id][c.strategy] for c in parts]
            explanation = Explanation(
                query_kind=query_kind,
                contributions=tuple(parts),
                matched_terms=_union(*(h.matched_terms for h in hits)),
                graph_path=next((h.graph_path for h in hits if h.graph_path), ()),
                penalties=tuple(applied.get(note_id, ())),
                superseded_by=superseded_by.get(note_id),
                title_match=note_id in self.named,
                holds_query=self.holding.get(note_id),
            )
            out.append(FusedHit(note_id=note_id, rank=rank, score=total,
                                block_ids=_union(*(h.block_ids for h in hits)),
                                explanation=explanation, snippet=next((h.snippet for h in hits if h.snippet), None)))
        return out


def _contributions(
    lists: Sequence[RankedList], weights: Mapping[str, float], k: int
) -> tuple[dict[str, list[Contribution]], dict[str, dict[str, StrategyHit]]]:
    """Each note's contributions (best share first) and the hit each strategy gave it."""
    if k < 1:
        raise ValueError("k must be >= 1")
    contributions: dict[str, list[Contribution]] = {}
    firsts: dict[str, dict[str, StrategyHit]] = {}
    for ranked in lists:
        weight = float(weights.get(ranked.strategy, 1.0))
        if weight <= 0:
            continue
        for position, hit in enumerate(collapse_by_note(ranked.hits), start=1):
            contributions.setdefault(hit.note_id, []).append(
                Contribution(ranked.strategy, position, float(hit.score), weight, weight / (k + position))
            )
            firsts.setdefault(hit.note_id, {})[ranked.strategy] = hit
    for parts in contributions.values():
        parts.sort(key=lambda c: (-c.rrf, c.rank, c.strategy))
    return contributions, firsts


def _ordered(contributions: Mapping[str, list[Contribution]], penalties: Mapping[str, list[Penalty]],
             named: frozenset[str] = frozenset(), holding: Mapping[str, str] | None = None) -> list[tuple[str, float]]:
    holding = holding or {}
    unheld = len(HOLDS_RANK)
    scored = []
    for note_id, parts in contributions.items():
        total = sum(c.rrf for c in parts)
        for penalty in penalties.get(note_id, ()):
            total *= penalty.factor
        held = HOLDS_RANK[holding[note_id]] if note_id in holding else unheld
        key = (note_id not in named, held, -total, min(c.rank for c in parts), -len(parts), note_id)
        scored.append((key, total))
    scored.sort(key=lambda item: item[0])
    return [(key[-1], total) for key, total in scored]


def _union(*groups: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for group in groups:
        for value in group:
            seen.setdefault(value, None)
    return tuple(seen)
