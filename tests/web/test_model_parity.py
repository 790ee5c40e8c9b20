"""The browser's document model (web/src/model, NoteModel on npm loro-crdt) is the server's
(fastpad/notes/document.py, NoteDocument), edit for edit.

Each script is applied twice from the same base note (a ``NoteDocument.new(...).export_updates()``):
here with NoteDocument's methods, and in Node by tests/web/model_driver.mjs with NoteModel's.
Then, for the same edits:

(a) the JS blocks are the Python blocks: same order, types, texts and attrs (type-exact), the
    same ids for every block that keeps one (base blocks, first halves of splits, cut-pasted
    blocks, explicit ids); where an edit mints an id (an insert without one, a split's tail, a
    copy) each side has a fresh ULID, different from every other id;
(b) the JS update imports into a Python doc loaded from the base, which reads back exactly the
    JS blocks and title;
(c) the canonical Markdown (``serialize_markdown``, as NoteService.markdown writes it) of that
    imported doc is byte-identical to the natively edited doc's, once its fresh ids are mapped
    to the JS ones.

Blocks are named in scripts by label: a base block's label is its id, a created block's label
is the one the edit gives it. Offsets are code points for Python; the driver gets UTF-16 ones.

One deliberate difference: an editor split (NoteModel.split) numbers an ordered item's tail
``number + 1`` and takes tail overrides, while NoteDocument.split keeps the attrs as they are.
The Python replay of a split therefore follows it with ``set_block`` on the tail to reach the
editor's result (see ``test_split_differs_deliberately_for_ordered_items``).
"""

from __future__ import annotations

import base64
import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastpad.notes import NoteDocument, serialize_markdown
from fastpad.notes.blocks import BLOCK_TYPES, Block, NoteMeta
from fastpad.notes.ids import is_ulid
from tests import node as project_node

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
DRIVER = Path(__file__).resolve().with_name("model_driver.mjs")


# -- the Node side --------------------------------------------------------------------------


class Driver:
    """One `node model_driver.mjs` for the module: a script per line in, an answer per line out."""

    def __init__(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen([str(project_node.NODE), str(DRIVER)], cwd=ROOT, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self._stderr, text=True, encoding="utf-8")

    def run(self, base: bytes, edits: list[dict[str, Any]]) -> dict[str, Any]:
        script = {"base": base64.b64encode(base).decode(), "edits": edits}
        self._process.stdin.write(json.dumps(script) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            self._stderr.seek(0)
            pytest.fail(f"model_driver.mjs exited ({self._process.poll()}): {self._stderr.read().decode()}")
        return json.loads(line)

    def close(self) -> None:
        self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._stderr.close()


@pytest.fixture(scope="module")
def driver() -> Iterator[Driver]:
    project_node.require("Replaying edits on the browser's document model (tests/web/model_driver.mjs)")
    if not (WEB / "node_modules" / "loro-crdt" / "web" / "loro_wasm_bg.wasm").is_file():
        project_node.npm_ci(WEB)
    running = Driver()
    yield running
    running.close()


# -- the Python side ------------------------------------------------------------------------


def _utf16(text: str, code_points: int) -> int:
    return len(text[:code_points].encode("utf-16-le")) // 2


class Native:
    """Applies a script with NoteDocument's methods; records the ids it mints per label.

    Applied first: it adds the UTF-16 ``offset16``/``length16`` the driver uses to each edit."""

    def __init__(self, base: bytes) -> None:
        self.doc = NoteDocument.load(base)
        self.ids: dict[str, str] = {}  # label -> id, for blocks the script created
        self.fresh: set[str] = set()  # labels whose id was minted (so differs between runs)
        self.kept: dict[str, str] = {}  # a cut-pasted block's label -> the label it was cut as

    def id(self, label: str) -> str:
        return self.ids.get(label, label)

    def label(self, block_id: str) -> str:
        return next((label for label, known in self.ids.items() if known == block_id), block_id)

    def order(self) -> list[str]:
        return [block.id for block in self.doc.blocks()]

    def _mint(self, label: str, block_id: str) -> None:
        self.ids[label] = block_id
        self.fresh.add(label)

    def apply(self, edit: dict[str, Any]) -> None:
        doc, op = self.doc, edit["op"]
        if op == "insertBlock":
            order = self.order()
            anchor = order[edit["index"] - 1] if edit["index"] else None
            given = edit["block"]
            block_id = doc.insert_after(anchor, Block(edit.get("id"), given["type"], given["text"], given["attrs"]))
            if edit.get("id"):
                self.ids[edit["as"]] = block_id
            else:
                self._mint(edit["as"], block_id)
        elif op == "insertText":
            block_id = self.id(edit["ref"])
            edit["offset16"] = _utf16(doc.block(block_id).text, edit["offset"])
            doc.insert_text(block_id, edit["offset"], edit["text"])
        elif op == "deleteText":
            block_id = self.id(edit["ref"])
            text = doc.block(block_id).text
            edit["offset16"] = _utf16(text, edit["offset"])
            edit["length16"] = _utf16(text, edit["offset"] + edit["length"]) - edit["offset16"]
            doc.delete_text(block_id, edit["offset"], edit["length"])
        elif op == "replaceText":
            doc.replace_text(self.id(edit["ref"]), edit["text"])
        elif op == "setBlock":
            doc.set_block(self.id(edit["ref"]), type=edit.get("type"), attrs=edit.get("attrs") or {})
        elif op == "deleteBlock":
            doc.delete(self.id(edit["ref"]))
        elif op == "move":
            block_id = self.id(edit["ref"])
            rest = [other for other in self.order() if other != block_id]
            doc.move_after(block_id, rest[edit["index"] - 1] if edit["index"] else None)
        elif op == "split":
            block_id = self.id(edit["ref"])
            head = doc.block(block_id)
            edit["offset16"] = _utf16(head.text, edit["offset"])
            tail_id = doc.split(block_id, edit["offset"])
            self._mint(edit["as"], tail_id)
            # The editor's tail: the next number for an ordered item, then the overrides.
            tail = edit.get("tail") or {}
            tail_type = tail.get("type") or head.type
            attrs = {"number": head.attrs["number"] + 1} if head.attrs.get("ordered") else {}
            attrs.update(tail.get("attrs") or {})
            attrs = {key: value for key, value in attrs.items() if key in BLOCK_TYPES[tail_type]}
            if tail_type != head.type or attrs:
                doc.set_block(tail_id, type=tail_type, attrs=attrs)
        elif op == "join":
            doc.join(self.id(edit["first"]), self.id(edit["second"]))
        elif op == "paste":
            ids = [self.id(label) for label in edit["refs"]]
            if edit.get("cut"):
                rest = [other for other in self.order() if other not in ids]
                doc.cut_paste(ids, rest[edit["index"] - 1] if edit["index"] else None)
                for label, source, block_id in zip(edit["as"], edit["refs"], ids):
                    self.ids[label] = block_id
                    self.kept[label] = source
            else:  # a copy, or a keepIds paste of blocks still in the note: new ids either way
                order = self.order()
                copies = doc.copy_blocks(ids, order[edit["index"] - 1] if edit["index"] else None)
                for label, block_id in zip(edit["as"], copies):
                    self._mint(label, block_id)
        elif op == "setTitle":
            meta = doc.meta
            doc.set_meta(NoteMeta(edit["title"], meta.types, meta.properties))
        else:
            raise AssertionError(f"unknown edit {op}")


# -- the comparison -------------------------------------------------------------------------


def _plain(block: Block | dict[str, Any], ids: dict[str, str] | None = None) -> dict[str, Any]:
    if isinstance(block, Block):
        block = {"id": block.id, "type": block.type, "text": block.text, "attrs": block.attrs}
    return {**block, "id": (ids or {}).get(block["id"], block["id"])}


def _canon(blocks: list[Any], ids: dict[str, str] | None = None) -> list[str]:
    # JSON tells true from 1, which dict equality does not.
    return [json.dumps(_plain(block, ids), sort_keys=True, ensure_ascii=False) for block in blocks]


def parity(driver: Driver, base: bytes, edits: list[dict[str, Any]], native: Native | None = None) -> dict[str, Any]:
    """Applies ``edits`` natively (unless ``native`` already did), then in JS, and checks (a)-(c)."""
    if native is None:
        native = Native(base)
        for edit in edits:
            native.apply(edit)
    js = driver.run(base, edits)
    script = json.dumps(edits, ensure_ascii=False)
    assert "error" not in js, f"NoteModel threw at edit {js.get('at')}: {js.get('error')}\n{script}"
    base_ids = {block.id for block in NoteDocument.load(base).blocks()}

    # (a) the same blocks; kept ids equal, minted ids fresh ULIDs on both sides.
    py_to_js: dict[str, str] = {}
    for label, py_id in native.ids.items():
        js_id = js["ids"][label]
        if label in native.kept:  # a cut keeps the id, the fresh one of a block the script made too
            source = native.kept[label]
            assert js_id == js["ids"].get(source, source) and py_id == native.id(source), (label, js_id, py_id)
        elif label in native.fresh:
            assert is_ulid(js_id) and js_id not in base_ids and js_id != py_id, (label, js_id, py_id)
            assert is_ulid(py_id) and py_id not in base_ids and js_id not in py_to_js.values(), (label, js_id, py_id)
            py_to_js[py_id] = js_id
        else:
            assert js_id == py_id, (label, js_id, py_id)
    js_ids = [block["id"] for block in js["blocks"]]
    assert all(is_ulid(block_id) for block_id in js_ids) and len(set(js_ids)) == len(js_ids)
    native_blocks = native.doc.blocks()
    assert _canon(js["blocks"]) == _canon(native_blocks, py_to_js)
    assert js["title"] == native.doc.meta.title

    # (b) the JS update imports into Python and reads back exactly the JS note.
    imported = NoteDocument.load(base)
    imported.apply_update(base64.b64decode(js["update"]))
    assert _canon(imported.blocks()) == _canon(js["blocks"])
    assert imported.meta == NoteMeta(js["title"], native.doc.meta.types, native.doc.meta.properties)

    # (c) one canonical Markdown, byte for byte.
    mapped = [Block(py_to_js.get(block.id, block.id), block.type, block.text, block.attrs) for block in native_blocks]
    assert serialize_markdown(imported.meta, imported.blocks()) == serialize_markdown(native.doc.meta, mapped)
    return js


# -- scripted cases -------------------------------------------------------------------------

BASE_META = NoteMeta("Retrieval design", ("Project",), {"status": "active", "tags": ["search", "loro"]})
BASE_BLOCKS = [
    Block(None, "heading", "Retrieval design", {"level": 2}),
    Block(None, "paragraph", "Naïve café notes, with *emphasis* and `code`."),
    Block(None, "list_item", "first step", {"ordered": True, "marker": ".", "number": 1}),
    Block(None, "list_item", "second step", {"ordered": True, "marker": ".", "number": 2}),
    Block(None, "task", "ship the engine", {"depth": 1}),
    Block(None, "quote", "a quote\nover two lines"),
    Block(None, "callout", "mind the gap", {"kind": "warning", "fold": "-", "title": "Careful"}),
    Block(None, "code", "print('hi')\n", {"language": "python"}),
    Block(None, "divider"),
    Block(None, "table_row", "| a | b |", {"header": True, "delimiter": "| --- | --- |"}),
    Block(None, "table_row", "| 1 | 2 |"),
]


@pytest.fixture(scope="module")
def base() -> tuple[bytes, list[str]]:
    doc = NoteDocument.new(BASE_META, BASE_BLOCKS)
    return doc.export_updates(), [block.id for block in doc.blocks()]


def test_every_edit_kind_lands_the_same(driver: Driver, base: tuple[bytes, list[str]]) -> None:
    update, ids = base
    h, p, l1, l2, task, quote, callout, code, divider, row1, row2 = ids
    explicit = "01JB2K7Q9XN4M8YV3TD0FZ5ER9"
    edits = [
        {"op": "insertText", "ref": p, "offset": 5, "text": "crème "},
        {"op": "deleteText", "ref": p, "offset": 0, "length": 2},
        {"op": "replaceText", "ref": h, "text": "Retrieval redesign, v2"},
        {"op": "setBlock", "ref": task, "attrs": {"checked": True}},
        {"op": "setBlock", "ref": quote, "type": "callout", "attrs": {"kind": "tip"}},
        {"op": "setBlock", "ref": callout, "type": "paragraph"},
        {"op": "setBlock", "ref": h, "type": "heading", "attrs": {"level": 3}},
        {"op": "insertBlock", "index": 0, "block": {"type": "paragraph", "text": "intro", "attrs": {}}, "as": "intro"},
        {"op": "insertBlock", "index": 3, "block": {"type": "task", "text": "new task", "attrs": {"checked": True}},
         "id": explicit, "as": "explicit"},
        {"op": "split", "ref": l2, "offset": 6, "as": "l2tail"},  # an ordered item: the tail is number 3
        {"op": "split", "ref": p, "offset": 10, "tail": {"type": "list_item", "attrs": {"marker": "*"}}, "as": "ptail"},
        {"op": "split", "ref": code, "offset": 0, "as": "codetail"},
        {"op": "join", "first": l1, "second": "l2tail"},
        {"op": "move", "ref": divider, "index": 0},
        {"op": "move", "ref": "intro", "index": 5},
        {"op": "paste", "index": 2, "refs": [row1, row2], "cut": False, "as": ["row1copy", "row2copy"]},
        {"op": "paste", "index": 1, "refs": [task, "explicit"], "cut": True, "as": ["taskcut", "explicitcut"]},
        {"op": "paste", "index": 0, "refs": [h], "keepIds": True, "as": ["hcopy"]},  # still in the note: a new id
        {"op": "deleteBlock", "ref": callout},
        {"op": "insertText", "ref": "ptail", "offset": 0, "text": "tail: "},
        {"op": "setTitle", "title": "Retrieval redesign"},
    ]
    js = parity(driver, update, edits)
    by_id = {block["id"]: block for block in js["blocks"]}
    assert by_id[l1]["text"] == "first step step"  # the first id survives the join
    assert by_id[l2]["text"] == "second"  # the first half of a split keeps its id
    assert l2 in by_id and js["ids"]["l2tail"] not in by_id
    assert by_id[js["ids"]["ptail"]]["type"] == "list_item" and by_id[js["ids"]["ptail"]]["attrs"]["marker"] == "*"
    assert js["ids"]["taskcut"] == task and js["ids"]["explicitcut"] == explicit  # a cut keeps its ids
    assert js["ids"]["hcopy"] != h and js["ids"]["row1copy"] != row1


def test_split_differs_deliberately_for_ordered_items(driver: Driver, base: tuple[bytes, list[str]]) -> None:
    """NoteModel.split gives an ordered item's tail the next number; NoteDocument.split keeps the
    attrs. The editor's behaviour, on purpose: this pins both sides of the difference."""
    update, ids = base
    l2 = ids[3]
    js = driver.run(update, [{"op": "split", "ref": l2, "offset": 6, "as": "tail"}])
    js_tail = next(block for block in js["blocks"] if block["id"] == js["ids"]["tail"])
    assert js_tail["attrs"]["number"] == 3 and js_tail["text"] == " step"
    native = NoteDocument.load(update)
    py_tail = native.block(native.split(l2, 6))
    assert py_tail.attrs["number"] == 2 and py_tail.text == " step"


def test_utf16_offsets_in_js_are_code_points_in_python(driver: Driver) -> None:
    blocks = [Block(None, "paragraph", "a😀b𝔘c"), Block(None, "paragraph", "😀😀")]
    doc = NoteDocument.new(NoteMeta("emoji"), blocks)
    first, second = (block.id for block in doc.blocks())
    edits = [
        {"op": "insertText", "ref": first, "offset": 2, "text": "🎉x"},
        {"op": "deleteText", "ref": first, "offset": 4, "length": 2},  # "b𝔘"
        {"op": "split", "ref": second, "offset": 1, "as": "tail"},
        {"op": "replaceText", "ref": first, "text": "a😀🎉 and more"},
        {"op": "join", "first": "tail", "second": first},
        {"op": "setTitle", "title": "emoji 😀"},
    ]
    js = parity(driver, doc.export_updates(), edits)
    assert [block["text"] for block in js["blocks"]] == ["😀", "😀a😀🎉 and more"]


# Two astral characters can share a surrogate half (😀 U+1F600 and 😃 U+1F603 share D83D): the
# splice must not stop inside the pair.
@pytest.mark.parametrize("old, new", [("a😀b", "a😃b"), ("x\U0001F600", "x\U00010600")])
def test_replace_text_swapping_one_astral_character_for_another(driver: Driver, old: str, new: str) -> None:
    doc = NoteDocument.new(NoteMeta(), [Block(None, "paragraph", old)])
    [block_id] = [block.id for block in doc.blocks()]
    parity(driver, doc.export_updates(), [{"op": "replaceText", "ref": block_id, "text": new}])


# -- random edit sequences ------------------------------------------------------------------

TYPES = sorted(BLOCK_TYPES)
ATTR_VARIANTS: dict[str, list[dict[str, Any]]] = {
    "heading": [{"level": 1}, {"level": 2}, {"level": 4}],
    "paragraph": [{}],
    "list_item": [{}, {"ordered": True, "marker": ".", "number": 1},
                  {"ordered": True, "marker": ")", "number": 7, "depth": 1}, {"marker": "*", "depth": 1}],
    "task": [{}, {"checked": True}, {"ordered": True, "marker": ".", "number": 2, "checked": True, "depth": 2}],
    "quote": [{}],
    "callout": [{}, {"kind": "warning", "fold": "-", "title": "Careful"}],
    "code": [{}, {"language": "python"}, {"fence": "~~~"}],
    "divider": [{}, {"marker": "***"}],
    "table_row": [{}, {"header": True, "delimiter": "| --- |"}],
}
KINDS = ["insertBlock", "insertText", "deleteText", "replaceText", "setBlock", "deleteBlock", "move", "split", "join",
         "paste", "setTitle"]


def steps(kinds: list[str], alphabet: str) -> st.SearchStrategy[list[tuple[str, int, int, int, str]]]:
    text = st.text(alphabet=alphabet, max_size=6)
    return st.lists(st.tuples(st.sampled_from(kinds), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99), text),
                    min_size=1, max_size=12)


RANDOM_BASE = NoteDocument.new(BASE_META, BASE_BLOCKS[:2] + BASE_BLOCKS[3:5] + BASE_BLOCKS[7:8]).export_updates()


def _variant(block_type: str, pick: int) -> dict[str, Any]:
    variants = ATTR_VARIANTS[block_type]
    return variants[pick % len(variants)]


def plan(native: Native, step: tuple[str, int, int, int, str], serial: int) -> dict[str, Any]:
    """A concrete, valid edit for the note as it now is, from one drawn step."""
    kind, a, b, c, text = step
    order = native.order()
    count = len(order)
    if count == 0 and kind != "setTitle":
        kind = "insertBlock"
    if count < 2 and kind == "join":
        kind = "split"
    label = f"new{serial}"
    if kind == "setTitle":
        return {"op": kind, "title": text}
    if kind == "insertBlock":
        block_type = TYPES[a % len(TYPES)]
        return {"op": kind, "index": b % (count + 1), "block": {"type": block_type, "text": text,
                                                                 "attrs": _variant(block_type, c)}, "as": label}
    ref_id = order[a % count]
    ref = native.label(ref_id)
    current = native.doc.block(ref_id).text
    if kind == "insertText":
        return {"op": kind, "ref": ref, "offset": b % (len(current) + 1), "text": text}
    if kind == "deleteText":
        offset = b % (len(current) + 1)
        return {"op": kind, "ref": ref, "offset": offset, "length": c % (len(current) - offset + 1)}
    if kind == "replaceText":
        start = b % (len(current) + 1)
        stop = start + c % (len(current) - start + 1)
        return {"op": kind, "ref": ref, "text": current[:start] + text + current[stop:]}
    if kind == "setBlock":
        block_type = None if c % 3 == 0 else TYPES[b % len(TYPES)]
        attrs = _variant(block_type or native.doc.block(ref_id).type, b // 3 + c)
        return {"op": kind, "ref": ref, **({"type": block_type} if block_type else {}), "attrs": attrs}
    if kind == "deleteBlock":
        return {"op": kind, "ref": ref}
    if kind == "move":
        return {"op": kind, "ref": ref, "index": b % count}
    if kind == "split":
        tail = None
        if c % 3 == 0:
            tail_type = TYPES[c // 3 % len(TYPES)]
            tail = {"type": tail_type, "attrs": _variant(tail_type, b)}
        return {"op": kind, "ref": ref, "offset": b % (len(current) + 1), "tail": tail, "as": label}
    if kind == "join":
        second = order[(a + 1 + b % (count - 1)) % count]
        return {"op": kind, "first": ref, "second": native.label(second)}
    # paste: a run of up to 3 blocks, copied, cut, or pasted with keepIds while still in the note
    start = a % count
    refs = [native.label(block_id) for block_id in order[start:start + 1 + c % 3]]
    mode = b % 3
    room = count - len(refs) if mode == 0 else count
    return {"op": kind, "index": (b // 3) % (room + 1), "refs": refs, "cut": mode == 0, "keepIds": mode == 1,
            "as": [f"{label}_{i}" for i in range(len(refs))]}


def replay(driver: Driver, drawn: list[tuple[str, int, int, int, str]]) -> None:
    native = Native(RANDOM_BASE)
    edits = []
    for serial, step in enumerate(drawn):
        edit = plan(native, step, serial)
        native.apply(edit)
        edits.append(edit)
    parity(driver, RANDOM_BASE, edits, native)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=steps(KINDS, "ab c\né中*_|#"))
def test_random_edit_sequences_land_the_same(driver: Driver, drawn: list[tuple[str, int, int, int, str]]) -> None:
    replay(driver, drawn)


# Astral characters: UTF-16 offsets in JS, code points in Python.
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=steps(KINDS, "ab😀😃𝔘é"))
def test_random_edits_of_astral_text_land_the_same(driver: Driver, drawn: list[tuple[str, int, int, int, str]]) -> None:
    replay(driver, drawn)
