// Builds and reads Fastpad notes with loro-crdt, the package the browser editor uses,
// so tests/notes/test_js_interop.py can check both directions of the wire format.
//
//   node note.mjs export            -> stdout: {"update": base64, "frontier": base64url, "value": toJSON}
//   node note.mjs fixture DIR       -> DIR/fixture_update.bin and DIR/fixture_expected.json
//   node note.mjs import < update   -> stdout: {"frontier": base64url, "value": toJSON}
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LoroDoc, LoroList, LoroMap, LoroText, encodeFrontiers } from "loro-crdt";

// Fixed peer and ids keep the fixture byte-for-byte reproducible.
const PEER = 4242n;
const BLOCKS = [
  ["01JB2K7Q9XN4M8YV3TD0FZ5ER0", "heading", "Retrieval design", { level: 2 }],
  ["01JB2K7Q9XN4M8YV3TD0FZ5ER1", "paragraph", "Emoji 😀 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 count as one code point each.", {}],
  ["01JB2K7Q9XN4M8YV3TD0FZ5ER2", "task", "Ship the *engine*", { ordered: false, marker: "-", number: 1, depth: 1, checked: true }],
  ["01JB2K7Q9XN4M8YV3TD0FZ5ER3", "code", "print('hi')\n", { language: "python", fence: "```" }],
  ["01JB2K7Q9XN4M8YV3TD0FZ5ER4", "table_row", "| a \\| b | c |", { header: false, delimiter: "" }],
];

function buildNote() {
  const doc = new LoroDoc();
  doc.setPeerId(PEER);
  const meta = doc.getMap("meta");
  meta.set("title", "Retrieval design");
  meta.setContainer("types", new LoroList()).push("Project");
  const properties = meta.setContainer("properties", new LoroMap());
  properties.set("status", "active");
  properties.set("tags", ["search", "loro"]);

  const blocks = doc.getMovableList("blocks");
  BLOCKS.forEach(([id, type, text, attrs], index) => {
    const block = blocks.insertContainer(index, new LoroMap());
    block.set("id", id);
    block.set("type", type);
    block.setContainer("text", new LoroText()).insert(0, text);
    const attrMap = block.setContainer("attrs", new LoroMap());
    for (const [key, value] of Object.entries(attrs)) attrMap.set(key, value);
  });
  doc.commit();

  // Edits after the first commit: a move, a text edit behind astral characters
  // (JS offsets are UTF-16 here, Python's are code points), and a delete.
  blocks.move(4, 1);
  const paragraph = blocks.get(2).get("text");
  paragraph.insert(paragraph.toString().indexOf("and"), "— ");
  paragraph.delete(0, 6);
  doc.commit();
  return doc;
}

const frontier = (doc) => Buffer.from(encodeFrontiers(doc.oplogFrontiers())).toString("base64url");

const [mode, dir] = process.argv.slice(2);
if (mode === "export" || mode === "fixture") {
  const doc = buildNote();
  const update = doc.export({ mode: "update" });
  const value = doc.toJSON();
  if (mode === "fixture") {
    writeFileSync(join(dir, "fixture_update.bin"), update);
    writeFileSync(join(dir, "fixture_expected.json"), JSON.stringify(value, null, 2) + "\n");
  } else {
    process.stdout.write(JSON.stringify({ update: Buffer.from(update).toString("base64"), frontier: frontier(doc), value }));
  }
} else if (mode === "import") {
  const doc = new LoroDoc();
  doc.import(new Uint8Array(readFileSync(0)));
  process.stdout.write(JSON.stringify({ frontier: frontier(doc), value: doc.toJSON() }));
} else {
  process.stderr.write("usage: node note.mjs export | fixture DIR | import < update\n");
  process.exit(2);
}
