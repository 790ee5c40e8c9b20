"""Embedding throughput of the default local provider, in chunks per second.

Chunks are real ones: Vaswani abstracts (../shared/corpora/retrieval/vaswani_npl,
or --corpus DIR) packed into notes of ten paragraphs and cut by the project's
own chunker at its default target, so each carries its structural prefix and
is the size search actually embeds. Without the corpus, synthetic prose of the
same shape is used (and the result says so).

Also reported: model load (hash check + ONNX build + session), one short query's
latency, exact KNN over 50,000 × 384 vectors (the in-memory index), and the
machine's load average, since a busy 2-core machine halves these figures.

    python bench/embeddings.py [--chunks 512] [--corpus DIR] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench.common import percentiles, write_result  # noqa: E402
from fastpad.notes.blocks import Block, NoteMeta  # noqa: E402
from fastpad.search.chunker import DEFAULT_TARGET_CHARS, chunk_note  # noqa: E402
from fastpad.search.embeddings import l2_normalize  # noqa: E402
from fastpad.search.minilm import MiniLMProvider  # noqa: E402
from fastpad.search.vector_index import VectorIndex  # noqa: E402

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "retrieval" / "vaswani_npl"


def paragraphs(corpus: Path | None, needed: int) -> tuple[list[str], str]:
    if corpus is not None and (corpus / "corpus.jsonl").is_file():
        texts = []
        with open(corpus / "corpus.jsonl") as handle:
            for line in handle:
                doc = json.loads(line)
                texts.append(" ".join(filter(None, [doc.get("title"), doc.get("text")])))
                if len(texts) >= needed:
                    break
        return texts, f"{corpus.name} corpus.jsonl, 10 abstracts per note"
    rng = random.Random(1)
    words = "storage retrieval index query latency vector memory kernel signal circuit amplifier network".split()
    return [" ".join(rng.choice(words) for _ in range(40)) for _ in range(needed)], "synthetic"


def make_chunks(count: int, corpus: Path | None):
    texts, source = paragraphs(corpus, count * 4)
    chunks = []
    for n in range(0, len(texts), 10):
        blocks = [Block(f"N{n:05d}B{i:02d}", "paragraph", t) for i, t in enumerate(texts[n : n + 10])]
        meta = NoteMeta(title=f"Abstracts {n // 10}", types=("reference",))
        chunks += chunk_note(f"N{n:05d}", meta, blocks, linked_entities=["Physics"], updated_at="2026-11-30")
        if len(chunks) >= count:
            break
    return chunks[:count], source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=512)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads (default: all cores)")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    chunks, source = make_chunks(args.chunks, args.corpus)
    texts = [c.embed_text for c in chunks]
    provider = MiniLMProvider(threads=args.threads)

    started = time.perf_counter()
    provider.load()
    load_s = time.perf_counter() - started
    tokenizer = provider.load().tokenizer
    pieces = [len(tokenizer.encode(t).ids) for t in texts]

    provider.embed(texts[:32])  # warm-up
    runs = []
    for batch_size in (32, 16, 8):
        provider.batch_size = batch_size
        started = time.perf_counter()
        provider.embed(texts)
        elapsed = time.perf_counter() - started
        runs.append({"batch_size": batch_size, "seconds": round(elapsed, 3), "chunks_per_s": round(len(texts) / elapsed, 1)})
    provider.batch_size = 32

    query_ms = []
    for i in range(50):
        started = time.perf_counter()
        provider.embed([f"how does the storage system handle query {i}?"])
        query_ms.append((time.perf_counter() - started) * 1000)

    rng = np.random.default_rng(0)
    index = VectorIndex(384, initial_capacity=50_000)
    index.add([f"c{i}" for i in range(50_000)], l2_normalize(rng.standard_normal((50_000, 384), dtype=np.float32)))
    knn_ms = []
    for _ in range(50):
        q = l2_normalize(rng.standard_normal((1, 384), dtype=np.float32))[0]
        started = time.perf_counter()
        index.knn(q, 100)
        knn_ms.append((time.perf_counter() - started) * 1000)

    best = max(runs, key=lambda r: r["chunks_per_s"])
    figures = {
        "provider": provider.name,
        "chunk_source": source,
        "chunks": len(texts),
        "chunk_target_chars": DEFAULT_TARGET_CHARS,
        "chunk_chars_mean": round(statistics.mean(len(t) for t in texts), 1),
        "chunk_word_pieces_mean": round(statistics.mean(pieces), 1),
        "chunks_truncated_at_256": sum(p >= 256 for p in pieces),
        "onnxruntime_threads": args.threads or os.cpu_count(),
        "model_load_s": round(load_s, 3),
        "throughput": runs,
        "chunks_per_s": best["chunks_per_s"],
        "short_query_embed": percentiles(query_ms),
        "knn_50000x384_top100": percentiles(knn_ms),
        # Other processes on the machine slow every figure above: say how busy it was.
        "load_average_1m": {"start": round(load_before, 2), "end": round(os.getloadavg()[0], 2)},
    }
    path = write_result("embeddings", figures, {"report": "embedding throughput in chunks/s (issue 5: reported, no target)"})
    print(json.dumps(figures, indent=2))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
