// Carets that live in the document, not on the screen: a place in a block's text held as a Loro
// cursor, so it stays between the same characters through any merge — another person typing or
// deleting before it, an undo, a block moved — where an offset would point at different text.
//
// A caret is anchored to the character *before* it (the one just typed), not the one after: when
// someone else types at exactly the place where you are typing, your next keystroke still follows
// your own last one, and theirs go after. A caret at a block's start is anchored to the first
// character (or the empty text's start). Offsets are UTF-16 code units, as in the model.
//
// A split copies the tail into a new block (the model's rule: the first half keeps the id) and a
// join copies the second block's text into the first: no cursor can follow a copy, so `place`
// follows the caret's own text into the new tail, or into the block it was joined onto, using
// what the block said when the caret was taken.
import { LoroMap, LoroText } from "loro-crdt/web";

// The caret at `offset` in block `id`: {cursor, width, id, offset, text, next, previous} — the
// cursor, the width of the character it is anchored to (0 when anchored after the caret), and
// where it was taken: the block, the offset, the block's text and its neighbours' ids, for
// following a split or a join.
export function caretAt(model, id, offset) {
  const loroText = textOf(model, id);
  if (!loroText) return null; // a text another peer left as a plain string: nothing to hold on to
  const text = loroText.toString();
  offset = Math.max(0, Math.min(offset, text.length));
  const width = offset === 0 ? 0 : isLowSurrogate(text.charCodeAt(offset - 1)) && offset >= 2 ? 2 : 1;
  const cursor = loroText.getCursor(offset - width);
  if (!cursor) return null;
  const index = model.indexOf(id);
  const neighbour = (at) => (at >= 0 && at < model.length ? model.ids()[at] : null);
  return { cursor, width, id, offset, text, next: neighbour(index + 1), previous: neighbour(index - 1) };
}

// The caret as the other tabs in the note see it, {cursor, width: 0, id, offset, atEnd}: anchored
// to the character *after* it (or to the text's end), so the person's own typing goes in before
// the anchor and the caret others draw (cursorPlace) moves on with it as the text arrives there —
// the tab need not say where its caret is after every key.
export function cursorAt(model, id, offset) {
  const loroText = textOf(model, id);
  if (!loroText) return null;
  offset = Math.max(0, Math.min(offset, loroText.length));
  const cursor = loroText.getCursor(offset);
  return cursor ? { cursor, width: 0, id, offset, atEnd: offset === loroText.length } : null;
}

function textOf(model, id) {
  const loroText = model.mapOf(id).get("text");
  return loroText instanceof LoroText ? loroText : null;
}

// Where the caret is now: {id, offset}, or null when its text is gone and not followed anywhere.
export function place(model, caret) {
  if (!caret) return null;
  const at = cursorPlace(model, caret.cursor, caret.width);
  if (!at) return followJoin(model, caret);
  // Its anchored character was deleted: the caret is where it was — unless a split carried it
  // into a new block.
  if (at.deleted) return followSplit(model, caret, at.id) ?? { id: at.id, offset: at.offset };
  return { id: at.id, offset: at.offset };
}

// Where a bare cursor (another tab's caret: no text to follow a split or a join with) is now:
// {id, offset, deleted}, or null when its block is gone or its text not here yet.
export function cursorPlace(model, cursor, width) {
  let position;
  try {
    position = model.doc.getCursorPos(cursor);
  } catch {
    return null; // another tab's cursor on text whose change has not arrived here yet
  }
  const id = textBlockId(model, cursor.containerId());
  if (!position || !id || !model.has(id)) return null;
  // `update` is Loro's word that the anchored character was deleted: the offset is then where it was.
  if (position.update) return { id, offset: position.offset, deleted: true };
  return { id, offset: Math.min(position.offset + width, model.block(id).text.length), deleted: false };
}

// The id of the block whose text is the container `containerId`.
export function textBlockId(model, containerId) {
  const map = model.doc.getContainerById(containerId)?.parent();
  return map instanceof LoroMap ? map.get("id") : null;
}

// The caret's block now ends before the caret, and a new block right after it starts with the
// text that stood between the cut and the caret: that block is the split's tail.
function followSplit(model, caret, id) {
  const head = model.block(id).text;
  const cut = commonPrefix(caret.text, head);
  if (cut > caret.offset) return null;
  const index = model.indexOf(id);
  if (index + 1 >= model.length) return null;
  const tail = model.blockAt(index + 1);
  if (!tail.id || tail.id === caret.next || !tail.text.startsWith(caret.text.slice(cut, caret.offset))) return null;
  return { id: tail.id, offset: caret.offset - cut };
}

// The caret's block is gone, and the block that was before it holds its text: it was joined there.
function followJoin(model, caret) {
  if (!caret.previous || !model.has(caret.previous) || !caret.text) return null;
  const joined = model.block(caret.previous).text;
  const at = joined.lastIndexOf(caret.text);
  return at < 0 ? null : { id: caret.previous, offset: at + caret.offset };
}

function commonPrefix(a, b) {
  let n = 0;
  while (n < a.length && n < b.length && a.charCodeAt(n) === b.charCodeAt(n)) n++;
  return n;
}

const isLowSurrogate = (code) => code >= 0xdc00 && code <= 0xdfff;
