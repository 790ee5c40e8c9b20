// A note as a Loro document, one to one with fastpad/notes/document.py:
//
//   blocks: MovableList of Map {id: ULID, type, text: Text, attrs: Map of primitives}
//   meta:   Map {title, types: List, properties: Map}
//
// The same operations with the same rules: a split keeps the id on the first half and
// gives the tail a new ULID; a join keeps the first id; a copy mints new ids; a cut-paste
// keeps them. Text offsets are UTF-16 code units here (the DOM's unit); the ops themselves
// are unit-independent, so Python reads them in code points.
//
// Every public edit commits once; `transact` groups several edits into one commit, which is
// one undo step and one update on the wire.
import { LoroDoc, LoroMap, LoroText } from "loro-crdt/web";
import { BLOCK_TYPES, normalizeAttrs, readBlock } from "./blocks.js";
import { frontierFromString, frontierToString } from "./frontier.js";
import { isUlid, newId } from "./ulid.js";

export class NoteModel {
  constructor(doc = new LoroDoc()) {
    this.doc = doc;
    this.list = doc.getMovableList("blocks");
    this.meta = doc.getMap("meta");
    this._ids = null; // block id per position, re-read after an import moved blocks
    this._positions = null;
    this._learnt = null; // ids read so far by blocksIn, front to back, while _ids is unknown
    this._depth = 0;
    this.beforeChange = null; // see observe
  }

  // A note from a Loro export: a snapshot, or updates that hold its whole history.
  static fromExport(bytes) {
    const model = new NoteModel();
    // No listener while it loads: Loro then builds no events for the whole note (on a large note
    // that was most of the time to open it), and a snapshot's state is decoded only when read.
    if (bytes?.length) model.doc.import(bytes);
    return model;
  }

  // Imports another peer's ops and says what they touched (see `observe`).
  importUpdates(bytes) {
    if (!bytes || !bytes.length) return { any: false, structural: false, meta: false, blocks: new Set() };
    return this.observe(() => this.doc.import(bytes));
  }

  // Runs a change made to the document other than through this model's edits — an import, an
  // undo or redo — and says what it touched, from Loro's events (emitted during the change):
  // `structural` when blocks were added, removed or moved (the block index is then re-read
  // when next needed), `blocks` the positions whose text, type or attrs changed, `meta` when
  // the title, types or properties did, `any` when anything at all did, and `textEnd` where
  // the change's last text edit ends ({container, offset}: after the last text it inserted,
  // else where it deleted) — where an undo or redo leaves the caret.
  // `beforeChange` (the editor's) runs first, while the document still reads as the screen does.
  observe(change) {
    const changes = { any: false, structural: false, meta: false, blocks: new Set(), textEnd: null };
    this.beforeChange?.();
    const unsubscribe = this.doc.subscribe((batch) => {
      for (const { path, target, diff } of batch.events) {
        changes.any = true;
        if (path[0] === "meta") changes.meta = true;
        else if (path.length === 1) changes.structural = true;
        else if (typeof path[1] === "number") changes.blocks.add(path[1]);
        if (diff.type === "text") changes.textEnd = textEditEnd(target, diff.diff) ?? changes.textEnd;
      }
    });
    try {
      change();
    } finally {
      unsubscribe();
      if (changes.structural) this._invalidate();
    }
    return changes;
  }

  // -- reading ---------------------------------------------------------------------

  get length() {
    return this.list.length;
  }

  ids() {
    if (this._ids === null) {
      this._ids = [];
      for (let i = 0; i < this.list.length; i++) {
        const item = this.list.get(i);
        const id = item instanceof LoroMap ? item.get("id") : null;
        this._ids.push(isUlid(id) ? id : null);
      }
    }
    return this._ids;
  }

  indexOf(id) {
    if (this._positions === null) {
      this._positions = new Map();
      this.ids().forEach((blockId, index) => blockId && this._positions.set(blockId, index));
    }
    const index = this._positions.get(id);
    if (index === undefined) throw new Error(`the note has no block ${id}`);
    return index;
  }

  // Whether this document holds every op of `frontier` (the wire form): a server's answer
  // naming a version this device has not pulled yet is newer than what it shows.
  holds(frontier) {
    try {
      this.doc.frontiersToVV(frontierFromString(frontier));
      return true;
    } catch {
      return false; // Loro: "Frontiers not found"
    }
  }

  has(id) {
    try {
      this.indexOf(id);
      return true;
    } catch {
      return false;
    }
  }

  mapOf(id) {
    return this.list.get(this.indexOf(id));
  }

  textOf(id) {
    const map = this.mapOf(id);
    const text = map.get("text");
    if (text instanceof LoroText) return text;
    // A plain string left by another peer becomes a text container in place.
    const replacement = map.setContainer("text", new LoroText());
    if (typeof text === "string" && text) replacement.insert(0, text);
    return replacement;
  }

  block(id) {
    return readBlock(this.mapOf(id).toJSON());
  }

  blockAt(index) {
    const item = this.list.get(index);
    return readBlock(item instanceof LoroMap ? item.toJSON() : null);
  }

  // Blocks start..end-1, each read on its own: cheap for a few, where blocks() decodes the whole
  // note. Reading a note front to back this way (the editor does, opening it) also builds the
  // id index, so the first edit after opening does not read every block once more.
  blocksIn(start, end) {
    const blocks = [];
    for (let i = start; i < end; i++) blocks.push(this.blockAt(i));
    if (this._ids === null) {
      if (start === 0) this._learnt = [];
      if (this._learnt?.length === start) {
        for (const block of blocks) this._learnt.push(isUlid(block.id) ? block.id : null);
        if (this._learnt.length === this.list.length) [this._ids, this._learnt] = [this._learnt, null];
      }
    }
    return blocks;
  }

  blocks() {
    // The document's JSON, not the list's: measured in loro-crdt 1.17.1, about half the time on a
    // freshly loaded 2,000-block note (80 vs 140 ms in Node), which is what opening one costs.
    const blocks = this.doc.toJSON().blocks;
    return Array.isArray(blocks) ? blocks.map(readBlock) : [];
  }

  get title() {
    const title = this.meta.get("title");
    return typeof title === "string" ? title : "";
  }

  frontier() {
    return frontierToString(this.doc.oplogFrontiers());
  }

  // -- editing ---------------------------------------------------------------------

  transact(edit, origin) {
    this._depth += 1;
    try {
      return edit();
    } finally {
      this._depth -= 1;
      if (this._depth === 0) this.doc.commit(origin ? { origin } : undefined);
    }
  }

  setTitle(title) {
    this.transact(() => title !== this.title && this.meta.set("title", title));
  }

  insertBlock(index, { id = newId(), type = "paragraph", text = "", attrs = {} } = {}) {
    if (!Object.hasOwn(BLOCK_TYPES, type)) throw new Error(`unknown block type ${type}`);
    if (this.has(id)) throw new Error(`block ${id} is already in this note`);
    return this.transact(() => {
      const map = this.list.insertContainer(index, new LoroMap());
      map.set("id", id);
      map.set("type", type);
      const loroText = map.setContainer("text", new LoroText());
      if (text) loroText.insert(0, text);
      const attrMap = map.setContainer("attrs", new LoroMap());
      for (const [key, value] of Object.entries(normalizeAttrs(type, attrs))) attrMap.set(key, value);
      this._orderInsert(index, id);
      return id;
    });
  }

  insertText(id, offset, text) {
    this.transact(() => this.textOf(id).insert(offset, text));
  }

  deleteText(id, offset, length) {
    if (length > 0) this.transact(() => this.textOf(id).delete(offset, length));
  }

  // Makes the block read `next` by the one splice that turns the old text into it (common
  // prefix and suffix kept), so concurrent edits elsewhere in the block survive the merge.
  replaceText(id, next) {
    const text = this.textOf(id);
    const previous = text.toString();
    if (previous === next) return false;
    let start = 0;
    const shortest = Math.min(previous.length, next.length);
    while (start < shortest && previous.charCodeAt(start) === next.charCodeAt(start)) start++;
    let end = 0;
    while (end < shortest - start && previous.charCodeAt(previous.length - 1 - end) === next.charCodeAt(next.length - 1 - end)) end++;
    // Never split a surrogate pair: two emoji can share a half, and Loro edits whole code points.
    if (start > 0 && isHighSurrogate(previous.charCodeAt(start - 1))) start--;
    if (end > 0 && isLowSurrogate(previous.charCodeAt(previous.length - end))) end--;
    this.transact(() => {
      if (previous.length - start - end > 0) text.delete(start, previous.length - start - end);
      const inserted = next.slice(start, next.length - end);
      if (inserted) text.insert(start, inserted);
    });
    return true;
  }

  // Changes a block's type and/or some attrs; attrs the new type lacks are dropped and
  // those it adds take their defaults (document.py set_block).
  setBlock(id, { type, attrs = {} } = {}) {
    const current = this.block(id);
    const nextType = type ?? current.type;
    if (!Object.hasOwn(BLOCK_TYPES, nextType)) throw new Error(`unknown block type ${nextType}`);
    const merged = normalizeAttrs(nextType, { ...current.attrs, ...attrs });
    this.transact(() => {
      const map = this.mapOf(id);
      if (map.get("type") !== nextType) map.set("type", nextType);
      let attrMap = map.get("attrs");
      if (!(attrMap instanceof LoroMap)) attrMap = map.setContainer("attrs", new LoroMap());
      const written = attrMap.toJSON();
      for (const key of Object.keys(written)) if (!(key in merged)) attrMap.delete(key);
      for (const [key, value] of Object.entries(merged)) if (written[key] !== value) attrMap.set(key, value);
    });
  }

  deleteBlock(id) {
    this.transact(() => {
      const index = this.indexOf(id);
      this.list.delete(index, 1);
      this._orderDelete(index);
    });
  }

  // Moves a block to `target` (its index once moved), keeping its id and container.
  move(id, target) {
    const source = this.indexOf(id);
    if (target === source || target < 0 || target >= this.length) return;
    this.transact(() => {
      this.list.move(source, target);
      this._orderMove(source, target);
    });
  }

  // Splits at `offset`: the id stays with the first half; the tail is a new block of the same
  // type and attrs (the next number, for an ordered item). Returns the tail's id.
  split(id, offset, tail = {}) {
    const block = this.block(id);
    const index = this.indexOf(id);
    return this.transact(() => {
      this.textOf(id).delete(offset, block.text.length - offset);
      const attrs = { ...block.attrs, ...(block.attrs.ordered ? { number: block.attrs.number + 1 } : {}) };
      return this.insertBlock(index + 1, {
        type: tail.type ?? block.type,
        text: block.text.slice(offset),
        attrs: { ...attrs, ...(tail.attrs ?? {}) },
      });
    });
  }

  // Appends the second block's text to the first and deletes the second; the first id survives.
  join(firstId, secondId) {
    if (firstId === secondId) throw new Error("a block cannot be joined with itself");
    const tail = this.block(secondId).text;
    this.transact(() => {
      const head = this.textOf(firstId);
      head.insert(head.length, tail);
      this.deleteBlock(secondId);
    });
  }

  // Pastes copies after `index - 1`: a copy is a new block, so it gets a new ULID. A cut's blocks
  // keep theirs (`keepIds`) when they are no longer in the note.
  pasteBlocks(index, blocks, { keepIds = false } = {}) {
    return this.transact(() =>
      blocks.map((block, offset) =>
        this.insertBlock(index + offset, {
          id: keepIds && isUlid(block.id) && !this.has(block.id) ? block.id : newId(),
          type: block.type,
          text: block.text,
          attrs: block.attrs,
        }),
      ),
    );
  }

  // -- the block index -------------------------------------------------------------

  _invalidate() {
    this._ids = null;
    this._positions = null;
    this._learnt = null;
  }

  _orderInsert(index, id) {
    this._learnt = null;
    if (this._ids === null) return;
    this._ids.splice(index, 0, id);
    this._reindex(index, this._ids.length);
  }

  _orderDelete(index) {
    this._learnt = null;
    if (this._ids === null) return;
    const [id] = this._ids.splice(index, 1);
    this._positions?.delete(id);
    this._reindex(index, this._ids.length);
  }

  _orderMove(source, target) {
    this._learnt = null;
    if (this._ids === null) return;
    const [id] = this._ids.splice(source, 1);
    this._ids.splice(target, 0, id);
    this._reindex(Math.min(source, target), Math.max(source, target) + 1);
  }

  _reindex(start, stop) {
    if (this._positions === null) return;
    for (let i = start; i < stop; i++) if (this._ids[i]) this._positions.set(this._ids[i], i);
  }
}

// Where a text delta's edits end: after its last insertion, or where it last deleted.
function textEditEnd(container, delta) {
  let index = 0;
  let end = null;
  let inserted = false;
  for (const op of delta) {
    if (op.retain !== undefined) index += op.retain;
    else if (op.insert !== undefined) [index, end, inserted] = [index + op.insert.length, index + op.insert.length, true];
    else if (op.delete !== undefined && !inserted) end = index;
  }
  return end === null ? null : { container, offset: end };
}

const isHighSurrogate = (code) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code) => code >= 0xdc00 && code <= 0xdfff;
