"""Note engine: a 2,000-block note built, serialized, parsed, edited and synced.

Targets (issue 2): parse and serialize of a 2,000-block note under 50 ms each;
10,000 single-character edits under 100 ms.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import timed, write_result  # noqa: E402
from fastpad.notes import Block, NoteDocument, NoteMeta, parse_markdown, serialize_markdown  # noqa: E402
from fastpad.notes.markdown_reader import read_markdown  # noqa: E402

BLOCKS = 2_000
EDITS = 10_000


def sample_blocks(count: int) -> list[Block]:
    """A realistic mix: headings, prose, lists, tasks, code, quotes and table rows."""
    blocks: list[Block] = []
    while len(blocks) < count:
        n = len(blocks)
        blocks += [
            Block(None, "heading", f"Section {n}", {"level": 2}),
            Block(None, "paragraph", f"Paragraph {n} explains *why* the retrieval arm uses `rank` fusion, see [docs](https://example.com/{n})."),
            Block(None, "list_item", f"first point {n}"),
            Block(None, "task", f"follow up {n}", {"checked": n % 2 == 0}),
            Block(None, "code", f"def f{n}():\n    return {n}", {"language": "python"}),
            Block(None, "quote", f"a quoted line {n}"),
            Block(None, "table_row", "| key | value |", {"header": True, "delimiter": "| --- | --- |"}),
            Block(None, "table_row", f"| k{n} | v \\| {n} |"),
        ]
    return blocks[:count]


def main() -> None:
    meta = NoteMeta("Benchmark note", ("Project",), {"status": "active"})
    doc = NoteDocument.new(meta, sample_blocks(BLOCKS), peer_id=1)
    blocks = doc.blocks()
    markdown = serialize_markdown(meta, blocks)
    assert parse_markdown(markdown).blocks == blocks

    figures = {
        "build_2000_blocks": timed(lambda: NoteDocument.new(meta, sample_blocks(BLOCKS), peer_id=1), repeats=3),
        "serialize_2000_blocks": timed(lambda: serialize_markdown(meta, blocks)),
        "parse_2000_blocks": timed(lambda: parse_markdown(markdown)),
        # The general reader alone, for comparison: what the canonical fast path saves.
        "parse_2000_blocks_markdown_it_reader": timed(lambda: read_markdown(markdown, 1)),
        "markdown_bytes": len(markdown.encode()),
    }

    target = doc.blocks()[1].id

    def ten_thousand_edits() -> None:
        editor = NoteDocument.load(doc.snapshot(), peer_id=2)
        for i in range(EDITS):
            editor.insert_text(target, i % 40, "x")

    figures["edits_10000_single_char"] = timed(ten_thousand_edits, repeats=3)

    editor = NoteDocument.load(doc.snapshot(), peer_id=3)
    since = editor.frontier()
    keystrokes = []
    for i in range(1_000):
        before = editor.frontier()
        editor.insert_text(target, 0, "y")
        keystrokes.append(editor.export_updates(before))
    figures["export_update_since_version"] = timed(lambda: editor.export_updates(since))
    figures["snapshot_export"] = timed(doc.snapshot)
    figures["snapshot_load"] = timed(lambda: NoteDocument.load(doc.snapshot()).blocks())

    def import_keystrokes() -> None:
        replica = NoteDocument.load(doc.snapshot(), peer_id=4)
        for blob in keystrokes:
            replica.apply_update(blob)

    figures["apply_1000_keystroke_updates"] = timed(import_keystrokes, repeats=3)
    path = write_result(
        "notes",
        figures,
        {"parse_2000_blocks_ms": 50, "serialize_2000_blocks_ms": 50, "edits_10000_single_char_ms": 100},
    )
    print(path.read_text())


if __name__ == "__main__":
    main()
