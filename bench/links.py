"""Links and the graph: the write path's link step, one-hop reads, rename and
forward-link resolution, on a workspace of 5,000 linked notes, both backends.

What it shows: the link step a note write pays (a 50-block note holding 20
links, re-projected after a one-block edit); `neighbors` for a typical note and
for a hub with 1,000 backlinks (first page of 200, as an agent); a rename of
that hub (old title kept as an alias: no incoming link is rewritten); creating
the note 1,000 forward links were waiting for (they resolve in the same
transaction).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import percentiles, write_result  # noqa: E402
from bench.servers import postgres  # noqa: E402
from fastpad.knowledge.graph import GraphService  # noqa: E402
from fastpad.knowledge.link_projection import project_links  # noqa: E402
from fastpad.knowledge.notes import NoteService  # noqa: E402
from fastpad.notes import Block, new_id  # noqa: E402
from fastpad.security.principals import Principal  # noqa: E402
from fastpad.security.scopes import GRAPH_READ, NOTES_READ, NOTES_WRITE  # noqa: E402
from fastpad.store import Actor, BlockRow, NoteWrite, open_store, sqlite_url  # noqa: E402
from fastpad.store import utcnow  # noqa: E402

NOTES = 5_000
LINKS_PER_NOTE = 3
HUB_BACKLINKS = 1_000
SAMPLES = 200


class _Rollback(Exception):
    pass


def sample(fn, n: int = SAMPLES) -> dict[str, float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return percentiles(samples)


def run(url: str) -> dict:
    store = open_store(url)
    rng = random.Random(4)
    try:
        workspace_id = new_id()
        with store.write(workspace_id) as tx:
            tx.insert_workspace("bench", utcnow())
        person = Principal(workspace_id, "person", new_id(), None, frozenset({NOTES_READ, NOTES_WRITE, GRAPH_READ}))
        agent = Principal(workspace_id, "agent", new_id(), new_id(), frozenset({GRAPH_READ}))
        notes, graph = NoteService(store), GraphService(store)
        titles = [f"Note {i}" for i in range(NOTES)]
        ids = []
        for i, title in enumerate(titles):
            text = " ".join(f"[[{rng.choice(titles)}]]" for _ in range(LINKS_PER_NOTE))
            blocks = [Block(None, "paragraph", f"Paragraph of {title}: see {text}.")]
            if i < HUB_BACKLINKS:
                blocks.append(Block(None, "paragraph", "About the [[Hub]] and the [[Awaited]]."))
            ids.append(notes.create(person, title=title, blocks=blocks).id)
        hub = notes.create(person, title="Hub").id
        typical = ids[HUB_BACKLINKS + 1]

        # The link step alone, for a one-block edit of a 50-block note holding 20 links (rolled back).
        doc_blocks = [Block(new_id(), "paragraph", f"block {i} " + (f"[[{rng.choice(titles)}]]" if i % 5 == 0 else "")
                            + (f" @{rng.choice(titles).replace(' ', '_')}" if i % 5 == 1 else "")) for i in range(50)]
        big = notes.create(person, title="Big note", blocks=doc_blocks).id
        actor = Actor("person", person.principal_id, None, "human_typed")

        def link_step() -> None:
            rows = [BlockRow(b.id, i, b.type, b.text + (" edited [[Note 7]]" if i == 10 else ""), dict(b.attrs),
                             "human_typed", "human_accepted") for i, b in enumerate(doc_blocks)]
            write = NoteWrite(note_id=big, kind="ops", at=utcnow(), actor=actor, expected_frontier="x",
                              title="Big note", blocks=rows)
            try:
                with store.write(workspace_id) as tx:
                    project_links(tx, write)
                    raise _Rollback
            except _Rollback:
                pass

        figures = {
            "link_step_50_blocks_20_links": sample(link_step),
            "neighbors_typical_note_agent": sample(lambda: graph.neighbors(agent, typical)),
            "neighbors_hub_1000_backlinks_first_200_agent": sample(lambda: graph.neighbors(agent, hub)),
            "links_listing_typical_note_person": sample(lambda: graph.links(person, typical)),
        }
        counter = iter(range(10**6))
        figures["rename_hub_with_1000_incoming"] = sample(
            lambda: notes.rename(person, hub, f"Hub {next(counter)}"), n=50)
        start = time.perf_counter()
        awaited = notes.create(person, title="Awaited").id
        figures["create_note_resolving_1000_forward_links_ms"] = round((time.perf_counter() - start) * 1000, 3)
        assert len(graph.links(person, awaited).backlinks) == HUB_BACKLINKS
        assert len(graph.neighbors(agent, hub, direction="in", limit=1000)) == HUB_BACKLINKS
        return figures
    finally:
        store.close()


def main() -> None:
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        figures["sqlite"] = run(sqlite_url(Path(tmp) / "links.db"))
    with postgres() as url:
        figures["postgres"] = run(url)
    path = write_result(
        "links", {"notes": NOTES, "links_per_note": LINKS_PER_NOTE, "hub_backlinks": HUB_BACKLINKS, **figures},
        {"link_step": "a small share of a note write", "neighbors_p95_ms": "a few ms, independent of workspace size",
         "rename": "O(1) in the number of incoming links"},
    )
    print(path.read_text())


if __name__ == "__main__":
    main()
