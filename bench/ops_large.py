"""Keystroke cost against note size: POST /v1/notes/{id}/ops on a 10-block and on a
2,000-block note, in-process through NoteService (the code behind the route), on
SQLite and PostgreSQL.

Each sample is what the browser editor sends: a ``NoteDocument`` holding a copy of
the note types one character into a paragraph and exports
``export_updates(since=frontier)``, posted with that expected frontier. A third
series inserts one block into the big note (a structural edit). The first
call of each series is a warm-up and is not counted.

``--profile`` prints cProfile's top lines for one one-character edit on the big
note. ``--http`` measures the same series over real HTTP against ``fp serve`` and
reads the server's own time from its Server-Timing header (SQLite only).

Target: a one-character edit on the 2,000-block note well under 50 ms
server-side, and within about twice the 10-block note's cost in the same run.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import cProfile
import io
import pstats
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import percentiles, write_result  # noqa: E402
from bench.notes import sample_blocks  # noqa: E402
from bench.servers import OWNER, initialised, postgres, server_ms, serving  # noqa: E402
from fastpad.deployment import open_deployment  # noqa: E402
from fastpad.notes import Block, NoteDocument  # noqa: E402

SMALL, LARGE = 10, 2_000


class Editor:
    """A browser's copy of one note: edits locally, posts the ops since the last ack."""

    def __init__(self, post: Callable[[bytes, str], str], state: bytes, frontier: str, peer_id: int) -> None:
        self.post = post
        self.doc = NoteDocument.load(state, peer_id=peer_id)
        self.frontier = frontier
        blocks = self.doc.blocks()
        self.paragraphs = [b.id for b in blocks if b.type == "paragraph"]
        self.count = 0

    def type_one(self) -> None:
        block_id = self.paragraphs[self.count % len(self.paragraphs)]
        self.doc.insert_text(block_id, 0, "x")
        self._send()

    def insert_block(self) -> None:
        anchor = self.paragraphs[self.count % len(self.paragraphs)]
        self.doc.insert_after(anchor, Block(None, "paragraph", f"inserted {self.count}"))
        self._send()

    def _send(self) -> None:
        self.count += 1
        self.frontier = self.post(self.doc.export_updates(self.frontier), self.frontier)


def _figures(small: Editor, large: Editor, timings: list[float], samples: int, suffix: str) -> dict:
    """One-character edits on the small and the large note, a block inserted into the large one,
    and how much dearer the large note's edit is (p50 ratio)."""
    figures = {
        f"small_one_char{suffix}": _series(small.type_one, timings, samples),
        f"large_one_char{suffix}": _series(large.type_one, timings, samples),
        f"large_insert_block{suffix}": _series(large.insert_block, timings, max(10, samples // 4)),
    }
    figures["large_over_small_p50"] = round(
        figures[f"large_one_char{suffix}"]["p50_ms"] / max(figures[f"small_one_char{suffix}"]["p50_ms"], 1e-6), 2)
    return figures


def _series(step: Callable[[], None], timings: list[float], samples: int) -> dict:
    step()  # warm-up
    del timings[:]
    for _ in range(samples):
        step()
    return percentiles(list(timings))


def _note_blocks(count: int) -> list[Block]:
    return sample_blocks(count)


def run_in_process(backend: str, samples: int, profile: bool) -> tuple[dict, str | None]:
    with contextlib.ExitStack() as stack:
        database_url = stack.enter_context(postgres()) if backend == "postgres" else None
        data_dir = stack.enter_context(initialised(database_url))
        deployment = stack.enter_context(open_deployment(data_dir))
        person = deployment.operator_principal()
        notes = deployment.notes
        timings: list[float] = []

        def editor(count: int, peer_id: int) -> Editor:
            note_id = notes.create(person, title=f"{count} blocks", blocks=_note_blocks(count)).id
            state, frontier = notes.export_updates(person, note_id)

            def post(ops: bytes, expected: str) -> str:
                start = time.perf_counter()
                result = notes.apply_ops(person, note_id, ops=ops, peer_id=None, expected_frontier=expected)
                timings.append((time.perf_counter() - start) * 1000)
                return result.frontier

            return Editor(post, state, frontier, peer_id)

        figures = _figures(editor(SMALL, 101), editor(LARGE, 102), timings, samples, "")
        report = None
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            large.type_one()
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
            report = out.getvalue()
        return figures, report


def run_http(samples: int) -> dict:
    import httpx

    with contextlib.ExitStack() as stack:
        data_dir = stack.enter_context(initialised(None))
        deployment = open_deployment(data_dir)
        try:
            person = deployment.operator_principal()
            ids = {count: deployment.notes.create(person, title=f"{count} blocks", blocks=_note_blocks(count)).id
                   for count in (SMALL, LARGE)}
        finally:
            deployment.close()
        server = stack.enter_context(serving(data_dir))
        token = server.token("notes:read,notes:write", "--person", OWNER)
        client = stack.enter_context(httpx.Client(base_url=server.base_url, timeout=60,
                                                  headers={"authorization": f"Bearer {token}"}))
        timings: list[float] = []

        def editor(count: int, peer_id: int) -> Editor:
            note_id = ids[count]
            state = client.get(f"/v1/notes/{note_id}/updates")
            state.raise_for_status()

            def post(ops: bytes, expected: str) -> str:
                response = client.post(f"/v1/notes/{note_id}/ops", json={
                    "ops": base64.b64encode(ops).decode(), "expectedFrontier": expected,
                    "idempotencyKey": str(uuid.uuid4()),
                })
                response.raise_for_status()
                timings.append(server_ms(response))
                return response.json()["frontier"]

            return Editor(post, state.content, state.headers["x-fastpad-frontier"], peer_id)

        return _figures(editor(SMALL, 201), editor(LARGE, 202), timings, samples, "_server")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top lines for one big-note edit")
    parser.add_argument("--http", action="store_true", help="also measure over HTTP against fp serve (SQLite)")
    args = parser.parse_args()
    figures: dict = {}
    for backend in args.backends.split(","):
        figures[backend], report = run_in_process(backend, args.samples, args.profile)
        if report:
            print(f"--- cProfile, one one-character edit on the {LARGE}-block note ({backend})")
            print(report)
    if args.http:
        figures["sqlite_http"] = run_http(args.samples)
    path = write_result("ops_large", figures, {"large_one_char_p50_ms": 50, "large_over_small_p50": 2})
    print(path.read_text())


if __name__ == "__main__":
    main()
