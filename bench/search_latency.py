"""Search latency at 100,000 blocks on SQLite, warm cache (target: p95 under 25 ms
for lexical + graph + recency; dense measured separately).

    python bench/search_latency.py [--notes 10000] [--blocks-per-note 10] [--passes 3]

The workspace is written through ``NoteService.create`` (the one write path):
each note is a heading and paragraphs of real text (Vaswani abstracts, reused
round-robin, or synthetic prose without the corpus), and one paragraph of every
note links two others (``[[Note j]]``), so graph walks real edges. Two query
workloads, reported apart because lexical cost grows with the number of
terms (FTS5 scores every block matching any of them):

* ``long``: the collection's 93 queries as written (sentences; 7–10 content
  words, matching ~20% of all blocks each);
* ``short``: the same queries cut to their first three content words, plus a
  few names and keywords — what a search box or an agent's tool call holds.

Every query runs once to warm the caches, then ``--passes`` times measured,
through ``SearchService.search`` (server-side: what ``POST /v1/search``
calls, without HTTP), limit 10.

Dense: embedding ~45,000 chunks with the local model would take ~20 minutes on
this machine and changes nothing about search cost, so every chunk digest gets
a random unit vector instead (stated in the result). The query itself is
embedded by the real model, and the in-memory KNN, the chunk resolution and
the filters are the production ones; the model's similarity floor is lifted,
since random vectors would all fall under it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench.common import percentiles, write_result  # noqa: E402
from bench.retrieval import DEFAULT_BEIR  # noqa: E402
from fastpad.deployment import init_deployment, open_deployment  # noqa: E402
from fastpad.notes import Block  # noqa: E402
from fastpad.search.embeddings import l2_normalize  # noqa: E402
from fastpad.search.fusion import DENSE, GRAPH, LEXICAL, RECENCY, STRATEGIES  # noqa: E402
from fastpad.search.query import parse_query  # noqa: E402
from fastpad.search.setup import build_search  # noqa: E402
from fastpad.knowledge.trust import AGENT_DEFAULT_FLOOR, TrustFloor  # noqa: E402
from fastpad.notes import new_id  # noqa: E402
from fastpad.security.principals import Principal  # noqa: E402
from fastpad.security.scopes import NOTES_READ, SEARCH_READ  # noqa: E402
from fastpad.store import utcnow  # noqa: E402

TARGET_P95_MS = 25.0
EXTRA_SHORT = ["Note 42", "Note 7000", "retrieval", "amplifier noise", "\"transistor circuits\"", "plasma",
               "ionosphere radio waves"]


def texts(corpus: Path) -> tuple[list[str], list[str], str]:
    """(paragraphs, queries, source)."""
    if (corpus / "corpus.jsonl").is_file():
        with open(corpus / "corpus.jsonl") as handle:
            paragraphs = [json.loads(line)["text"] for line in handle if line.strip()]
        with open(corpus / "queries.jsonl") as handle:
            queries = [json.loads(line)["text"] for line in handle if line.strip()]
        return paragraphs, queries, f"{corpus.name} abstracts, reused round-robin"
    rng = random.Random(7)
    words = "storage retrieval index query latency vector memory kernel signal circuit amplifier network".split()
    paragraphs = [" ".join(rng.choice(words) for _ in range(45)) for _ in range(5000)]
    return paragraphs, [" ".join(rng.choice(words) for _ in range(4)) for _ in range(50)], "synthetic prose"


def build(deployment, notes: int, per_note: int, paragraphs: list[str], *, imported_share: float = 0.0) -> float:
    """``imported_share`` of the notes are written as an import writes them (``inbound_untrusted``:
    below an agent's default floor), spread evenly through the workspace."""
    owner = deployment.operator_principal()
    rng = random.Random(11)
    started = time.perf_counter()
    cursor = 0
    for n in range(notes):
        blocks = [Block(None, "heading", f"Note {n}", {"level": 1})]
        for _ in range(per_note - 2):
            blocks.append(Block(None, "paragraph", paragraphs[cursor % len(paragraphs)]))
            cursor += 1
        a, b = rng.randrange(notes), rng.randrange(notes)
        blocks.append(Block(None, "paragraph", f"Related: [[Note {a}]] and [[Note {b}]]."))
        imported = (n * imported_share) % 1 + imported_share >= 1  # every 1/share-th note, evenly
        deployment.notes.create(owner, title=f"Note {n}", blocks=blocks, inbound=imported)
        if n and n % 1000 == 0:
            print(f"  {n} notes, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return time.perf_counter() - started


def synthetic_vectors(deployment, worker) -> int:
    """A random unit vector for every chunk digest, stored as the worker would store it."""
    rng = np.random.default_rng(3)
    store, workspace_id, provider = deployment.store, deployment.workspace_id, worker.provider
    stored = 0
    while True:
        with store.read(workspace_id) as tx:
            batch = tx.search_index.digests_missing_vectors(provider.name, limit=5000)
        if not batch:
            return stored
        vectors = l2_normalize(rng.standard_normal((len(batch), provider.dimensions), dtype=np.float32))
        with store.write(workspace_id) as tx:
            tx.search_index.put_vectors(provider.name, batch, vectors, utcnow())
        stored += len(batch)


def measure(service, owner, queries: list[str], strategies: list[str], passes: int, floor: str | None = None) -> dict:
    for query in queries:  # warm: page cache, SQLite cache, in-memory index loaded
        service.search(owner, query, limit=10, strategies=strategies, floor=floor)
    samples, per_strategy, found = [], {name: [] for name in strategies}, []
    for _ in range(passes):
        for query in queries:
            started = time.perf_counter()
            results = service.search(owner, query, limit=10, strategies=strategies, floor=floor)
            samples.append((time.perf_counter() - started) * 1000)
            for name in strategies:
                per_strategy[name].append(results.timings_ms.get(name, 0.0))
            found.append(len(results.hits))
    return {"total": percentiles(samples), **{name: percentiles(v) for name, v in per_strategy.items()},
            "hits_per_query_mean": round(sum(found) / len(found), 2)}


def floors(notes: int, per_note: int, paragraphs: list[str], workloads: dict[str, list[str]], passes: int,
           imported_share: float) -> dict:
    """A workspace most of whose text is below an agent's default floor (an imported vault beside a
    person's own notes), searched by an agent at its default floor and at ``floor=all``."""
    with tempfile.TemporaryDirectory(prefix="fastpad-search-floors-") as tmp:
        data_dir = Path(tmp) / "data"
        init_deployment(data_dir, owner_password="bench-owner-password")
        deployment = open_deployment(data_dir)
        try:
            build_s = build(deployment, notes, per_note, paragraphs, imported_share=imported_share)
            service, _ = build_search(deployment.store, {"provider": "none"})
            agent = Principal(deployment.workspace_id, "agent", new_id(), new_id(), frozenset({SEARCH_READ, NOTES_READ}))
            strategies = [LEXICAL, GRAPH, RECENCY]
            measured = {name: {floor or f"default ({AGENT_DEFAULT_FLOOR.value})":
                               measure(service, agent, queries, strategies, passes, floor)
                               for floor in (None, TrustFloor.ALL.value)} for name, queries in workloads.items()}
        finally:
            deployment.close()
    return {"notes": notes, "imported_share": imported_share, "build_s": round(build_s, 1),
            "strategies": strategies, "ms": measured}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--blocks-per-note", type=int, default=10)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_BEIR)
    parser.add_argument("--imported-share", type=float, default=0.9,
                        help="the share of notes below an agent's floor in the floor workload")
    args = parser.parse_args()

    paragraphs, long_queries, source = texts(args.corpus)
    workloads = {
        "long": long_queries,
        "short": [" ".join(parse_query(q).terms[:3]).lower() for q in long_queries] + EXTRA_SHORT,
    }
    with tempfile.TemporaryDirectory(prefix="fastpad-search-latency-") as tmp:
        data_dir = Path(tmp) / "data"
        init_deployment(data_dir, owner_password="bench-owner-password")
        deployment = open_deployment(data_dir)
        try:
            build_s = build(deployment, args.notes, args.blocks_per_note, paragraphs)
            service, worker = build_search(deployment.store, {"threads": os.cpu_count()})
            assert worker is not None, "the local embedding model is needed for the query embedding"
            # Random chunk vectors sit near cosine 0 from any query, under the model's floor: without
            # this every dense search would stop at its first window and measure nothing.
            worker.provider.min_similarity = None
            owner = deployment.operator_principal()
            with deployment.store.read(deployment.workspace_id) as tx:
                counts = tx.search_index.counts()
            load_before = os.getloadavg()
            without_dense = {name: measure(service, owner, queries, [LEXICAL, GRAPH, RECENCY], args.passes)
                             for name, queries in workloads.items()}
            vectors = synthetic_vectors(deployment, worker)
            dense = {name: measure(service, owner, queries, [DENSE], args.passes) for name, queries in workloads.items()}
            everything = {name: measure(service, owner, queries, list(STRATEGIES), args.passes)
                          for name, queries in workloads.items()}
            load_after = os.getloadavg()
        finally:
            deployment.close()
    below_floor = floors(args.notes, args.blocks_per_note, paragraphs, workloads, args.passes, args.imported_share)

    figures = {
        "backend": "sqlite",
        "notes": args.notes,
        "blocks": counts["blocks"],
        "chunks": counts["chunks"],
        "text": source,
        "edges": f"{2 * args.notes} [[links]] written in note text",
        "build_s": round(build_s, 1),
        "queries": {name: len(queries) for name, queries in workloads.items()},
        "short_examples": workloads["short"][:3],
        "measured_passes": args.passes,
        "limit": 10,
        "lexical_graph_recency_ms": without_dense,
        "dense_ms": {**dense, "vectors": vectors,
                     "vectors_are": "random unit vectors per chunk digest; the query is embedded by the real model"},
        "all_four_ms": everything,
        "load_average_1m_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
        "agent_floor_over_mostly_imported_text": below_floor,
    }
    targets = {"lexical_graph_recency_p95_ms_under": TARGET_P95_MS,
               **{f"met_{name}": measured["total"]["p95_ms"] < TARGET_P95_MS for name, measured in without_dense.items()}}
    print(write_result("search_latency", figures, targets).read_text())


if __name__ == "__main__":
    main()
