"""Published notes on SQLite: serving one, and whether an anonymous caller can tell the cases
that are not one apart by time.

- Served: the work the route does for a published note (``PublishingService.public`` and the
  HTML page), timed in-process — the public routes send no Server-Timing header, on purpose —
  the first time (rendered) and again (from the rendered pages), and the loopback round trip of
  ``GET /n/{id}`` against ``fp serve`` beside it. Target (issue 16): p50 under 5 ms server-side.
- Not published: ``GET /n/{id}`` for a note never published, one unpublished, one trashed and
  an id that never existed, interleaved so drift hits each case alike. The four answers are the
  same bytes; their round-trip medians should agree within noise (the ratio of the slowest
  median to the fastest is reported).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402

from bench.common import percentiles, write_result  # noqa: E402
from bench.servers import initialised, serving  # noqa: E402
from fastpad.deployment import open_deployment  # noqa: E402
from fastpad.notes import Block, new_id  # noqa: E402
from fastpad.web.public_page import public_page  # noqa: E402


def seed(data_dir: Path, count: int) -> dict[str, list[str]]:
    deployment = open_deployment(data_dir)
    person = deployment.operator_principal()
    try:
        ids = [deployment.notes.create(person, title=f"Field note {i}", blocks=[
            Block(None, "heading", f"Field note {i}", {"level": 1}),
            *(Block(None, "paragraph", f"Paragraph {j} of note {i}: tides, herons and a [[Field note {i + 1}]].")
              for j in range(20)),
        ]).id for i in range(count)]
        published, unpublished, trashed = ids[: count // 4], ids[count // 4: count // 2], ids[count // 2: 3 * count // 4]
        for note_id in published + unpublished + trashed:
            deployment.publishing.publish(person, note_id)
        for note_id in unpublished:
            deployment.publishing.unpublish(person, note_id)
        for note_id in trashed:
            deployment.notes.trash(person, note_id)
        first, again = [], []
        for note_id in published[:200]:
            for samples in (first, again):  # rendered once, then served from the rendered pages
                start = time.perf_counter()
                note = deployment.publishing.public(note_id)
                assert note is not None
                public_page(note)
                samples.append((time.perf_counter() - start) * 1000)
        return {"published": published, "never published": ids[3 * count // 4:], "unpublished": unpublished,
                "trashed": trashed, "never existed": [new_id() for _ in range(count // 4)],
                "served_ms": (first, again)}
    finally:
        deployment.close()


def run(notes: int, samples: int) -> dict:
    with contextlib.ExitStack() as stack:
        data_dir = stack.enter_context(initialised())
        cases = seed(data_dir, notes)
        first_render, served_again = cases.pop("served_ms")
        server = stack.enter_context(serving(data_dir))
        rng = random.Random(16)
        times: dict[str, list[float]] = {name: [] for name in cases}
        bodies: dict[str, set[bytes]] = {name: set() for name in cases}
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            for _ in range(samples):
                for name in rng.sample(list(cases), len(cases)):  # interleaved, in a fresh order each round
                    response = client.get(f"/n/{rng.choice(cases[name])}")
                    times[name].append(response.elapsed.total_seconds() * 1000)
                    bodies[name].add(response.content if name != "published" else b"")
        hidden = {name: percentiles(times[name]) for name in cases if name != "published"}
        medians = [figures["p50_ms"] for figures in hidden.values()]
        one_answer = len(set().union(*(bodies[name] for name in hidden))) == 1
        return {
            "notes": notes,
            "published_first_render_in_process": percentiles(first_render),
            "published_served_in_process": percentiles(served_again),
            "published_round_trip": percentiles(times["published"]),
            "not_published_round_trip": hidden,
            "not_published_slowest_over_fastest_p50": round(max(medians) / min(medians), 3),
            "not_published_one_answer": one_answer,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=2_000)
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    figures = run(args.notes, args.samples)
    path = write_result("publishing", figures, {"published_served_in_process_p50_ms": 5,
                                                "not_published_one_answer": True})
    print(path.read_text())


if __name__ == "__main__":
    main()
