"""A note's history, in-process on SQLite through NoteHistory (the code behind the routes): a
40-block note with 1,000 edits by two people taking turns (so 1,000 sessions), each person
typing on one device (one Loro peer each, as a browser tab keeps its own), then

- the timeline's first page (20 sessions) and a page of 100: each session's blocks touched
  come from one copy of the stored document checked out at each session boundary in turn;
- the note at the version after edit 500 (``GET /v1/notes/{id}?at=``, with its per-block diff);
- restoring that version (one new change through the one write path).

Each read's figure is the median of ``--samples`` runs after one warm-up. Target: the first page and a
version under 100 ms for such a note.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import timed, write_result  # noqa: E402
from bench.servers import initialised  # noqa: E402
from fastpad.deployment import open_deployment  # noqa: E402
from fastpad.notes import Block, NoteDocument  # noqa: E402

BLOCKS, EDITS = 40, 1_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=10)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        data_dir = stack.enter_context(initialised(None))
        deployment = stack.enter_context(open_deployment(data_dir))
        owner = deployment.operator_principal()
        other_person = deployment.people.create_person(owner.workspace_id, "other@example.com", password="bench-pass-1")
        other = deployment.people.principal_for(owner.workspace_id, other_person.id)
        notes, history = deployment.notes, deployment.note_history
        note = notes.create(owner, title="Long history", blocks=[Block(None, "paragraph", f"Paragraph {i}.") for i in range(BLOCKS)])
        frontiers = []
        for i in range(EDITS):
            with deployment.store.read(owner.workspace_id) as tx:
                row = tx.note(note.id, with_snapshot=True)
            doc = NoteDocument.load(row.snapshot, peer_id=1 + i % 2)
            block = doc.blocks()[i % BLOCKS]
            doc.insert_text(block.id, 0, f"{i} ")
            result = notes.apply_ops(owner if i % 2 == 0 else other, note.id, ops=doc.export_updates(row.frontier),
                                     peer_id=None, expected_frontier=row.frontier)
            frontiers.append(result.frontier)
        middle = frontiers[EDITS // 2 - 1]
        reads = {
            "timeline_first_page_20_ms": lambda: history.timeline(owner, note.id, limit=20),
            "timeline_page_100_ms": lambda: history.timeline(owner, note.id, limit=100),
            "version_at_edit_500_ms": lambda: history.version(owner, note.id, middle).as_dict(),
        }
        for read in reads.values():
            read()  # warm-up
        figures = {"note": {"blocks": BLOCKS, "edits": EDITS, "sessions": EDITS},
                   **{name: timed(read, args.samples) for name, read in reads.items()},
                   "restore_version_ms": timed(lambda: history.restore(owner, note.id, middle), 1)}
    path = write_result("history", figures, {"timeline_first_page_20_p50_ms": 100, "version_p50_ms": 100})
    print(path.read_text())


if __name__ == "__main__":
    main()
