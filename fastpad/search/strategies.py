"""The store-backed strategies: lexical, graph and recency (dense is
``hybrid.DenseStrategy`` over ``vectors.StoredVectors``).

Each reads through the transaction the search runs in and applies the
caller's filter inside its query, before anything is ranked. What they take
from ``SearchRequest.context``:

``tx``         the read transaction (``WorkspaceTx``) of the caller's workspace
``filter``     a ``SearchFilter``: note set, archive, trust floor
``now``        the clock reading recency is measured from
"""

from __future__ import annotations

from datetime import datetime, timedelta

from fastpad.knowledge.trust import WALKED_BY_SEARCH
from fastpad.knowledge.wikilinks import title_key
from fastpad.search.fusion import GRAPH, LEXICAL, RECENCY, RankedList, StrategyHit, collapse_by_note
from fastpad.search.hybrid import SearchRequest
from fastpad.search.query import every_word_match, lexical_match
from fastpad.store import WorkspaceTx
from fastpad.store.search_index import SearchFilter


# A title's score counts a quarter of a block's. Without titles a word that
# stood only in one found nothing lexically, and nothing at all where dense
# search is off. Measured on NFCorpus, the development collection with titles
# (bench/retrieval.py): lexical alone 0.318 without titles, 0.326 / 0.325 /
# 0.324 at a quarter / a half / one; fused, on the same dense list, 0.3458 at
# weight zero, 0.3456 / 0.3438 / 0.3401 — the dense arm already reads the title
# in every chunk's prefix, so more weight here counts the title twice.
TITLE_WEIGHT = 0.25


class LexicalStrategy:
    """Full text over blocks and titles: FTS5 bm25 on SQLite, ``ts_rank_cd`` on PostgreSQL.

    The query is one OR of the user's terms with quoted phrases required
    (``query.py``). A note's score is its best block's plus :data:`TITLE_WEIGHT`
    times its title's, each ranked in its own index; up to ``blocks_per_note``
    matching blocks are its anchors (a note matched by its title alone has none).
    A note the whole query names — its title or an alias, as a wikilink would
    resolve it — comes first, whether or not its text holds the words
    (``names_it``: fusion ranks it first too), if the caller may see it and some
    of its text."""

    name = LEXICAL

    def __init__(self, *, blocks_per_note: int = 2) -> None:
        self.blocks_per_note = blocks_per_note

    def search(self, request: SearchRequest) -> RankedList:
        tx: WorkspaceTx = request.context["tx"]
        flt = request.context["filter"]
        match = lexical_match(request.parsed, tx.search_index.backend)
        blocks = tx.search_index.lexical_blocks(match, flt, limit=request.depth * self.blocks_per_note,
                                                every_word=every_word_match(request.parsed, tx.search_index.backend))
        titles = dict(tx.search_index.lexical_titles(match, flt, limit=request.depth))
        best: dict[str, float] = {}
        anchors: dict[str, list[str]] = {}
        for block in blocks:  # best first: a note's first block is its best
            best.setdefault(block.note_id, block.score)
            held = anchors.setdefault(block.note_id, [])
            if len(held) < self.blocks_per_note:
                held.append(block.block_id)
        score = {note_id: best.get(note_id, 0.0) + TITLE_WEIGHT * titles.get(note_id, 0.0)
                 for note_id in best.keys() | titles.keys()}
        hits = []
        named = self._named(tx, request)
        if named is not None:
            hits.append(StrategyHit(note_id=named, score=max(score.values(), default=0.0), names_it=True))
        hits += [StrategyHit(note_id=note_id, score=score[note_id], block_ids=tuple(anchors.get(note_id, ())))
                 for note_id in sorted(score, key=lambda n: (-score[n], n))]
        return RankedList(self.name, tuple(collapse_by_note(hits)[: request.depth]))

    @staticmethod
    def _named(tx: WorkspaceTx, request: SearchRequest) -> str | None:
        key = title_key(request.text)
        note_id = tx.links.resolve([key]).get(key) if key else None
        if note_id is None:
            return None
        return note_id if tx.search_index.visible_notes([note_id], request.context["filter"],
                                                        with_admitted_text=True) else None


class GraphStrategy:
    """Notes attached to what lexical and dense found, by edges the caller may walk.

    The best ``seeds_per_list`` notes of each list before it are seeds; a seed at
    rank r lends 1/r to every note one edge away (either direction), and a note
    reached from several seeds adds them up. Only asserted edges are followed
    (``trust.WALKED_BY_SEARCH``: a person made or confirmed them), for a person
    too, so a note reached only through an unconfirmed agent edge is never found.
    The note reached must pass the caller's filter and, below the lowest
    floor, hold some text the floor admits."""

    name = GRAPH

    def __init__(self, *, seeds_per_list: int = 10, edges_per_seed: int = 50) -> None:
        self.seeds_per_list = seeds_per_list
        self.edges_per_seed = edges_per_seed

    def search(self, request: SearchRequest) -> RankedList:
        tx: WorkspaceTx = request.context["tx"]
        flt: SearchFilter = request.context["filter"]
        strength: dict[str, float] = {}
        for ranked in request.seeds:
            for position, hit in enumerate(ranked.hits[: self.seeds_per_list], start=1):
                strength[hit.note_id] = strength.get(hit.note_id, 0.0) + 1.0 / position
        if not strength:
            return RankedList(self.name, ())
        score: dict[str, float] = {}
        path: dict[str, tuple[float, tuple[str, ...]]] = {}
        edges_of = tx.links.edges_of(strength, direction="both", statuses=WALKED_BY_SEARCH, visible=flt.note_ids,
                                     limit=self.edges_per_seed)
        for seed in sorted(strength, key=lambda n: (-strength[n], n)):
            for edge in edges_of[seed]:
                if edge.other is None:
                    continue
                reached = edge.other.id
                score[reached] = score.get(reached, 0.0) + strength[seed]
                step = (seed, f"{edge.link.type}:{edge.direction}", reached)
                if reached not in path or strength[seed] > path[reached][0]:
                    path[reached] = (strength[seed], step)
        allowed = tx.search_index.visible_notes(score, flt, with_admitted_text=True)
        ranked_ids = sorted(allowed, key=lambda n: (-score[n], n))[: request.depth]
        return RankedList(self.name, tuple(
            StrategyHit(note_id=n, score=round(score[n], 6), graph_path=path[n][1]) for n in ranked_ids
        ))


class RecencyStrategy:
    """What was being worked on: the notes found so far, ordered by how recently
    they changed, with the caller's own writes counting again.

    score = ½^(age of the note's last change / half-life)
          + own_weight × ½^(age of the caller's latest block still in it / half-life)

    It ranks the candidates the other strategies found (it never adds a note
    nothing else matched): the version you were editing this week rises above
    an older one that matches as well. Recency is a contrast, so only the
    candidates at least ``min_spread`` more recent than the stalest one are
    listed; when everything was written at about the same time (within half a
    day, at the defaults) it has nothing to say and lists nothing, rather than
    feeding fusion an order that is noise."""

    name = RECENCY

    def __init__(self, *, half_life: timedelta = timedelta(days=7), own_weight: float = 1.0,
                 min_spread: float = 0.05) -> None:
        self.half_life = half_life
        self.own_weight = own_weight
        self.min_spread = min_spread

    def search(self, request: SearchRequest) -> RankedList:
        tx: WorkspaceTx = request.context["tx"]
        candidates = {hit.note_id for ranked in request.seeds for hit in ranked.hits}
        if not candidates:
            return RankedList(self.name, ())
        now: datetime = request.context["now"]
        rows = tx.search_index.recency(candidates, request.caller_id, request.context["filter"])
        scored = []
        for row in rows:
            value = self._decay(now, row.updated_at)
            if row.own_last_write is not None:
                value += self.own_weight * self._decay(now, row.own_last_write)
            scored.append((round(value, 6), row.note_id))
        stalest = min((value for value, _ in scored), default=0.0)
        scored = [item for item in scored if item[0] - stalest >= self.min_spread]
        scored.sort(key=lambda item: (-item[0], item[1]))
        return RankedList(self.name, tuple(StrategyHit(note_id=n, score=s) for s, n in scored[: request.depth]))

    def _decay(self, now: datetime, then: datetime) -> float:
        age = max(timedelta(0), now - then)
        return 0.5 ** (age / self.half_life)
