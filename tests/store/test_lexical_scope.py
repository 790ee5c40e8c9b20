"""The lexical index ranks only what the caller may see: the workspace and the trust floor hold
inside the ranking (SQLite's FTS5 `scope` column, PostgreSQL's own WHERE), and the answer is
exactly the whole ranking filtered afterwards — on both backends, across workspaces, and after a
block's review state changes."""

from __future__ import annotations

import random

from fastpad.knowledge.block_review import BlockReview
from fastpad.knowledge.trust import TrustFloor, admits
from fastpad.notes import Block
from fastpad.search.query import lexical_match
from fastpad.store.search_index import SearchFilter, known_provenance
from tests.helpers_store import make_services

WORDS = "amplifier circuit noise signal transistor plasma ionosphere wave antenna filter radar pulse".split()
QUERIES = ["amplifier noise", "transistor circuit signal filter", "plasma", '"circuit noise" signal']


def _floor_filter(floor: TrustFloor) -> SearchFilter:
    return SearchFilter(allowed_provenance=frozenset(p for p in known_provenance() if admits(floor, *p)))


def _ranked(store, workspace_id: str, query: str, flt: SearchFilter, limit: int) -> list[tuple[str, str, float]]:
    with store.read(workspace_id) as tx:
        hits = tx.search_index.lexical_blocks(lexical_match(query, tx.search_index.backend), flt, limit=limit)
    return [(h.note_id, h.block_id, round(h.score, 9)) for h in hits]


def _provenance(store, workspace_id: str) -> dict[str, tuple[str, str]]:
    with store.read(workspace_id) as tx:
        return {b.block_id: (b.origin, b.review_state) for n in tx.list_notes(limit=500)
                for b in tx.blocks(n.id)}


def test_a_floor_ranks_exactly_the_admitted_part_of_the_whole_ranking(store, fast_hasher) -> None:
    svc = make_services(store, fast_hasher)
    mine, theirs = svc.workspace("mine"), svc.workspace("theirs")
    rng = random.Random(18)
    for ws in (mine, theirs):
        for n in range(40):  # three in four notes arrive as an import does: below an agent's floor
            blocks = [Block(None, "paragraph", " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 20))))
                      for _ in range(4)]
            svc.notes.create(ws.owner, title=f"Note {n}", blocks=blocks, inbound=n % 4 != 0)
    provenance = _provenance(store, mine.id)
    for query in QUERIES:
        whole = _ranked(store, mine.id, query, SearchFilter(), limit=1000)
        assert whole and {block_id for _, block_id, _ in whole} <= provenance.keys(), "its own workspace only"
        for floor in (TrustFloor.HUMAN, TrustFloor.REVIEWED):
            admitted = [hit for hit in whole if admits(floor, *provenance[hit[1]])]
            assert admitted, (query, floor)
            for limit in (3, 25):
                assert _ranked(store, mine.id, query, _floor_filter(floor), limit) == admitted[:limit], (query, floor)

    # A person marks an imported block reviewed: an agent's default floor admits it at once, at the same rank.
    imported = next(hit for hit in _ranked(store, mine.id, "plasma", SearchFilter(), limit=1000)
                    if not admits(TrustFloor.HUMAN, *provenance[hit[1]]))
    BlockReview(store, svc.notes).mark_reviewed(mine.owner, imported[0], imported[1])
    assert imported in _ranked(store, mine.id, "plasma", _floor_filter(TrustFloor.HUMAN), limit=1000)
    assert _ranked(store, mine.id, "plasma", SearchFilter(allowed_provenance=frozenset()), limit=10) == []
