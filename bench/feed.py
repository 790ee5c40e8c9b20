"""Change feed: a page read at 100,000 changes, for a workspace token and for a
token limited to 3 notes whose changes are spread thinly through the feed.

Target (issue 4): a page (100 changes) in well under 20 ms on SQLite; a
note-scoped read costs one bounded window of the feed (SCAN_WINDOW rows),
however thinly its notes are spread.
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import percentiles, write_result  # noqa: E402
from bench.servers import postgres  # noqa: E402
from fastpad.knowledge.changes import ChangeFeedService, encode_cursor  # noqa: E402
from fastpad.notes import new_id  # noqa: E402
from fastpad.security.principals import Principal  # noqa: E402
from fastpad.security.scopes import NOTES_READ  # noqa: E402
from fastpad.store import Actor, open_store, sqlite_url  # noqa: E402

CHANGES = 100_000
SCOPED_NOTES = 3
SCOPED_EVERY = 10_000  # one change in this many is about a scoped note
SAMPLES = 200


def seed(store) -> tuple[str, list[str]]:
    workspace_id = new_id()
    scoped = [new_id() for _ in range(SCOPED_NOTES)]
    others = [new_id() for _ in range(1_000)]
    actor = Actor("person", new_id(), None, "human_typed")
    at = datetime.now(timezone.utc)
    with store.write(workspace_id) as tx:
        tx.insert_workspace("bench", at)
    for start in range(0, CHANGES, 10_000):
        with store.write(workspace_id) as tx:
            for i in range(start, start + 10_000):
                note_id = scoped[(i // SCOPED_EVERY) % SCOPED_NOTES] if i % SCOPED_EVERY == 0 else others[i % 1_000]
                tx.feed.append("ops", at=at, actor=actor, note_id=note_id, block_ids=[new_id()])
    return workspace_id, scoped


def sample(fn) -> dict[str, float]:
    samples = []
    for _ in range(SAMPLES):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return percentiles(samples)


def run(url: str) -> dict:
    store = open_store(url)
    try:
        workspace_id, scoped = seed(store)
        feed = ChangeFeedService(store)
        everyone = Principal(workspace_id, "person", new_id(), None, frozenset({NOTES_READ}))
        limited = Principal(workspace_id, "agent", new_id(), new_id(), frozenset({NOTES_READ}),
                            note_ids=frozenset(scoped))
        middle = encode_cursor(CHANGES // 2)
        seen, cursor = 0, None
        while True:  # the scoped token reads every one of its changes, a window at a time
            page = feed.changes(limited, cursor, 100)
            seen, cursor = seen + len(page.items), page.next_cursor
            if not page.has_more:
                break
        assert seen == CHANGES // SCOPED_EVERY and cursor == encode_cursor(CHANGES)
        return {
            "workspace_first_page_100": sample(lambda: feed.changes(everyone, None, 100)),
            "workspace_page_100_mid_feed": sample(lambda: feed.changes(everyone, middle, 100)),
            "workspace_at_head": sample(lambda: feed.changes(everyone, encode_cursor(CHANGES), 100)),
            "scoped_3_notes_first_window": sample(lambda: feed.changes(limited, None, 100)),
            "scoped_3_notes_window_mid_feed": sample(lambda: feed.changes(limited, middle, 100)),
        }
    finally:
        store.close()


def main() -> None:
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        figures["sqlite"] = run(sqlite_url(Path(tmp) / "feed.db"))
    with postgres() as url:
        figures["postgres"] = run(url)
    path = write_result("feed", {"changes": CHANGES, **figures},
                        {"page_p95_ms_sqlite": "well under 20", "scoped_window_p95_ms_sqlite": "well under 20"})
    print(path.read_text())


if __name__ == "__main__":
    main()
