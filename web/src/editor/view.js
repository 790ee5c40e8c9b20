// The block editor: a note's blocks as DOM, and a person's keystrokes as model edits.
//
// Each block is one element with its own plain-text editable area, so the browser does the
// typing (the screen changes first, with no work of ours in between) and we read the
// result back as one splice into the block's LoroText. Structure — Enter, Backspace at a
// start, shortcuts, the block menu, paste, moves — is ours: each gesture is one model
// transaction, which is one undo step and one update on the wire.
//
// Remote edits arrive as imports; `refresh()` then re-renders only the blocks whose type,
// attrs or text differ from what is on screen, and keeps the selection where it was in the
// text: it is held as Loro cursors across the change (selection.js), which survive the merge
// where an offset would not.
//
// The view knows the model and the DOM, never the network.
import { UndoManager } from "loro-crdt/web";
import { LIST_TYPES, MAX_DEPTH, tableCells } from "../model/blocks.js";
import { textBlockId } from "../model/carets.js";
import { blockSelectionKey, clearBlockSelection, reselectBlocks, selectBlocks } from "./block_selection.js";
import { onCopy, onPaste } from "./clipboard.js";
import { caretOffset, caretOnEdgeLine, placeCaret, readText, selectionOffsets } from "./dom.js";
import { PopupMenu } from "./menu.js";
import { choiceLabel, choiceText } from "./mention_menu.js";
import { blockKey, newGroup, renderBlock } from "./render.js";
import { HeldSelection } from "./selection.js";
import { TABLE_HEADER, TABLE_ROW, enterShortcutFor, filterMenu, isMac, shortcutFor } from "./shortcuts.js";

const GROUP_SIZE = 64; // blocks per rendering group (see _place)
const FIRST_GROUPS = 1; // groups shown before a note opens: more blocks than a tall screen holds
const TEXT_TYPES = new Set(["heading", "paragraph", "list_item", "task", "quote", "callout", "code", "table_row"]);
// The keys the editor acts on in a block; any other key is the browser's to type.
const EDITING_KEYS = new Set(["Enter", "Backspace", "Delete", "Tab", "Escape", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"]);

export class EditorView {
  // options.findNotes(query) → Promise<[{id, title}]>, for the [[ and @ picker;
  // options.findMentions(query) → the same with people beside the notes, for @ (mention_menu.js).
  // options.embed(block) → an element that shows the block in its place instead of its text
  // (a code block that embeds a collection), or null for the block as it is.
  constructor(root, model, { findNotes = async () => [], findMentions = findNotes, noteId = null, embed = () => null } = {}) {
    this.root = root;
    this.model = model;
    this.noteId = noteId;
    this.findNotes = findNotes;
    this.findMentions = findMentions;
    this.embed = embed;
    this.rendered = new Map(); // block id → {element, key}: what is on screen
    this.menu = new PopupMenu(document.body);
    this.trigger = null; // {kind: "block" | "link" | "mention", blockId, start}
    this.fillRun = null; // the rendering of a long note's later groups, while it goes on
    this.readOnly = false;
    this.annotators = new Map(); // the page's marks on blocks, by who sets them (setAnnotations)
    this.undo = new UndoManager(model.doc, { mergeInterval: 600, maxUndoSteps: 500 });
    this.selection = new HeldSelection(model, {
      root,
      blockOf: (node) => this._blockOf(node),
      textElement: (id) => {
        if (!this.rendered.has(id)) this._showAll();
        return this._textElement(id);
      },
      focus: (id, offset) => this.focusBlock(id, offset, { scroll: false }),
    });
    // Every change the screen did not make (an import, an undo) runs through model.observe,
    // which first lets the selection be taken while the screen still reads as the model does.
    model.beforeChange = () => this.selection.take();
    root.classList.add("editor");
    root.setAttribute("role", "textbox");
    root.setAttribute("aria-multiline", "true");
    this._listen();
    this.render();
  }

  destroy() {
    this._stopFilling();
    this.menu.element.remove();
    this.model.beforeChange = null;
    this.undo.free?.();
    this.root.replaceChildren();
  }

  // -- rendering --------------------------------------------------------------------

  // Shows the note: the first FIRST_GROUPS groups at once, read block by block (reading the
  // whole note at once costs a 2,000-block note a quarter of a second in the browser before
  // anything shows), then one group per task until all are in, so a person sees and can type
  // into the top of a long note while the rest arrives. Every group exists from the start, so
  // the scroll height is about right; anything that needs a block not yet shown — a refresh
  // that moved blocks, focusing or selecting it — shows the rest first.
  render() {
    this._stopFilling();
    this.rendered.clear();
    const groups = Math.max(1, Math.ceil(this.model.length / GROUP_SIZE));
    this.root.replaceChildren(...Array.from({ length: groups }, newGroup));
    this.filled = 0; // groups holding their blocks, from the top
    this._fill(FIRST_GROUPS);
    if (!this.model.length) this._ensureOneBlock();
    else this._fillLater();
  }

  // Renders the next `count` groups from the model as it is now.
  _fill(count) {
    const length = this.model.length;
    for (let n = 0; n < count && this.filled * GROUP_SIZE < length; n++) {
      const start = this.filled * GROUP_SIZE;
      const blocks = this.model.blocksIn(start, Math.min(length, start + GROUP_SIZE));
      let previous = start > 0 ? this.model.blockAt(start - 1) : null;
      this.root.children[this.filled].append(...blocks.map((block) => {
        const element = this._blockElement(block, previous);
        previous = block;
        return element;
      }));
      this.filled += 1;
    }
  }

  // From after the next frame, so the first groups are on screen before the rest is rendered.
  // A later render, refresh or _showAll ends the run (its steps see fillRun change).
  _fillLater() {
    if (this.filled * GROUP_SIZE >= this.model.length) return;
    const run = (this.fillRun = {});
    const step = () => {
      if (this.fillRun !== run) return;
      this._fill(1);
      if (this.filled * GROUP_SIZE < this.model.length) setTimeout(step, 0);
      else this.fillRun = null;
    };
    requestAnimationFrame(() => setTimeout(step, 0));
  }

  _stopFilling() {
    this.fillRun = null;
  }

  // Every block on screen now: for what needs a block the background fill has not reached.
  _showAll() {
    if (this.fillRun === null) return;
    this._stopFilling();
    this._fill(Infinity);
  }

  // Puts the block elements, in order, into groups of GROUP_SIZE. The browser lays out and
  // paints only the groups on screen (`content-visibility: auto` per group, see style.css), so
  // a keystroke in a note of thousands of blocks costs what one group costs. Elements already
  // in place are not touched; a block added or removed shifts one element per later group.
  _place(elements) {
    const needed = Math.max(1, Math.ceil(elements.length / GROUP_SIZE));
    while (this.root.children.length < needed) this.root.appendChild(newGroup());
    while (this.root.children.length > needed) this.root.lastElementChild.remove();
    for (let g = 0; g < needed; g++) {
      const group = this.root.children[g];
      const slice = elements.slice(g * GROUP_SIZE, (g + 1) * GROUP_SIZE);
      slice.forEach((element, i) => {
        const current = group.children[i];
        if (current !== element) group.insertBefore(element, current ?? null);
      });
      // What is left over belongs to later groups: hand it on, in order.
      const next = this.root.children[g + 1];
      while (group.children.length > slice.length) {
        const extra = group.lastElementChild;
        if (next) next.prepend(extra);
        else extra.remove();
      }
    }
  }

  // Brings the screen in line with the model after an import or an undo: only blocks that
  // changed are touched, and the selection keeps its place in the text. `changes` (what an
  // import touched, from NoteModel.importUpdates) narrows the work to those blocks when no block
  // was added, removed or moved — the common case of someone typing — so a large note costs no
  // more. Without `changes` it follows an edit of the editor's own, whose caller then places the
  // caret; the selection is taken from the screen here, where only that edit's text differs.
  refresh(changes = null) {
    if (changes && !changes.any) return;
    if (!changes) this.selection.take();
    if (changes && !changes.structural) return this._refreshBlocks(changes.blocks);
    this._stopFilling(); // every block is rendered below
    const blocks = this.model.blocks();
    const keep = new Set(blocks.map((block) => block.id).filter(Boolean));
    for (const [id, shown] of this.rendered) {
      if (!keep.has(id)) {
        shown.element.remove();
        this.rendered.delete(id);
      }
    }
    const elements = [];
    blocks.forEach((block, index) => {
      if (!block.id) return;
      const shown = this.rendered.get(block.id);
      let element = shown?.element;
      if (!shown || shown.key !== blockKey(block, blocks[index - 1])) {
        const replacement = this._blockElement(block, blocks[index - 1]);
        if (element) element.replaceWith(replacement);
        element = replacement;
      }
      elements.push(element);
    });
    this._place(elements);
    if (!blocks.length) this._ensureOneBlock();
    this._restoreSelection();
  }

  _refreshBlocks(positions) {
    const touched = new Set();
    for (const position of positions) touched.add(position).add(position + 1); // a row's look follows its neighbour
    for (const position of touched) {
      if (position >= this.model.length) continue;
      const block = this.model.blockAt(position);
      const previous = position > 0 ? this.model.blockAt(position - 1) : null;
      const shown = this.rendered.get(block.id);
      if (shown && shown.key !== blockKey(block, previous)) shown.element.replaceWith(this._blockElement(block, previous));
    }
    this._restoreSelection();
  }

  _restoreSelection() {
    this.selection.restore();
    if (this.blockSelection) reselectBlocks(this);
  }

  _ensureOneBlock() {
    // An empty note still gets a paragraph to type into.
    const id = this.model.insertBlock(0, { type: "paragraph" });
    this._place([this._blockElement(this.model.block(id), null)]);
  }

  _blockElement(block, previous) {
    const element = renderBlock(block, previous, this.embed(block));
    if (!element.classList.contains("block-embed")) {
      this._setEditable(element);
      this._annotate(element, block.id);
    }
    this.rendered.set(block.id, { element, key: blockKey(block, previous) });
    return element;
  }

  // What the page shows on a block besides the block itself — a provenance mark in the margin,
  // a proposal waiting on it — never part of the note: `annotate(id)` gives the elements for a
  // block (fresh ones each call), and the editor keeps them on the block through re-renders and
  // takes no keystroke, paste or drop from inside them. Each `source` (a proposal's review, the
  // comments) keeps its own function; a block shows what all of them give.
  setAnnotations(annotate, source = "review") {
    this.annotators.set(source, annotate);
    for (const [id, { element }] of this.rendered) this._annotate(element, id);
  }

  _annotate(element, id) {
    for (const old of element.querySelectorAll(":scope > .annotation")) old.remove();
    for (const node of [...this.annotators.values()].flatMap((annotate) => annotate(id) ?? [])) {
      node.classList.add("annotation");
      node.contentEditable = "false";
      element.appendChild(node);
    }
  }

  // A trashed note is shown read-only: no caret in its text, its controls disabled. Blocks
  // rendered later (a long note filling in, a remote change) follow the same flag.
  setReadOnly(readOnly) {
    if (readOnly === this.readOnly) return;
    this.readOnly = readOnly;
    this.root.classList.toggle("read-only", readOnly);
    for (const element of this.root.querySelectorAll(".block")) this._setEditable(element);
  }

  _setEditable(element) {
    const text = element.querySelector(".text:not(.divider-line):not(.embed)");
    if (text) text.contentEditable = this.readOnly ? "false" : "plaintext-only";
    for (const control of element.querySelectorAll("input, select")) control.disabled = this.readOnly;
  }

  // -- where the person is ------------------------------------------------------------

  _blockOf(node) {
    const start = node?.nodeType === Node.ELEMENT_NODE ? node : node?.parentElement;
    if (start?.closest?.(".annotation")) return null; // the page's, not the block's (see setAnnotations)
    const element = start?.closest?.(".block");
    return element && this.root.contains(element) ? element : null;
  }

  _textElement(id) {
    return this.rendered.get(id)?.element.querySelector(".text") ?? null;
  }

  // A block's text element if it is on screen (a long note may not have shown it yet), else null.
  shownText(id) {
    return this._textElement(id);
  }

  focusBlock(id, offset = 0, { scroll = true } = {}) {
    if (!this.rendered.has(id)) this._showAll();
    const element = this._textElement(id);
    if (!element) return;
    element.focus({ preventScroll: true });
    if (element.isContentEditable) placeCaret(element, offset === Infinity ? readText(element).length : offset);
    if (scroll) element.scrollIntoView({ block: "nearest" });
  }

  // -- listening ----------------------------------------------------------------------

  _listen() {
    const root = this.root;
    root.addEventListener("mousedown", () => clearBlockSelection(this));
    root.addEventListener("input", (event) => this._onInput(event));
    root.addEventListener("compositionstart", () => (this.selection.composing = true));
    root.addEventListener("compositionend", (event) => {
      this.selection.composing = false;
      this._onInput(event);
    });
    root.addEventListener("keydown", (event) => this._onKeyDown(event));
    root.addEventListener("beforeinput", (event) => {
      if (event.inputType === "historyUndo" || event.inputType === "historyRedo") {
        event.preventDefault();
        this._history(event.inputType === "historyUndo");
      }
    });
    root.addEventListener("change", (event) => this._onControl(event));
    root.addEventListener("copy", (event) => onCopy(this, event, false));
    root.addEventListener("cut", (event) => onCopy(this, event, true));
    root.addEventListener("paste", (event) => onPaste(this, event));
    root.addEventListener("focusout", () => queueMicrotask(() => !root.contains(document.activeElement) && this._closeMenu()));
    root.addEventListener("dragstart", (event) => {
      const block = event.target.closest?.(".handle") && this._blockOf(event.target);
      if (!block) return;
      event.dataTransfer.setData("text/x-fastpad-move", block.dataset.id);
      event.dataTransfer.effectAllowed = "move";
    });
    root.addEventListener("dragover", (event) => {
      if (event.dataTransfer.types.includes("text/x-fastpad-move")) event.preventDefault();
    });
    root.addEventListener("drop", (event) => {
      const id = event.dataTransfer.getData("text/x-fastpad-move");
      const target = this._blockOf(event.target);
      if (!id || !target || !this.model.has(id)) return;
      event.preventDefault();
      const box = target.getBoundingClientRect();
      const after = event.clientY > box.top + box.height / 2;
      const from = this.model.indexOf(id);
      let to = this.model.indexOf(target.dataset.id) + (after ? 1 : 0);
      if (from < to) to -= 1;
      this.model.move(id, to);
      this.refresh();
    });
  }

  _onInput(event) {
    if (event.isComposing) return;
    const control = event.target.closest?.(".code-language");
    if (control) return this._onControl(event);
    const element = this._blockOf(event.target);
    const text = element?.querySelector(".text");
    if (!element || !text || !text.isContentEditable) return;
    const id = element.dataset.id;
    const next = readText(text);
    if (!this.model.replaceText(id, next)) return;
    const block = this.model.block(id);
    this._remember(id, block);
    const caret = caretOffset(text) ?? next.length;
    if (!this._applyShortcut(block, next, caret)) this._updateTrigger(id, next, caret, event.data);
  }

  _remember(id, block = this.model.block(id)) {
    const shown = this.rendered.get(id);
    const index = this.model.indexOf(id);
    if (shown) shown.key = blockKey(block, index > 0 ? this.model.blockAt(index - 1) : null);
    const text = this._textElement(id);
    if (text) text.classList.toggle("empty", block.text === "");
  }

  _applyShortcut(block, text, caret) {
    const { id } = block;
    if (block.type !== "paragraph") return false;
    const prefix = text.slice(0, caret);
    const shortcut = shortcutFor(prefix);
    if (!shortcut) return false;
    this.model.transact(() => {
      this.model.deleteText(id, 0, prefix.length);
      this.model.setBlock(id, shortcut);
    });
    this.refresh();
    this.focusBlock(id, 0);
    return true;
  }

  _onControl(event) {
    const element = this._blockOf(event.target);
    if (!element) return;
    const id = element.dataset.id;
    if (event.target.matches(".task-box")) this.model.setBlock(id, { attrs: { checked: event.target.checked } });
    else if (event.target.matches(".callout-kind")) this.model.setBlock(id, { attrs: { kind: event.target.value } });
    else if (event.target.matches(".code-language")) {
      this.model.setBlock(id, { attrs: { language: event.target.value.trim() } });
      this._remember(id);
      return; // the field keeps its focus and its caret
    } else return;
    this.refresh();
  }

  // -- keys -----------------------------------------------------------------------------

  _onKeyDown(event) {
    if (event.isComposing || event.target.closest?.(".code-language, .callout-kind")) return;
    if (this.menu.open && this.menu.key(event)) return event.preventDefault();
    if (this.blockSelection && blockSelectionKey(this, event)) return;
    const element = this._blockOf(event.target);
    if (!element) return;
    const id = element.dataset.id;
    const mod = isMac ? event.metaKey : event.ctrlKey;
    const key = event.key;
    if (mod && !event.altKey && (key === "z" || key === "Z" || key === "y")) {
      event.preventDefault();
      return this._history(key === "z" && !event.shiftKey);
    }
    if (mod && event.shiftKey && (key === "ArrowUp" || key === "ArrowDown")) {
      event.preventDefault();
      return this._moveBlock(id, key === "ArrowUp" ? -1 : 1);
    }
    // Typing a character reads nothing here: the input event that follows carries it to the model.
    if (!EDITING_KEYS.has(key)) return;
    const block = this.model.block(id);
    const text = element.querySelector(".text");
    if (block.type === "divider") return this._dividerKey(event, id);
    const range = selectionOffsets(text);
    if (!range) return;
    const [start, end] = range;
    const collapsed = start === end;
    if (key === "Enter" && !event.shiftKey && !mod) {
      event.preventDefault();
      return this._enter(block, start, end);
    }
    if (key === "Enter" && mod && block.type === "code") {
      event.preventDefault();
      return this._insertAfter(id, { type: "paragraph" });
    }
    if (key === "Backspace" && collapsed && start === 0) {
      event.preventDefault();
      return this._backspaceAtStart(block);
    }
    if (key === "Delete" && collapsed && start === block.text.length) {
      const next = this._neighbour(id, 1);
      if (next && TEXT_TYPES.has(next.type) && next.type !== "code") {
        event.preventDefault();
        this.model.join(id, next.id);
        this.refresh();
        this.focusBlock(id, start);
      }
      return;
    }
    if (key === "Tab") {
      event.preventDefault();
      if (LIST_TYPES.has(block.type)) return this._indent(block, event.shiftKey ? -1 : 1, start);
      if (block.type === "code" && !event.shiftKey) return this._typeAt(block.id, start, end, "  ");
      return;
    }
    if (event.shiftKey && (key === "ArrowUp" || key === "ArrowDown")) {
      // Past the block's first or last line, a selection becomes a selection of whole blocks.
      const step = key === "ArrowUp" ? -1 : 1;
      const index = this.model.indexOf(id);
      if (caretOnEdgeLine(text, step < 0 ? "first" : "last") && this._neighbour(id, step)) {
        event.preventDefault();
        selectBlocks(this, index, index + step);
      }
      return;
    }
    if (key === "Escape") {
      event.preventDefault();
      return selectBlocks(this, this.model.indexOf(id), this.model.indexOf(id));
    }
    if (key === "ArrowUp" || key === "ArrowLeft") {
      const atEdge = key === "ArrowUp" ? caretOnEdgeLine(text, "first") : collapsed && start === 0;
      const previous = this._neighbour(id, -1);
      if (atEdge && previous && !event.shiftKey) {
        event.preventDefault();
        this.focusBlock(previous.id, Infinity);
      }
      return;
    }
    if (key === "ArrowDown" || key === "ArrowRight") {
      const atEdge = key === "ArrowDown" ? caretOnEdgeLine(text, "last") : collapsed && start === block.text.length;
      const next = this._neighbour(id, 1);
      if (atEdge && next && !event.shiftKey) {
        event.preventDefault();
        this.focusBlock(next.id, 0);
      }
    }
  }

  _dividerKey(event, id) {
    if (event.key === "Backspace" || event.key === "Delete") {
      event.preventDefault();
      const previous = this._neighbour(id, -1) ?? this._neighbour(id, 1);
      this.model.deleteBlock(id);
      this.refresh();
      if (previous) this.focusBlock(previous.id, Infinity);
    } else if (event.key === "Enter") {
      event.preventDefault();
      this._insertAfter(id, { type: "paragraph" });
    } else if (event.key === "ArrowUp" || event.key === "ArrowDown") {
      const neighbour = this._neighbour(id, event.key === "ArrowUp" ? -1 : 1);
      if (neighbour) {
        event.preventDefault();
        this.focusBlock(neighbour.id, event.key === "ArrowUp" ? Infinity : 0);
      }
    }
  }

  _typeAt(id, start, end, inserted) {
    this.model.transact(() => {
      this.model.deleteText(id, start, end - start);
      this.model.insertText(id, start, inserted);
    });
    this.refresh();
    this.focusBlock(id, start + inserted.length);
  }

  _enter(block, start, end) {
    const { id } = block;
    if (block.type === "code") {
      // Enter is a new line in code; a third Enter on the closing empty lines leaves the block.
      if (start === end && start === block.text.length && block.text.endsWith("\n\n")) {
        this.model.transact(() => {
          this.model.deleteText(id, block.text.length - 2, 2);
          this._insertAfter(id, { type: "paragraph" });
        });
        return;
      }
      return this._typeAt(id, start, end, "\n");
    }
    if (block.type === "paragraph" && start === block.text.length) {
      const shortcut = enterShortcutFor(block.text);
      if (shortcut) {
        this.model.transact(() => {
          this.model.deleteText(id, 0, block.text.length);
          this.model.setBlock(id, shortcut);
          if (shortcut.type === "divider") this._insertAfter(id, { type: "paragraph" });
        });
        this.refresh();
        if (shortcut.type === "code") this.focusBlock(id, 0);
        return;
      }
    }
    const emptyContainer = block.text === "" && ["list_item", "task", "quote", "callout"].includes(block.type);
    if (emptyContainer) {
      // Enter on an empty item leaves the list: outdent first, then become a paragraph.
      if (LIST_TYPES.has(block.type) && block.attrs.depth > 0) return this._indent(block, -1, 0);
      this.model.setBlock(id, { type: "paragraph" });
      this.refresh();
      return this.focusBlock(id, 0);
    }
    if (block.type === "table_row" && start === block.text.length) {
      const cells = tableCells(block.text).length;
      return this._insertAfter(id, { type: "table_row", text: "|" + "  |".repeat(cells), attrs: TABLE_ROW.attrs }, 2);
    }
    if (start === 0 && end === 0 && block.text !== "") {
      // Enter at the very start opens a block above; the text keeps its block (and its id).
      const index = this.model.indexOf(id);
      this.model.insertBlock(index, { type: tailType(block), attrs: tailAttrs(block) });
      this.refresh();
      return this.focusBlock(id, 0);
    }
    const tailId = this.model.transact(() => {
      if (end > start) this.model.deleteText(id, start, end - start);
      return this.model.split(id, start, { type: tailType(block), attrs: tailAttrs(block) });
    });
    this.refresh();
    this.focusBlock(tailId, 0);
  }

  _insertAfter(id, block, caret = 0) {
    const newId = this.model.insertBlock(this.model.indexOf(id) + 1, block);
    this.refresh();
    this.focusBlock(newId, caret);
    return newId;
  }

  _backspaceAtStart(block) {
    const { id } = block;
    if (LIST_TYPES.has(block.type) && block.attrs.depth > 0) return this._indent(block, -1, 0);
    if (block.type !== "paragraph" && block.type !== "table_row") {
      this.model.setBlock(id, { type: "paragraph" });
      this.refresh();
      return this.focusBlock(id, 0);
    }
    const previous = this._neighbour(id, -1);
    if (!previous) return;
    if (previous.type === "divider") {
      this.model.deleteBlock(previous.id);
      this.refresh();
      return this.focusBlock(id, 0);
    }
    const caret = previous.text.length;
    this.model.join(previous.id, id);
    this.refresh();
    this.focusBlock(previous.id, caret);
  }

  _indent(block, step, caret) {
    const depth = Math.max(0, Math.min(MAX_DEPTH, block.attrs.depth + step));
    if (depth !== block.attrs.depth) this.model.setBlock(block.id, { attrs: { depth } });
    this.refresh();
    this.focusBlock(block.id, caret);
  }

  _moveBlock(id, step) {
    const caret = caretOffset(this._textElement(id)) ?? 0;
    this.model.move(id, this.model.indexOf(id) + step);
    this.refresh();
    this.focusBlock(id, caret);
  }

  _neighbour(id, step) {
    const index = this.model.indexOf(id) + step;
    return index >= 0 && index < this.model.length ? this.model.blockAt(index) : null;
  }

  _history(undo) {
    // Through the model, so an undone or redone block move, insertion or removal re-reads its index.
    const changes = this.model.observe(() => (undo ? this.undo.undo() : this.undo.redo()));
    this.refresh(changes);
    // The caret goes after the text the step put back, or where it took text away; a step that
    // touched no text (a move, a type) leaves the selection where it was held.
    const id = changes.textEnd && textBlockId(this.model, changes.textEnd.container);
    if (id && this.model.has(id)) this.focusBlock(id, changes.textEnd.offset);
  }

  // -- the block menu and the note picker --------------------------------------------

  _updateTrigger(id, text, caret, typed) {
    const before = text.slice(0, caret);
    if (typed === "/" && (caret === 1 || /\s/.test(before[caret - 2] ?? ""))) {
      this.trigger = { kind: "block", blockId: id, start: caret - 1 };
    } else if (typed === "[" && before.endsWith("[[")) {
      this.trigger = { kind: "link", blockId: id, start: caret - 2 };
    } else if (typed === "@" && (caret === 1 || /\s/.test(before[caret - 2] ?? ""))) {
      this.trigger = { kind: "mention", blockId: id, start: caret - 1 };
    }
    const trigger = this.trigger;
    if (!trigger || trigger.blockId !== id) return this._closeMenu();
    const opener = trigger.kind === "link" ? "[[" : trigger.kind === "block" ? "/" : "@";
    if (caret <= trigger.start || text.slice(trigger.start, trigger.start + opener.length) !== opener) return this._closeMenu();
    const query = text.slice(trigger.start + opener.length, caret);
    if (query.includes("\n") || query.length > 80 || (trigger.kind === "block" && /\s/.test(query))) return this._closeMenu();
    const rect = document.getSelection().getRangeAt(0).getBoundingClientRect();
    if (trigger.kind === "block") {
      this.menu.show(filterMenu(query), (item) => item.label, rect, (item) => this._chooseBlockType(trigger, caret, item));
      return;
    }
    const asked = (this._asked = {});
    (trigger.kind === "mention" ? this.findMentions : this.findNotes)(query).then((choices) => {
      if (this._asked !== asked || this.trigger !== trigger) return;
      this.menu.show(choices, choiceLabel, rect, (choice) => this._chooseNote(trigger, choice));
    });
  }

  _closeMenu() {
    this.trigger = null;
    if (this.menu.open) this.menu.hide();
  }

  _chooseBlockType(trigger, caret, item) {
    const id = trigger.blockId;
    this.trigger = null;
    const current = readText(this._textElement(id));
    const end = Math.max(caret, trigger.start + 1 + (current.slice(trigger.start + 1).match(/^\S*/)?.[0].length ?? 0));
    let focus = id;
    this.model.transact(() => {
      this.model.deleteText(id, trigger.start, end - trigger.start);
      if (item.table) {
        this.model.setBlock(id, { type: "table_row", attrs: TABLE_HEADER.attrs });
        if (this.model.block(id).text === "") this.model.insertText(id, 0, TABLE_HEADER.text);
        focus = this.model.insertBlock(this.model.indexOf(id) + 1, { type: "table_row", text: TABLE_ROW.text, attrs: TABLE_ROW.attrs });
      } else if (item.type === "divider") {
        this.model.setBlock(id, { type: "divider", attrs: {} });
        this.model.deleteText(id, 0, this.model.block(id).text.length);
        focus = this.model.insertBlock(this.model.indexOf(id) + 1, { type: "paragraph" });
      } else {
        this.model.setBlock(id, { type: item.type, attrs: item.attrs });
      }
    });
    this.refresh();
    this.focusBlock(focus, item.table ? 2 : trigger.start);
  }

  _chooseNote(trigger, choice) {
    const id = trigger.blockId;
    this.trigger = null;
    const element = this._textElement(id);
    const text = readText(element);
    const caret = caretOffset(element) ?? text.length;
    this._typeAt(id, trigger.start, Math.max(caret, trigger.start), choiceText(trigger.kind, choice));
  }

}

function tailType(block) {
  return block.type === "heading" ? "paragraph" : block.type;
}

function tailAttrs(block) {
  if (block.type === "task") return { checked: false };
  if (block.type === "table_row") return TABLE_ROW.attrs;
  if (block.type === "callout") return { title: "" };
  return {};
}
