"""Running the strategies and fusing them: where store-backed strategies plug in.

A strategy is anything with a ``name`` and ``search(request) -> RankedList``
(:class:`Strategy`). :func:`hybrid_search` classifies the query, runs lexical
and dense first, hands what they found to graph and recency as seeds (graph
expands from it, recency orders it by time), and fuses by rank. A strategy
that is not configured (``None``) or that fails is left out and *named* in
``FusedResults.unavailable`` — search never errors for want of one: with no
embedding provider it runs on the other three and says so.

Filtering (archive, scope, trust floor, agent-asserted-only edges) belongs to
each strategy, before ranking — applied after fusion it would leave holes in the
ranks. :class:`SearchRequest.allow_note` carries the caller's predicate for
in-memory strategies; store-backed strategies express the same rules in SQL
(``request.context`` carries what they need).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

from fastpad.search.chunker import Chunk
from fastpad.search.embeddings import EmbeddingProvider
from fastpad.search.fusion import (
    DENSE,
    GRAPH,
    LEXICAL,
    RECENCY,
    RRF_K,
    SUPERSEDED_PENALTY,
    FusedHit,
    Fusion,
    Penalty,
    RankedList,
    StrategyHit,
    collapse_by_note,
)
from fastpad.search.query import ParsedQuery, classify_query, parse_query, weights_for
from fastpad.search.vector_index import VectorIndex

log = logging.getLogger(__name__)

RUN_ORDER = (LEXICAL, DENSE, GRAPH, RECENCY)
SEEDED = (GRAPH, RECENCY)  # strategies that work from what the ones before them found
NO_PROVIDER = "no embedding provider configured"


@dataclass(frozen=True)
class SearchRequest:
    text: str
    parsed: ParsedQuery
    depth: int = 100  # hits each strategy returns (fusion's input); the page is smaller
    workspace_id: str | None = None
    caller_id: str | None = None
    include_archived: bool = False
    allow_note: Callable[[str], bool] | None = None  # scope / trust-floor predicate, if the caller has one
    seeds: tuple[RankedList, ...] = ()  # the lists found so far, given to graph and recency
    ahead: Mapping[str, Future] = field(default_factory=dict)  # strategy -> its prepare(), started in parallel
    context: Mapping[str, Any] = field(default_factory=dict)  # whatever a store-backed strategy needs


@runtime_checkable
class Strategy(Protocol):
    name: str

    def search(self, request: SearchRequest) -> RankedList: ...


# A strategy may also have ``prepare(request)``: work that needs neither the transaction nor the
# other lists (dense: embedding the query). It runs on this pool while the strategies before it
# run, and its result waits in ``request.ahead``. Two threads: the machine's search work is a
# handful of milliseconds of native code that releases the GIL (onnxruntime, numpy, SQLite).
_AHEAD = ThreadPoolExecutor(max_workers=2, thread_name_prefix="search-ahead")


@dataclass(frozen=True)
class FusedResults:
    query: str
    query_kind: str
    weights: dict[str, float]
    hits: tuple[FusedHit, ...]
    strategies: dict[str, list[StrategyHit]]  # each strategy's own list, for "each alone" benchmarks
    unavailable: dict[str, str]  # strategy -> why it did not take part
    timings_ms: dict[str, float]

    def to_dict(self) -> dict:
        return {
            "query": self.query,
            "query_kind": self.query_kind,
            "weights": self.weights,
            "hits": [hit.to_dict() for hit in self.hits],
            "unavailable": self.unavailable,
            "timings_ms": self.timings_ms,
        }


SupersessionLookup = Callable[[Sequence[str]], Mapping[str, str]]
# Of the notes lexical found (its hits, best first), how those that hold the query hold it
# (query.IN_ORDER or query.EVERY_WORD; notes that do not are left out).
WordsHeldLookup = Callable[[ParsedQuery, Sequence[StrategyHit]], Mapping[str, str]]


def hybrid_search(
    text: str,
    strategies: Mapping[str, Strategy | None],
    *,
    limit: int = 20,
    depth: int = 100,
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
    superseded_by: Mapping[str, str] | SupersessionLookup | None = None,
    penalties: Mapping[str, Sequence[Penalty]] | None = None,
    reasons: Mapping[str, str] | None = None,
    holding_query: WordsHeldLookup | None = None,
    **request_fields: Any,
) -> FusedResults:
    """Run every available strategy, fuse by rank, explain each hit.

    ``strategies`` maps a name (lexical, dense, graph, recency, or any other)
    to a strategy or ``None`` (not available; ``reasons`` may say why). A name
    of the four missing from the mapping is reported "not configured".
    ``superseded_by`` is a mapping, or a function of note ids returning one
    (the store's supersession lookup): it is asked about the best-ranked notes
    first, and only as far down as can still change the page.
    ``holding_query`` tells which of lexical's notes hold what was typed, and how: they rank
    above every other note, whatever the query's kind (``Fusion``) — the note that holds a rare
    word, a title or a phrase you typed is not buried under what only meaning, links or recency
    reached. Without it (or without lexical) the fusion is plain weighted RRF.
    ``request_fields`` become :class:`SearchRequest` fields.
    """
    parsed = parse_query(text)
    kind = classify_query(parsed)
    chosen = dict(weights) if weights is not None else weights_for(kind)
    request = SearchRequest(text=text, parsed=parsed, depth=depth, **request_fields)
    unavailable: dict[str, str] = {}
    lists: list[RankedList] = []
    per_strategy: dict[str, list[StrategyHit]] = {}
    timings: dict[str, float] = {}

    names = [n for n in RUN_ORDER if n in strategies] + [n for n in strategies if n not in RUN_ORDER]
    for name in RUN_ORDER:
        if name not in strategies:
            unavailable[name] = "not configured"
    request = replace(request, ahead={name: _AHEAD.submit(strategy.prepare, request)
                                      for name, strategy in strategies.items() if hasattr(strategy, "prepare")})
    for name in names:
        strategy = strategies[name]
        if strategy is None:
            unavailable[name] = (reasons or {}).get(name) or (NO_PROVIDER if name == DENSE else "not configured")
            continue
        if name in SEEDED:
            request = replace(request, seeds=tuple(lists))
        started = time.perf_counter()
        try:
            ranked = strategy.search(request)
        except Exception as exc:  # a failing strategy degrades search; it does not break it
            log.exception("search strategy %s failed", name)
            # The kind of failure only: the exception's text may be the database's own message
            # (its SQL, its values), which is for the server's log, not for the caller.
            unavailable[name] = f"failed: {type(exc).__name__} (details in the server log)"
            continue
        finally:
            timings[name] = round((time.perf_counter() - started) * 1000, 3)
        if ranked.strategy != name:
            ranked = RankedList(name, ranked.hits)
        lists.append(ranked)
        per_strategy[name] = collapse_by_note(ranked.hits)

    started = time.perf_counter()
    lexical = per_strategy.get(LEXICAL)
    if holding_query is not None and lexical:
        holding = holding_query(parsed, lexical)
        timings["holds_query"] = round((time.perf_counter() - started) * 1000, 3)
        started = time.perf_counter()
    else:
        holding = None
    fusion = Fusion(lists, chosen, k=k, holding=holding)  # the lists are read once, for the lookup and the hits alike
    if callable(superseded_by):
        successors = _successors_that_matter(fusion, penalties, limit, superseded_by)
    else:
        successors = dict(superseded_by or {})
    hits = fusion.hits(limit=limit, query_kind=kind, superseded_by=successors, penalties=penalties)
    timings["fusion"] = round((time.perf_counter() - started) * 1000, 3)
    return FusedResults(text, kind, chosen, tuple(hits), per_strategy, unavailable, timings)


def _successors_that_matter(
    fusion: Fusion,
    penalties: Mapping[str, Sequence[Penalty]] | None,
    limit: int,
    lookup: SupersessionLookup,
) -> dict[str, str]:
    """Supersession for the notes that can reach the page, asked best first.

    A supersession only lowers a score, so once the page is full of notes whose
    demoted scores all beat the next note's undemoted one, nothing further down
    can enter it and needs no lookup."""
    ranked = fusion.order(penalties)
    found: dict[str, str] = {}
    settled: list[float] = []  # scores after demotion of the notes looked at so far
    batch = max(limit, 10)
    for start in range(0, len(ranked), batch):
        if len(settled) >= limit and sorted(settled, reverse=True)[limit - 1] > ranked[start][1]:
            break
        chunk = ranked[start : start + batch]
        answer = lookup([note_id for note_id, _ in chunk]) or {}
        for note_id, score in chunk:
            successor = answer.get(note_id)
            if successor:
                found[note_id] = successor
            settled.append(score * (SUPERSEDED_PENALTY if successor else 1.0))
    return found


# --- dense ------------------------------------------------------------------------


class VectorSource(Protocol):
    """Where dense vectors live: an in-memory index, or pgvector in the database."""

    def nearest(self, request: SearchRequest, query: Any, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` (key, cosine) pairs, best first; fewer only when there are no more."""

    def resolve(self, request: SearchRequest, keys: Sequence[str]) -> Mapping[str, Sequence[tuple[str, tuple[str, ...]]]]:
        """For each key the chunks carrying it that the caller may see: (note id, block ids)."""


class DenseStrategy:
    """Dense retrieval: embed the query, take the nearest vectors, keep what the
    caller may see, one hit per note (its best chunk's anchors).

    The caller's filter is applied to candidates as they come, widening the
    nearest-neighbour window until ``depth`` notes are found or the vectors run
    out, so a filter never silently shrinks the list below what exists. Nothing
    under the provider's ``min_similarity`` is listed.
    """

    name = DENSE

    def __init__(self, provider: EmbeddingProvider, source: VectorSource, *, chunks_per_note: int = 3):
        self.provider = provider
        self.source = source
        self.chunks_per_note = max(1, chunks_per_note)

    def prepare(self, request: SearchRequest) -> Any:
        """The query's vector (or None for blank text): computed while lexical runs."""
        return self.provider.embed([request.text])[0] if request.text.strip() else None

    def search(self, request: SearchRequest) -> RankedList:
        ahead = request.ahead.get(self.name)
        query = ahead.result() if ahead is not None else self.prepare(request)
        if query is None:
            return RankedList(self.name, ())
        window = request.depth * self.chunks_per_note
        floor = self.provider.min_similarity
        resolved: dict[str, Sequence[tuple[str, tuple[str, ...]]]] = {}
        while True:
            nearest = self.source.nearest(request, query, window)
            exhausted = len(nearest) < window
            if floor is not None and nearest and nearest[-1][1] < floor:  # best first: the rest is lower still
                nearest, exhausted = [(key, score) for key, score in nearest if score >= floor], True
            fresh = [key for key, _ in nearest if key not in resolved]
            if fresh:
                answer = self.source.resolve(request, fresh)
                resolved.update({key: answer.get(key, ()) for key in fresh})
            hits = [
                StrategyHit(note_id=note_id, score=score, block_ids=tuple(block_ids))
                for key, score in nearest
                for note_id, block_ids in resolved[key]
            ]
            notes = collapse_by_note(hits)
            if len(notes) >= request.depth or exhausted:
                return RankedList(self.name, tuple(notes[: request.depth]))
            window *= 4


class ChunkCatalog:
    """An in-memory vector source: chunk id → (note id, block ids) beside a
    :class:`VectorIndex` keyed by chunk id. ``request.allow_note`` filters."""

    def __init__(self, index: VectorIndex) -> None:
        self.index = index
        self._info: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._by_note: dict[str, set[str]] = {}

    def put(self, chunks: Sequence[Chunk]) -> None:
        for chunk in chunks:
            self._info[chunk.id] = (chunk.note_id, chunk.block_ids)
            self._by_note.setdefault(chunk.note_id, set()).add(chunk.id)

    def drop_note(self, note_id: str) -> list[str]:
        ids = sorted(self._by_note.pop(note_id, set()))
        for chunk_id in ids:
            self._info.pop(chunk_id, None)
        self.index.remove(ids)
        return ids

    def nearest(self, request: SearchRequest, query: Any, k: int) -> list[tuple[str, float]]:
        return self.index.knn(query, k)

    def resolve(self, request: SearchRequest, keys: Sequence[str]) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
        allow = request.allow_note
        return {
            key: [info]
            for key in keys
            if (info := self._info.get(key)) is not None and (allow is None or allow(info[0]))
        }


def index_chunks(provider: EmbeddingProvider, index: VectorIndex, chunks: Sequence[Chunk], *, batch_size: int = 64) -> int:
    """Embed chunks (prefix + text) into ``index`` under their chunk ids."""
    done = 0
    for start in range(0, len(chunks), batch_size):
        batch = chunks[start : start + batch_size]
        index.add([c.id for c in batch], provider.embed([c.embed_text for c in batch]))
        done += len(batch)
    return done
