// Whole blocks selected at once (Escape, or Shift-arrows past a block's first or last line):
// the document selection spans them, so copy and cut see them, and the editor takes the keys
// (Shift-arrows, Delete). The selection is `view.blockSelection`: {anchor, focus} positions and
// the ids of those blocks, by which it is found again when blocks move under it — or null.
import { selectedBlocks } from "./clipboard.js";
import { isMac } from "./shortcuts.js";

// Selects the blocks from `anchor` to `focus` (positions).
export function selectBlocks(view, anchor, focus, { scroll = true } = {}) {
  view._showAll();
  const ids = view.model.ids();
  focus = Math.max(0, Math.min(ids.length - 1, focus));
  view.blockSelection = { anchor, focus, anchorId: ids[anchor], focusId: ids[focus] };
  const [from, to] = anchor <= focus ? [anchor, focus] : [focus, anchor];
  for (const [id, shown] of view.rendered) {
    const index = view.model.indexOf(id);
    shown.element.classList.toggle("selected", index >= from && index <= to);
  }
  const start = view.rendered.get(ids[anchor]).element.querySelector(".text");
  const end = view.rendered.get(ids[focus]).element.querySelector(".text");
  view.root.tabIndex = -1;
  view.root.focus({ preventScroll: true });
  document.getSelection().setBaseAndExtent(start, 0, end, end.childNodes.length);
  if (scroll) end.scrollIntoView({ block: "nearest" });
}

// After a change from elsewhere: the same blocks, wherever they are now (or none, if one is gone).
export function reselectBlocks(view) {
  const { anchorId, focusId } = view.blockSelection;
  if (view.model.has(anchorId) && view.model.has(focusId)) {
    selectBlocks(view, view.model.indexOf(anchorId), view.model.indexOf(focusId), { scroll: false });
  } else clearBlockSelection(view);
}

export function clearBlockSelection(view) {
  if (!view.blockSelection) return;
  view.blockSelection = null;
  for (const element of view.root.querySelectorAll(".block.selected")) element.classList.remove("selected");
}

export function blockSelectionKey(view, event) {
  const { anchor, focus } = view.blockSelection;
  const mod = isMac ? event.metaKey : event.ctrlKey;
  if (event.shiftKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
    event.preventDefault();
    selectBlocks(view, anchor, focus + (event.key === "ArrowUp" ? -1 : 1));
    return true;
  }
  if (mod && ["c", "x", "a"].includes(event.key.toLowerCase())) {
    if (event.key.toLowerCase() === "a") {
      event.preventDefault();
      selectBlocks(view, 0, view.model.length - 1);
    }
    return true; // copy and cut events follow, and see the blocks
  }
  if (event.key === "Backspace" || event.key === "Delete") {
    event.preventDefault();
    const blocks = selectedBlocks(view);
    const previous = blocks && view._neighbour(blocks[0].id, -1);
    clearBlockSelection(view);
    if (blocks) view.model.transact(() => blocks.forEach((block) => view.model.deleteBlock(block.id)));
    view.refresh();
    if (previous) view.focusBlock(previous.id, Infinity);
    else if (view.model.length) view.focusBlock(view.model.ids()[0], 0);
    return true;
  }
  if (["Shift", "Control", "Meta", "Alt"].includes(event.key)) return true;
  if (event.shiftKey && (event.key === "Home" || event.key === "End")) {
    event.preventDefault(); // whole blocks are already whole
    return true;
  }
  // Anything else leaves block selection, with the caret in the block it ended on.
  event.preventDefault();
  clearBlockSelection(view);
  const id = view.model.ids()[focus];
  if (id) view.focusBlock(id, event.key === "ArrowUp" || event.key === "ArrowLeft" ? 0 : Infinity);
  return true;
}
