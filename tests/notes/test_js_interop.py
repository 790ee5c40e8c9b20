"""The wire format is Loro's: notes written by npm loro-crdt@1.17.1 (the browser editor's
package) import here and read the same, and ours import there.

tests/js/note.mjs builds and reads notes with loro-crdt. The committed fixture
(tests/js/fixture_update.bin + fixture_expected.json, made by ``node note.mjs fixture .``)
is checked without Node; the other tests regenerate with Node and compare both ways.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest
from loro import LoroDoc

from fastpad.notes import Block, NoteDocument, NoteMeta
from tests import node as project_node

JS = Path(__file__).resolve().parents[1] / "js"


def expected_blocks(value: dict) -> list[Block]:
    return [Block(b["id"], b["type"], b["text"], b["attrs"]) for b in value["blocks"]]


def expected_meta(value: dict) -> NoteMeta:
    meta = value["meta"]
    return NoteMeta(meta["title"], tuple(meta["types"]), meta["properties"])


def imported(update: bytes) -> NoteDocument:
    # An empty document, not NoteDocument.new(): a new note's own first change would
    # compete with the JS note's for the meta containers.
    doc = NoteDocument(LoroDoc())
    doc.apply_update(update)
    return doc


@pytest.fixture(scope="module")
def node():
    project_node.require("The JavaScript interop tests (tests/js/note.mjs)")
    if not (JS / "node_modules" / "loro-crdt").is_dir():
        project_node.npm_ci(JS)

    def run(*args: str, stdin: bytes | None = None) -> dict:
        done = subprocess.run([str(project_node.NODE), "note.mjs", *args], cwd=JS, input=stdin, capture_output=True,
                              check=True, timeout=60)
        return json.loads(done.stdout)

    return run


def test_committed_js_fixture_imports_and_reads_the_same():
    value = json.loads((JS / "fixture_expected.json").read_text())
    doc = imported((JS / "fixture_update.bin").read_bytes())
    assert doc.blocks() == expected_blocks(value)
    assert doc.meta == expected_meta(value)
    # JS numbers arrive as floats; integer attributes still read as ints.
    assert type(doc.blocks()[0].attrs["level"]) is int


def test_a_fresh_js_update_imports_and_matches_the_fixture(node):
    fresh = node("export")
    update = base64.b64decode(fresh["update"])
    doc = imported(update)
    assert doc.blocks() == expected_blocks(fresh["value"])
    assert doc.meta == expected_meta(fresh["value"])
    assert doc.frontier() == "fp1:" + fresh["frontier"]  # JS encodeFrontiers == ours

    committed = imported((JS / "fixture_update.bin").read_bytes())
    assert committed.blocks() == doc.blocks() and committed.meta == doc.meta


def test_a_python_update_imports_in_js_and_reads_the_same(node):
    doc = NoteDocument.new(
        NoteMeta("Py → JS", ("Project",), {"count": 3, "ratio": 0.5, "tags": ["a", "b"], "done": False}),
        [
            Block(None, "heading", "Plan 😀", {"level": 2}),
            Block(None, "task", "write the engine", {"checked": True, "depth": 1}),
            Block(None, "code", "x = 1\n", {"language": "python"}),
            Block(None, "table_row", "| a \\| b | c |", {"header": True, "delimiter": "| --- | --- |"}),
        ],
        peer_id=77,
    )
    heading, task, code, row = (block.id for block in doc.blocks())
    doc.move_after(heading, task)
    tail = doc.split(task, 6)
    doc.replace_text(tail, "the 𝔢ngine")
    doc.join(code, row)

    result = node("import", stdin=doc.export_updates())
    assert expected_blocks(result["value"]) == doc.blocks()
    assert expected_meta(result["value"]) == doc.meta
    assert "fp1:" + result["frontier"] == doc.frontier()
