// Replays edit scripts on the browser's document model (web/src/model), for
// tests/web/test_model_parity.py, which replays the same scripts on fastpad/notes/document.py.
//
//   node tests/web/model_driver.mjs < scripts.jsonl
//
// One script per input line, one answer per output line, in order, so a single process can
// serve a whole test module (the answer to a line is written before the next line is read).
//
//   in:  {"base": base64 Loro update, "edits": [edit, ...]}
//   out: {"blocks": model.blocks(), "title": model.title, "update": base64 of the doc's
//         export({mode: "update"}), "ids": {label: block id}}
//        or {"error": message, "at": index of the edit that threw}
//
// Blocks are named by label: a base block's label is its id; a block an edit creates gets the
// label the edit gives it ("as"), since its fresh ULID differs between the JS and Python runs.
// Edits (offsets and lengths in UTF-16 code units, "offset16"/"length16" when the script has
// both units, else "offset"/"length"):
//
//   {op: "insertBlock", index, block: {type, text, attrs}, id?, as}
//   {op: "insertText", ref, offset, text}        {op: "deleteText", ref, offset, length}
//   {op: "replaceText", ref, text}               {op: "setBlock", ref, type?, attrs?}
//   {op: "deleteBlock", ref}                     {op: "move", ref, index}
//   {op: "split", ref, offset, tail?, as}        {op: "join", first, second}
//   {op: "paste", index, refs, cut, keepIds, as: [labels]}    {op: "setTitle", title}
//
// A copy pastes model.block(ref) for each ref at `index`; a cut deletes the refs first, then
// pastes them with keepIds at `index` (an index of the note without them).
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";

const WEB = new URL("../../web/", import.meta.url);
// The same file note.js resolves "loro-crdt/web" to, so one module instance and one wasm.
const loro = await import(new URL("node_modules/loro-crdt/web/index.js", WEB).href);
await loro.default({ module_or_path: await readFile(new URL("node_modules/loro-crdt/web/loro_wasm_bg.wasm", WEB)) });
const { NoteModel } = await import(new URL("src/model/note.js", WEB).href);

const fromBase64 = (text) => Uint8Array.from(Buffer.from(text, "base64"));
const toBase64 = (bytes) => Buffer.from(bytes).toString("base64");
const units = (edit, key) => edit[`${key}16`] ?? edit[key];

function apply(model, edit, ids) {
  const id = (label) => {
    if (!(label in ids)) ids[label] = label; // a base block: its label is its id
    return ids[label];
  };
  switch (edit.op) {
    case "insertBlock":
      ids[edit.as] = model.insertBlock(edit.index, { ...edit.block, ...(edit.id ? { id: edit.id } : {}) });
      return;
    case "insertText":
      return model.insertText(id(edit.ref), units(edit, "offset"), edit.text);
    case "deleteText":
      return model.deleteText(id(edit.ref), units(edit, "offset"), units(edit, "length"));
    case "replaceText":
      return model.replaceText(id(edit.ref), edit.text);
    case "setBlock":
      return model.setBlock(id(edit.ref), { ...(edit.type ? { type: edit.type } : {}), attrs: edit.attrs ?? {} });
    case "deleteBlock":
      return model.deleteBlock(id(edit.ref));
    case "move":
      return model.move(id(edit.ref), edit.index);
    case "split":
      ids[edit.as] = model.split(id(edit.ref), units(edit, "offset"), edit.tail ?? {});
      return;
    case "join":
      return model.join(id(edit.first), id(edit.second));
    case "paste": {
      const blocks = edit.refs.map((label) => model.block(id(label)));
      if (edit.cut) for (const block of blocks) model.deleteBlock(block.id);
      const pasted = model.pasteBlocks(edit.index, blocks, { keepIds: Boolean(edit.cut || edit.keepIds) });
      edit.as.forEach((label, i) => (ids[label] = pasted[i]));
      return;
    }
    case "setTitle":
      return model.setTitle(edit.title);
    default:
      throw new Error(`unknown edit ${edit.op}`);
  }
}

function run(script) {
  const model = NoteModel.fromExport(fromBase64(script.base));
  const ids = {};
  for (const [at, edit] of script.edits.entries()) {
    try {
      apply(model, edit, ids);
    } catch (error) {
      return { error: String(error?.message ?? error), at };
    }
  }
  return { blocks: model.blocks(), title: model.title, update: toBase64(model.doc.export({ mode: "update" })), ids };
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!line.trim()) continue;
  let answer;
  try {
    answer = run(JSON.parse(line));
  } catch (error) {
    answer = { error: String(error?.stack ?? error), at: null };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
