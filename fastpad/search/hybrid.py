"""Running the strategies and fusing them: where store-backed strategies plug in.

A strategy is anything with a ``name`` and ``search(request) -> RankedList``
(:class:`Strategy`). :func:`hybrid_search` classifies the query, runs lexical
and dense first, hands their lists to graph as seeds (graph expands from what
the first two found), runs recency, and fuses by rank. A strategy that is not
configured (``None``) or that fails is left out and *named* in
``SearchResults.unavailable`` — search never errors for want of one: with no
embedding provider it runs on the other three and says so.

Filtering (archive, scope, trust floor, agent-asserted-only edges) belongs to
each strategy, before ranking — applied after fusion it would leave holes in the
ranks. :class:`SearchRequest.allow_note` carries the caller's predicate for the
store-independent :class:`DenseStrategy`; store-backed strategies express the
same rules in SQL.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

from fastpad.search.chunker import Chunk
from fastpad.search.embeddings import EmbeddingProvider
from fastpad.search.fusion import (
    DENSE,
    GRAPH,
    LEXICAL,
    RECENCY,
    RRF_K,
    FusedHit,
    Penalty,
    RankedList,
    StrategyHit,
    collapse_by_note,
    fuse,
)
from fastpad.search.query import ParsedQuery, classify_query, parse_query, weights_for
from fastpad.search.vector_index import VectorIndex

log = logging.getLogger(__name__)

RUN_ORDER = (LEXICAL, DENSE, GRAPH, RECENCY)


@dataclass(frozen=True)
class SearchRequest:
    text: str
    parsed: ParsedQuery
    depth: int = 100  # hits each strategy returns (fusion's input); the page is smaller
    workspace_id: str | None = None
    caller_id: str | None = None
    include_archived: bool = False
    allow_note: Callable[[str], bool] | None = None  # scope / trust-floor predicate, if the caller has one
    seeds: tuple[RankedList, ...] = ()  # lexical and dense lists, given to graph
    context: Mapping[str, Any] = field(default_factory=dict)  # whatever a store-backed strategy needs


@runtime_checkable
class Strategy(Protocol):
    name: str

    def search(self, request: SearchRequest) -> RankedList: ...


@dataclass(frozen=True)
class SearchResults:
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


def hybrid_search(
    text: str,
    strategies: Mapping[str, Strategy | None],
    *,
    limit: int = 20,
    depth: int = 100,
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
    superseded_by: Mapping[str, str] | Callable[[Sequence[str]], Mapping[str, str]] | None = None,
    penalties: Mapping[str, Sequence[Penalty]] | None = None,
    **request_fields: Any,
) -> SearchResults:
    """Run every available strategy, fuse by rank, explain each hit.

    ``strategies`` maps a name (lexical, dense, graph, recency, or any other)
    to a strategy or ``None`` (not configured). ``superseded_by`` is a mapping
    or a function of the candidate note ids returning one (the store's
    supersession lookup). ``request_fields`` become :class:`SearchRequest` fields.
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
    for name in names:
        strategy = strategies[name]
        if strategy is None:
            unavailable[name] = "no embedding provider configured" if name == DENSE else "not configured"
            continue
        if name == GRAPH:
            request = _with_seeds(request, tuple(lists))
        started = time.perf_counter()
        try:
            ranked = strategy.search(request)
        except Exception as exc:  # a failing strategy degrades search; it does not break it
            log.exception("search strategy %s failed", name)
            unavailable[name] = f"failed: {type(exc).__name__}: {exc}"[:300]
            continue
        finally:
            timings[name] = round((time.perf_counter() - started) * 1000, 3)
        if ranked.strategy != name:
            ranked = RankedList(name, ranked.hits)
        lists.append(ranked)
        per_strategy[name] = collapse_by_note(ranked.hits)

    candidates = sorted({hit.note_id for ranked in lists for hit in ranked.hits})
    if callable(superseded_by):
        successors = dict(superseded_by(candidates)) if candidates else {}
    else:
        successors = dict(superseded_by or {})
    started = time.perf_counter()
    hits = fuse(lists, chosen, k=k, limit=limit, query_kind=kind, superseded_by=successors, penalties=penalties)
    timings["fusion"] = round((time.perf_counter() - started) * 1000, 3)
    return SearchResults(text, kind, chosen, tuple(hits), per_strategy, unavailable, timings)


def _with_seeds(request: SearchRequest, seeds: tuple[RankedList, ...]) -> SearchRequest:
    fields = {f: getattr(request, f) for f in request.__dataclass_fields__}
    fields["seeds"] = seeds
    return SearchRequest(**fields)


class DenseStrategy:
    """Dense retrieval over a :class:`VectorIndex` of chunk embeddings.

    ``index_for(workspace_id)`` returns the workspace's index; ``chunk_info``
    maps a chunk id to ``(note_id, block_ids)`` (the chunk table, or the
    :class:`ChunkCatalog` below). Chunks are ranked by cosine, then collapsed to
    one hit per note (its best chunk's anchors).
    """

    name = DENSE

    def __init__(
        self,
        provider: EmbeddingProvider,
        index_for: Callable[[str | None], VectorIndex] | VectorIndex,
        chunk_info: Callable[[str], tuple[str, tuple[str, ...]] | None],
        *,
        chunks_per_note: int = 3,
    ):
        self.provider = provider
        self._index_for = (lambda _workspace: index_for) if isinstance(index_for, VectorIndex) else index_for
        self._chunk_info = chunk_info
        self.chunks_per_note = max(1, chunks_per_note)

    def search(self, request: SearchRequest) -> RankedList:
        index = self._index_for(request.workspace_id)
        if len(index) == 0 or not request.text.strip():
            return RankedList(self.name, ())
        query = self.provider.embed([request.text])[0]
        allow = request.allow_note

        def where(chunk_id: str) -> bool:
            info = self._chunk_info(chunk_id)
            return info is not None and (allow is None or allow(info[0]))

        neighbours = index.knn(query, request.depth * self.chunks_per_note, where=where)
        hits = []
        for chunk_id, score in neighbours:
            note_id, block_ids = self._chunk_info(chunk_id)  # type: ignore[misc]
            hits.append(StrategyHit(note_id=note_id, score=score, block_ids=tuple(block_ids)))
        return RankedList(self.name, tuple(collapse_by_note(hits)[: request.depth]))


class ChunkCatalog:
    """Chunk id → (note id, block ids): an in-memory chunk table for DenseStrategy."""

    def __init__(self) -> None:
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
        return ids

    def __call__(self, chunk_id: str) -> tuple[str, tuple[str, ...]] | None:
        return self._info.get(chunk_id)


def index_chunks(provider: EmbeddingProvider, index: VectorIndex, chunks: Sequence[Chunk], *, batch_size: int = 64) -> int:
    """Embed chunks (prefix + text) into ``index``; the embedding worker's inner step."""
    done = 0
    for start in range(0, len(chunks), batch_size):
        batch = chunks[start : start + batch_size]
        index.add([c.id for c in batch], provider.embed([c.embed_text for c in batch]))
        done += len(batch)
    return done
