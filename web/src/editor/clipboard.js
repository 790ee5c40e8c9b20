// Copy, cut and paste of whole blocks. Inside one block the browser copies the text and a cut
// is an input; a selection over several blocks is copied as blocks (CLIPBOARD_TYPE beside plain
// text), and a cut of them pasted back into the same note is a move: they keep their ids.
import { clearBlockSelection } from "./block_selection.js";
import { selectionOffsets } from "./dom.js";

export const CLIPBOARD_TYPE = "application/x-fastpad-blocks"; // {blocks: [{type, text, attrs}], note?, cut?}

// The whole blocks a selection touches, when it spans more than one.
export function selectedBlocks(view) {
  const selection = document.getSelection();
  if (!selection || selection.rangeCount === 0 || (selection.isCollapsed && !view.blockSelection)) return null;
  const first = view._blockOf(selection.anchorNode);
  const last = view._blockOf(selection.focusNode);
  if (!first || !last || (first === last && !view.blockSelection)) return null;
  let [from, to] = [view.model.indexOf(first.dataset.id), view.model.indexOf(last.dataset.id)];
  if (from > to) [from, to] = [to, from];
  const blocks = [];
  for (let i = from; i <= to; i++) blocks.push(view.model.blockAt(i));
  return blocks;
}

export function onCopy(view, event, cut) {
  const blocks = selectedBlocks(view);
  if (!blocks) return; // inside one block: the browser copies the text, and a cut is an input
  event.preventDefault();
  event.clipboardData.setData("text/plain", blocks.map((block) => block.text).join("\n\n"));
  event.clipboardData.setData(CLIPBOARD_TYPE, JSON.stringify({ note: view.noteId, cut, blocks }));
  if (!cut) return;
  clearBlockSelection(view);
  const previous = view._neighbour(blocks[0].id, -1);
  view.model.transact(() => blocks.forEach((block) => view.model.deleteBlock(block.id)));
  view.refresh();
  if (previous) view.focusBlock(previous.id, Infinity);
}

export function onPaste(view, event) {
  const element = view._blockOf(event.target);
  if (!element) return;
  const id = element.dataset.id;
  const block = view.model.block(id);
  const data = event.clipboardData;
  const copied = parseClipboard(data.getData(CLIPBOARD_TYPE));
  const plain = data.getData("text/plain");
  if (!copied && (block.type === "code" || !plain.includes("\n"))) {
    // Text into one block: insert it ourselves, so a large paste is one splice.
    event.preventDefault();
    const [start, end] = selectionOffsets(element.querySelector(".text")) ?? [block.text.length, block.text.length];
    return view._typeAt(id, start, end, plain.replace(/\r\n?/g, "\n"));
  }
  event.preventDefault();
  // Blocks copied here keep their ids only when cut from this note and no longer in it:
  // a cut-paste is a move; a copy always gets new ids.
  const blocks = copied
    ? copied.blocks
    : plain.replace(/\r\n?/g, "\n").split(/\n{2,}|\n/).filter((line) => line.trim() !== "").map((text) => ({ type: "paragraph", text, attrs: {} }));
  if (!blocks.length) return;
  const replaceEmpty = block.text === "" && block.type === "paragraph";
  const index = view.model.indexOf(id) + 1;
  const ids = view.model.transact(() => {
    const pasted = view.model.pasteBlocks(index, blocks, { keepIds: Boolean(copied?.cut && copied.note === view.noteId) });
    if (replaceEmpty) view.model.deleteBlock(id);
    return pasted;
  });
  view.refresh();
  view.focusBlock(ids[ids.length - 1], Infinity);
}

function parseClipboard(raw) {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw);
    return Array.isArray(value?.blocks) ? value : null;
  } catch {
    return null;
  }
}
