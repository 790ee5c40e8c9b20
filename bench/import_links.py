"""Import truth for a Markdown folder of title-named notes: do the ledger's link rows agree with the
edges the import made?

A generated folder of 3,000 notes whose files are named by date and id and whose frontmatter names
them (``title: Entry 17``); each links two others by title — one written in another case — and one
title no note has. Imported through ``bench/import.py``'s ``run_case`` (a fresh SQLite deployment,
embeddings off). A link row saying ``unresolved_wikilink`` for a title some note of the folder has is
false (the write path makes that edge by title); before the fix every link was such a row, 6,000 of
them here.

Target: zero false rows, and exactly one true row per note (the title nobody has).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import write_result  # noqa: E402

NOTES = 3_000
MISSING = "No such entry"


def generate_folder(root: Path, notes: int = NOTES) -> set[str]:
    """The folder, and the titles its notes have."""
    titles = {f"Entry {i}" for i in range(notes)}
    for i in range(notes):
        path = root / "journal" / f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}-{i * 7919 % 100_000:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntitle: Entry {i}\n---\n\nAfter [[Entry {(i + 1) % notes}]] and "
                        f"[[entry {(i + 7) % notes}]], not [[{MISSING}]].\n", encoding="utf-8")
    return titles


def main() -> int:
    run_case = importlib.import_module("bench.import").run_case
    with tempfile.TemporaryDirectory(prefix="fastpad-bench-links-") as tmp:
        titles = generate_folder(Path(tmp) / "folder")
        result = run_case(str(Path(tmp) / "folder"), None)
    unresolved = result["unresolved_link_targets"]
    false_rows = [target for target in unresolved if target.casefold() in {t.casefold() for t in titles}]
    figures = {"notes": NOTES, "links_by_title": 2 * NOTES, "status": result["status"],
               "notes_per_s": result["notes_per_s"], "unresolved_targets": unresolved,
               "false_unresolved_targets": len(false_rows), "link_rows": result["link_rows"],
               "by_reason": result["by_reason"]}
    print(write_result("import_links", figures, {"false_unresolved_targets": 0}))
    print(f"{NOTES} title-named notes: {len(false_rows)} false unresolved targets; unresolved: {unresolved}; "
          f"rows by reason: {result['by_reason']}")
    return 0 if not false_rows and result["by_reason"].get("unresolved_wikilink") == NOTES else 1


if __name__ == "__main__":
    sys.exit(main())
