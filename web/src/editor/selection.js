// The person's selection, held in the document while the document changes under the screen.
//
// A remote import, an undo or a redo changes the model first and the screen after; read back
// from the screen at that point, the caret's offset would be measured in text that is no longer
// the model's, and the next keystroke would land inside someone else's words. So the selection is
// taken as carets in the document (model/carets.js: Loro cursors) just *before* such a change,
// while the screen and the model still read alike, and put back from them once the screen has
// caught up. Both ends are held, so a selection across blocks is kept as well as a caret.
import { caretAt, place } from "../model/carets.js";
import { offsetAt, pointAt } from "./dom.js";

export class HeldSelection {
  // root: the editor's element; blockOf(node) → the block element holding a DOM node (or null);
  // textElement(id) → a block's text element on screen, shown if need be; focus(id, offset) →
  // focuses the block's text there.
  constructor(model, { root, blockOf, textElement, focus }) {
    Object.assign(this, { model, root, blockOf, textElement, focus });
    this.held = null; // {anchor, focus}: carets (see model/carets.js), or null when nothing is selected here
    this.composing = false; // an input method's text on screen is not in the model yet: nothing to read
  }

  // Takes the screen's selection into the document, if it is in the editor and the editor has
  // the focus: a change from elsewhere never takes the focus from another part of the page.
  take() {
    if (this.composing) return;
    this.held = this.read();
  }

  // The screen's selection as carets, {anchor, focus}, or null when none is in the editor.
  // `caret(model, id, offset)` makes each: model/carets.js's caretAt, or its cursorAt for what
  // this tab shows the others in the note. Not while an input method composes.
  read(caret = caretAt) {
    const selection = document.getSelection();
    if (!selection || selection.rangeCount === 0 || !this.root.contains(document.activeElement)) return null;
    const focus = this._caret(selection.focusNode, selection.focusOffset, caret);
    const anchor = selection.isCollapsed ? focus : this._caret(selection.anchorNode, selection.anchorOffset, caret);
    return focus ? { anchor: anchor ?? focus, focus } : null;
  }

  // Puts the held selection back on screen where its carets are now. A remote change never
  // scrolls the page: the person may be reading elsewhere.
  restore() {
    if (!this.held) return;
    const focus = place(this.model, this.held.focus);
    if (!focus) return;
    const anchor = this.held.anchor === this.held.focus ? focus : place(this.model, this.held.anchor) ?? focus;
    this.focus(focus.id, focus.offset);
    if (anchor.id !== focus.id || anchor.offset !== focus.offset) {
      const from = this.textElement(anchor.id);
      const to = this.textElement(focus.id);
      if (from && to) document.getSelection().setBaseAndExtent(...pointAt(from, anchor.offset), ...pointAt(to, focus.offset));
    }
    this.take(); // a split or a join may have carried the carets into another block: hold them there
  }

  _caret(node, nodeOffset, caret) {
    const element = this.blockOf(node);
    const id = element?.dataset.id;
    if (!id || !this.model.has(id)) return null;
    const text = element.querySelector(".text");
    const inText = text?.isContentEditable && text.contains(node);
    return caret(this.model, id, inText ? offsetAt(text, node, nodeOffset) : 0);
  }
}
