// Who else is in the note, on screen: their initials in the top bar (the name on hover and to a
// screen reader), and each of their tabs' caret as a thin bar in their colour with their name
// above it, their selection shaded in that colour. Positions come from Loro cursors (the other
// tab's state, sync/presence.js) read against this tab's document, so a caret stays on its text
// while anyone types; they are drawn again whenever the note or the screen changes.
import { Cursor } from "loro-crdt/web";
import { cursorPlace } from "../../model/carets.js";
import { pointAt } from "../../editor/dom.js";
import { el, fill } from "../dom.js";

export class PresenceView {
  // topbar: where the initials go (before `before`); note: the element the carets are drawn over.
  constructor({ topbar, before, note, editor, model }) {
    Object.assign(this, { editor, model });
    this.peers = [];
    this.avatars = el("div", { class: "presence", role: "group", "aria-label": "People in this note" });
    topbar.insertBefore(this.avatars, before);
    // Drawn over the note, never part of it: no caret, no click, no screen reader.
    this.layer = el("div", { class: "presence-layer", "aria-hidden": "true" });
    note.prepend(this.layer);
    this._resize = () => this.draw();
    window.addEventListener("resize", this._resize);
  }

  show(peers) {
    this.peers = peers;
    const people = new Map(peers.map(({ person }) => [person.id, person]));
    fill(this.avatars, [...people.values()].map((person) =>
      coloured(el("span", { class: "avatar", title: person.name, "aria-label": person.name, role: "img" }, initials(person.name)), person.id)));
    this.draw();
  }

  // Draws the carets again, once per frame however often it is asked; alone in the note, a
  // keystroke costs nothing here.
  draw() {
    if (this.frame || (!this.peers.length && !this.layer.firstChild)) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this._draw();
    });
  }

  close() {
    cancelAnimationFrame(this.frame);
    window.removeEventListener("resize", this._resize);
    this.avatars.remove();
    this.layer.remove();
  }

  _draw() {
    const origin = this.layer.getBoundingClientRect();
    const marks = [];
    for (const { tab, person, state } of this.peers) {
      const focus = this._point(state?.focus);
      if (!focus) continue;
      const anchor = this._point(state.anchor) ?? focus;
      for (const rect of selectionRects(anchor, focus)) {
        marks.push(placed(coloured(el("div", { class: "remote-selection" }), person.id), rect, origin));
      }
      const caret = caretRect(focus);
      if (!caret) continue;
      const mark = el("div", { class: "remote-caret", dataset: { tab, person: person.id } }, el("span", { class: "remote-caret-label" }, person.name));
      marks.push(placed(coloured(mark, person.id), caret, origin));
    }
    fill(this.layer, marks);
  }

  // A caret of the state ({cursor, width}) as a DOM point on this screen: [node, offset], or null.
  _point(caret) {
    if (!caret?.cursor) return null;
    const at = cursorPlace(this.model, Cursor.decode(caret.cursor), caret.width);
    const text = at && this.editor.shownText(at.id);
    return text ? pointAt(text, at.offset) : null;
  }
}

function caretRect([node, offset]) {
  const range = document.createRange();
  range.setStart(node, offset);
  range.collapse(true);
  const rect = range.getClientRects()[0] ?? (node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement).getBoundingClientRect();
  return rect.height ? { left: rect.left, top: rect.top, width: 2, height: rect.height } : null;
}

function selectionRects(anchor, focus) {
  const range = document.createRange();
  range.setStart(...anchor);
  range.setEnd(...focus);
  if (range.collapsed) {
    range.setStart(...focus); // the focus was before the anchor
    range.setEnd(...anchor);
  }
  return range.collapsed ? [] : [...range.getClientRects()].filter((rect) => rect.width > 0);
}

// Styles are set through the CSSOM: the page's policy refuses style attributes.
function placed(element, rect, origin) {
  Object.assign(element.style, { left: `${rect.left - origin.left}px`, top: `${rect.top - origin.top}px`, width: `${rect.width}px`, height: `${rect.height}px` });
  return element;
}

// A person's colour, the same on every screen: a hue from their id (the style sheet sets the
// lightness for light and dark).
function coloured(element, personId) {
  let hash = 0;
  for (const char of personId) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  element.style.setProperty("--who", String(hash % 360));
  return element;
}

function initials(name) {
  const words = name.replace(/@.*/, "").split(/[\s._-]+/).filter(Boolean);
  return (words.length > 1 ? words[0][0] + words[words.length - 1][0] : (words[0] ?? "?").slice(0, 2)).toUpperCase();
}
