"""The same corpus and queries give the same ranking on SQLite and on PostgreSQL —
with pgvector there, and with the in-memory index PostgreSQL falls back to."""

from __future__ import annotations

from fastpad.notes import Block
from fastpad.search.service import SearchService
from fastpad.search.vectors import StoredVectors
from fastpad.search.worker import EmbeddingWorker
from tests.helpers_store import make_services

CORPUS = {
    "Sourdough starter": ["Feed the starter with flour and water every morning.", "A ripe starter doubles in four hours."],
    "Bread baking": ["Bake the loaf at 240 degrees with steam for the first 20 minutes.", "See [[Sourdough starter]]."],
    "Kubernetes upgrade": ["Drain each node before upgrading the kubelet.", "Upgrade the control plane first."],
    "Incident review": ["The outage began when the node pool was upgraded during peak traffic."],
    "Garden plan": ["Tomatoes go in the south bed; basil between them.", "Water deeply twice a week."],
    "Reading list": ["Designing Data-Intensive Applications", "The Art of Fermentation"],
}
QUERIES = [
    "sourdough starter",
    '"control plane"',
    "how do I keep my bread dough alive between bakes?",
    "Kubernetes upgrade",
    "outage during an upgrade",
    "fermentation",
    "watering tomatoes",
]


def rankings(store, fast_hasher, minilm, *, use_pgvector: bool = True) -> tuple[list[list[str]], bool]:
    svc = make_services(store, fast_hasher)
    ws = svc.workspace()
    for title, paragraphs in CORPUS.items():
        svc.notes.create(ws.owner, title=title, blocks=[Block(None, "paragraph", p) for p in paragraphs])
    vectors = StoredVectors(store, minilm, use_pgvector=use_pgvector)
    EmbeddingWorker(store, vectors).catch_up(ws.id)
    service = SearchService(store, vectors=vectors, clock=svc.clock)
    out = []
    for query in QUERIES:
        results = service.search(ws.owner, query, limit=5)
        assert results.unavailable == {}
        out.append([hit.title for hit in results.hits])
    with store.read(ws.id) as tx:
        in_database = vectors.in_database(tx)
    return out, in_database


def test_sqlite_and_postgres_rank_a_fixed_corpus_alike(sqlite_store, pg_store, pg_cluster, fast_hasher, minilm):
    on_sqlite, sqlite_db = rankings(sqlite_store, fast_hasher, minilm)
    on_postgres, pgvector = rankings(pg_store, fast_hasher, minilm)
    assert (sqlite_db, pgvector) == (False, True)  # exact numpy KNN vs. pgvector's HNSW index
    second = pg_cluster.migrated_database()
    from fastpad.store import open_store

    in_memory_store = open_store(second, pool_size=2)
    pg_cluster.note_role(in_memory_store)
    try:
        on_postgres_in_memory, db = rankings(in_memory_store, fast_hasher, minilm, use_pgvector=False)
    finally:
        in_memory_store.close()
        pg_cluster.release(second)
    assert db is False
    for query, a, b, c in zip(QUERIES, on_sqlite, on_postgres, on_postgres_in_memory):
        assert a == b == c, query
