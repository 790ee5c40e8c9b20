// Runs the caret scenarios of tests/web/test_carets_model.py on the browser's document model
// (web/src/model: NoteModel and carets.js, on npm loro-crdt) and prints what each gave, one JSON
// object: {scenario: result}. Two people, B holding a caret, A editing; A's edits reach B as an
// import of A's update, as they do through the server.
//
//   node tests/web/carets_driver.mjs
import { readFile } from "node:fs/promises";

const WEB = new URL("../../web/", import.meta.url);
const loro = await import(new URL("node_modules/loro-crdt/web/index.js", WEB).href);
await loro.default({ module_or_path: await readFile(new URL("node_modules/loro-crdt/web/loro_wasm_bg.wasm", WEB)) });
const { NoteModel } = await import(new URL("src/model/note.js", WEB).href);
const { caretAt, place, textBlockId } = await import(new URL("src/model/carets.js", WEB).href);

// B's note with `texts` as its blocks, and A's copy of it.
function twoPeople(texts) {
  const b = new NoteModel();
  texts.forEach((text, index) => b.insertBlock(index, { text }));
  const a = NoteModel.fromExport(b.doc.export({ mode: "snapshot" }));
  return { a, b, ids: b.ids().slice() };
}

// B takes a caret, A edits, B imports A's edit: where B's caret is now, with the block's text.
function afterAEdits(texts, [block, offset], edit) {
  const { a, b, ids } = twoPeople(texts);
  const caret = caretAt(b, ids[block], offset);
  const since = a.doc.oplogVersion();
  edit(a, ids);
  b.importUpdates(a.doc.export({ mode: "update", from: since }));
  const at = place(b, caret);
  return at && { block: b.indexOf(at.id), offset: at.offset, text: b.block(at.id).text };
}

// B types `typed` at its caret after A's edit arrived: B's block as it reads then.
function typedAfter(texts, caretAtStart, edit, typed) {
  const { a, b, ids } = twoPeople(texts);
  const caret = caretAt(b, ids[caretAtStart[0]], caretAtStart[1]);
  const since = a.doc.oplogVersion();
  edit(a, ids);
  b.importUpdates(a.doc.export({ mode: "update", from: since }));
  const at = place(b, caret);
  b.insertText(at.id, at.offset, typed);
  return b.block(at.id).text;
}

// Where an undo, then a redo, of B's own edit leaves the caret: the end of the text each put back
// (or where it took text away), as the editor reads it from the step's events.
function undoRedo(text, edit) {
  const b = new NoteModel();
  const id = b.insertBlock(0, { text });
  const undo = new loro.UndoManager(b.doc, { mergeInterval: 0 });
  edit(b, id);
  const end = (changes) => changes.textEnd && { block: b.indexOf(textBlockId(b, changes.textEnd.container)), offset: changes.textEnd.offset };
  const undone = b.observe(() => undo.undo());
  const afterUndo = { text: b.block(id).text, at: end(undone) };
  const redone = b.observe(() => undo.redo());
  return { undo: afterUndo, redo: { text: b.block(id).text, at: end(redone) } };
}

const results = {
  insertBefore: afterAEdits(["hello world"], [0, 5], (a, ids) => a.insertText(ids[0], 0, "XX ")),
  insertAtTheCaret: afterAEdits(["hello world"], [0, 5], (a, ids) => a.insertText(ids[0], 5, "YY")),
  insertAfter: afterAEdits(["hello world"], [0, 5], (a, ids) => a.insertText(ids[0], 8, "ZZ")),
  atTheStart: afterAEdits(["hello"], [0, 0], (a, ids) => a.insertText(ids[0], 0, "Q")),
  deleteBefore: afterAEdits(["hello world"], [0, 8], (a, ids) => a.deleteText(ids[0], 0, 3)),
  deleteAcrossTheCaret: afterAEdits(["hello world"], [0, 5], (a, ids) => a.deleteText(ids[0], 3, 5)),
  afterAnEmoji: afterAEdits(["a😀b"], [0, 3], (a, ids) => a.insertText(ids[0], 0, "Z")),
  splitBefore: afterAEdits(["hello world"], [0, 8], (a, ids) => a.split(ids[0], 6)),
  splitAfter: afterAEdits(["hello world"], [0, 3], (a, ids) => a.split(ids[0], 6)),
  joinedOntoThePrevious: afterAEdits(["first", "second"], [1, 2], (a, ids) => a.join(ids[0], ids[1])),
  movedBlock: afterAEdits(["one", "two", "three"], [0, 2], (a, ids) => a.move(ids[0], 2)),
  deletedBlock: afterAEdits(["one", "two"], [1, 2], (a, ids) => a.deleteBlock(ids[1])),
  typedAfterAnInsertion: typedAfter(["Opening. B: . Closing."], [0, 12], (a, ids) => a.insertText(ids[0], 0, "A says "), "bbb"),
  undoRedoTyping: undoRedo("hello world", (b, id) => b.insertText(id, 5, " there")),
  undoRedoDeletion: undoRedo("hello big world", (b, id) => b.deleteText(id, 6, 4)),
};
process.stdout.write(JSON.stringify(results) + "\n");
