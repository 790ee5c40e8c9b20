"""What a note-scoped token's search costs for a word it cannot read: a token limited to a few
notes must not be able to time what the others hold.

    python bench/note_scope.py [--notes 3000] [--blocks-per-note 6] [--passes 20] [--backends sqlite,postgres]

The workspace is written through ``NoteService.create`` (the one write path): ``--notes`` notes of
a heading and paragraphs of synthetic prose, every paragraph of every note but the token's own
holding one word (``OUTSIDE_WORD``), so that word matches most blocks of the workspace and none of
the token's notes. An agent principal whose note set is ``--scoped`` notes searches, at its default
floor with the strategies the server runs without embeddings (lexical, graph, recency), for

* ``outside``: the word only out-of-scope notes hold;
* ``nowhere``: a word no note holds;

on PostgreSQL after ``ANALYZE`` (as autovacuum would have run by then), each warmed once, then
``--passes`` times measured through ``SearchService.search`` (server-side,
without HTTP), alternating. The figure is the ratio of the two medians in one run: 1.0 means the
search tells the token nothing by its time. Before the note set was applied inside the ranking the
issue measured 292 ms against 31 ms on SQLite and 83 against 15 on PostgreSQL.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import percentiles, write_result  # noqa: E402
from fastpad.deployment import init_deployment, open_deployment  # noqa: E402
from fastpad.notes import Block, new_id  # noqa: E402
from fastpad.search.fusion import GRAPH, LEXICAL, RECENCY  # noqa: E402
from fastpad.search.setup import build_search  # noqa: E402
from fastpad.security.principals import Principal  # noqa: E402
from fastpad.security.scopes import NOTES_READ, SEARCH_READ  # noqa: E402

OUTSIDE_WORD = "quorvex"
NOWHERE_WORD = "zyphlorn"
# The outside word costs no more than the nowhere word: a ratio of 1, within what two medians of
# the same statement differ by on a shared machine (the same run's two words swap places run to run).
TARGET_RATIO = 1.1
WORDS = "storage retrieval index query latency vector memory kernel signal circuit amplifier network".split()


def build(deployment, notes: int, per_note: int, scoped: int) -> tuple[frozenset[str], float]:
    """The workspace; returns the token's note set (the first ``scoped`` notes, which lack the word)."""
    owner = deployment.operator_principal()
    rng = random.Random(5)
    started = time.perf_counter()
    inside: list[str] = []
    for n in range(notes):
        word = [] if n < scoped else [OUTSIDE_WORD]
        blocks = [Block(None, "heading", f"Note {n}", {"level": 1})]
        blocks += [Block(None, "paragraph", " ".join([*(rng.choice(WORDS) for _ in range(30)), *word]))
                   for _ in range(per_note - 1)]
        note = deployment.notes.create(owner, title=f"Note {n}", blocks=blocks)
        if n < scoped:
            inside.append(note.id)
    return frozenset(inside), time.perf_counter() - started


def measure(backend: str, database_url: str | None, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory(prefix="fastpad-note-scope-") as tmp:
        data_dir = Path(tmp) / "data"
        init_deployment(data_dir, database_url, owner_password="bench-owner-password")
        deployment = open_deployment(data_dir)
        try:
            note_set, build_s = build(deployment, args.notes, args.blocks_per_note, args.scoped)
            if backend == "postgres":  # what autovacuum does within the minute: plan on the tables' statistics
                import psycopg

                with psycopg.connect(deployment.store.owner_url, autocommit=True) as conn:
                    conn.execute("ANALYZE")
            service, _ = build_search(deployment.store, {"provider": "none"})
            agent = Principal(deployment.workspace_id, "agent", new_id(), new_id(),
                              frozenset({SEARCH_READ, NOTES_READ}), note_ids=note_set)
            whole = Principal(deployment.workspace_id, "agent", new_id(), new_id(), frozenset({SEARCH_READ, NOTES_READ}))
            strategies = [LEXICAL, GRAPH, RECENCY]
            samples: dict[str, list[float]] = {"outside": [], "nowhere": []}
            queries = {"outside": OUTSIDE_WORD, "nowhere": NOWHERE_WORD}
            found = {kind: len(service.search(agent, q, strategies=strategies).hits) for kind, q in queries.items()}
            matched = len(service.search(whole, OUTSIDE_WORD, limit=50, strategies=strategies).hits)
            for _ in range(args.passes):
                for kind, query in queries.items():
                    started = time.perf_counter()
                    service.search(agent, query, strategies=strategies)
                    samples[kind].append((time.perf_counter() - started) * 1000)
        finally:
            deployment.close()
    medians = {kind: statistics.median(values) for kind, values in samples.items()}
    return {
        "notes": args.notes, "blocks_per_note": args.blocks_per_note, "note_set": args.scoped,
        "build_s": round(build_s, 1), "strategies": strategies,
        "hits": found, "whole_workspace_hits_for_outside_word (limit 50)": matched,
        "ms": {kind: percentiles(values) for kind, values in samples.items()},
        "ratio_outside_to_nowhere": round(medians["outside"] / medians["nowhere"], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--blocks-per-note", type=int, default=6)
    parser.add_argument("--scoped", type=int, default=5, help="notes in the token's note set")
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    figures = {}
    for backend in args.backends.split(","):
        with ExitStack() as stack:
            url = None
            if backend == "postgres":
                from bench.servers import postgres

                url = stack.enter_context(postgres())
            figures[backend] = measure(backend, url, args)
            print(backend, figures[backend]["ms"], figures[backend]["ratio_outside_to_nowhere"], file=sys.stderr)
    path = write_result("note_scope", figures, {"ratio_outside_to_nowhere_at_most": TARGET_RATIO,
                                                "issue_29_before": {"sqlite_ms": [292, 31], "postgres_ms": [83, 15]}})
    print(path)


if __name__ == "__main__":
    main()
