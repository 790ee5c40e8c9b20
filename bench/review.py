"""Proposals and review: the service calls an agent and a person make, on a long note.

A 500-block note; the agent's session has read 50 other 100-block notes, so the
copy guard compares every proposal against 5,000 blocks it read. Figures per
backend (p50/p95 over SAMPLES runs):

- fetch with handles (500 handles minted, the read recorded),
- propose (3 ops: replace, insert, delete; handles opened, fork, diff, copy guard, stored),
- accept at the base (the proposal lands as proposed),
- accept after a person edited another block (the three-way merge path),
- revert of an accepted turn.

Target (issue 6): every call well under 250 ms on SQLite for a 500-block note.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from argon2 import PasswordHasher  # noqa: E402

from bench.common import percentiles, write_result  # noqa: E402
from bench.servers import postgres  # noqa: E402
from fastpad.knowledge.notes import NoteService  # noqa: E402
from fastpad.notes import Block, NoteDocument, new_id  # noqa: E402
from fastpad.review.service import ReviewService  # noqa: E402
from fastpad.security.people import PeopleService  # noqa: E402
from fastpad.security.tokens import TokenService  # noqa: E402
from fastpad.store import open_store, sqlite_url, utcnow  # noqa: E402

BLOCKS = 500
READ_NOTES, READ_BLOCKS = 50, 100
SAMPLES = 30
_WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()


def sentence(seed: int) -> str:
    return " ".join(_WORDS[(seed * 7 + i * 3) % len(_WORDS)] + str(seed % 97) for i in range(14)) + "."


def run(url: str) -> dict:
    store = open_store(url)
    try:
        workspace_id = new_id()
        with store.write(workspace_id) as tx:
            tx.insert_workspace("bench", utcnow())
        people = PeopleService(store, b"s" * 32, hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
        owner_id = people.create_person(workspace_id, "owner@bench.local", password="correct horse", role="owner").id
        owner = people.principal_for(workspace_id, owner_id)
        notes, tokens = NoteService(store), TokenService(store)
        review = ReviewService(store, b"r" * 32, notes)
        agent = tokens.authenticate(tokens.create(workspace_id, scopes="notes:read,notes:propose")[0])
        session = review.open_session(agent)
        for n in range(READ_NOTES):
            other = notes.create(owner, blocks=[Block(None, "paragraph", sentence(n * 1000 + i))
                                                for i in range(READ_BLOCKS)])
            review.fetch_with_handles(agent, session, other.id)
        note_id = notes.create(owner, blocks=[Block(None, "paragraph", sentence(i)) for i in range(BLOCKS)]).id

        samples: dict[str, list[float]] = {k: [] for k in ("fetch_with_handles", "propose", "accept_at_base",
                                                            "accept_merged", "revert")}

        def clock(name: str, fn):
            start = time.perf_counter()
            result = fn()
            samples[name].append((time.perf_counter() - start) * 1000)
            return result

        for round_ in range(SAMPLES):
            for name in ("accept_at_base", "accept_merged"):
                fetched = clock("fetch_with_handles", lambda: review.fetch_with_handles(agent, session, note_id))
                h = [b.handle for b in fetched.blocks]
                ops = [{"op": "replace_block", "handle": h[10], "text": f"Rewritten in round {round_} for {name}."},
                       {"op": "insert_after", "handle": h[200], "text": f"Added in round {round_}."},
                       {"op": "delete", "handle": h[300]}]
                turn = clock("propose", lambda: review.propose(agent, session, note_id, ops, fetched.frontier,
                                                               f"{name}-{round_}"))
                if name == "accept_merged":
                    with store.read(workspace_id) as tx:
                        row = tx.note(note_id, with_snapshot=True)
                    doc = NoteDocument.load(row.snapshot)
                    doc.replace_text(doc.blocks()[400].id, f"A person's edit in round {round_}.")
                    notes.apply_ops(owner, note_id, ops=doc.export_updates(row.frontier), peer_id="bench",
                                    expected_frontier=row.frontier)
                decision = clock(name, lambda: review.accept(owner, turn.id))
                assert decision.merged == (name == "accept_merged")
            clock("revert", lambda: review.revert(owner, turn.id))
        return {name: percentiles(values) for name, values in samples.items()}
    finally:
        store.close()


def main() -> None:
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        figures["sqlite"] = run(sqlite_url(Path(tmp) / "review.db"))
    with postgres() as url:
        figures["postgres"] = run(url)
    path = write_result("review", {"note_blocks": BLOCKS, "blocks_read_by_session": READ_NOTES * READ_BLOCKS,
                                   **figures},
                        {"every_call_p95_ms_sqlite": "well under 250 for a 500-block note"})
    print(path.read_text())


if __name__ == "__main__":
    main()
