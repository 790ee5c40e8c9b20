// Text and caret offsets inside one block's editable element. A block's text may hold "\n"
// (code, quotes, Shift-Enter); the element shows it with `white-space: pre-wrap`, and a
// text ending in "\n" gets a trailing <br> so its last, empty line can hold the caret.

export function writeText(element, text) {
  element.textContent = text;
  if (text.endsWith("\n") || text === "") element.appendChild(document.createElement("br"));
}

// The text the element shows: text nodes as they are, a <br> as "\n" — except a trailing
// <br> after a "\n" (or alone), which only props the last line open.
export function readText(element) {
  let out = "";
  const walk = (node) => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === Node.TEXT_NODE) out += child.data;
      else if (child.nodeName === "BR") {
        const trailing = !nextContent(child, element);
        if (!(trailing && (out === "" || out.endsWith("\n")))) out += "\n";
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        if (child.nodeName === "DIV" && out && !out.endsWith("\n")) out += "\n";
        walk(child);
      }
    }
  };
  walk(element);
  return out;
}

function nextContent(node, root) {
  for (let current = node; current && current !== root; current = current.parentNode) {
    for (let sibling = current.nextSibling; sibling; sibling = sibling.nextSibling) {
      if (sibling.nodeType === Node.ELEMENT_NODE || (sibling.nodeType === Node.TEXT_NODE && sibling.data)) return sibling;
    }
  }
  return null;
}

// The caret's offset in the element's text, or null when the selection is elsewhere.
export function caretOffset(element) {
  const selection = document.getSelection();
  if (!selection || selection.rangeCount === 0 || !element.contains(selection.focusNode)) return null;
  return offsetAt(element, selection.focusNode, selection.focusOffset);
}

export function selectionOffsets(element) {
  const selection = document.getSelection();
  if (!selection || selection.rangeCount === 0) return null;
  const range = selection.getRangeAt(0);
  if (!element.contains(range.startContainer) || !element.contains(range.endContainer)) return null;
  return [offsetAt(element, range.startContainer, range.startOffset), offsetAt(element, range.endContainer, range.endOffset)];
}

// The offset in the element's text of a DOM point (a node and an offset in it) inside it.
export function offsetAt(element, node, nodeOffset) {
  const range = document.createRange();
  range.selectNodeContents(element);
  range.setEnd(node, nodeOffset);
  const fragment = range.cloneContents();
  const holder = document.createElement("div");
  holder.appendChild(fragment);
  // Reading the cut-off copy the same way as the whole keeps both in one unit.
  const text = readText(holder);
  return Math.min(text.length, readText(element).length);
}

// The DOM point at an offset in the element's text: [node, offset in it]. Past the end, the end —
// before a trailing <br>, which only props the last line open.
export function pointAt(element, offset) {
  let remaining = Math.max(0, offset);
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (remaining <= node.data.length) return [node, remaining];
    remaining -= node.data.length;
  }
  const children = element.childNodes.length;
  return [element, element.lastChild?.nodeName === "BR" ? children - 1 : children];
}

export function placeCaret(element, offset) {
  const [node, nodeOffset] = pointAt(element, offset);
  document.getSelection().collapse(node, nodeOffset);
}

// Whether the caret sits on the element's first (or last) rendered line.
export function caretOnEdgeLine(element, edge) {
  const selection = document.getSelection();
  if (!selection || selection.rangeCount === 0) return true;
  const caret = selection.getRangeAt(0).getClientRects()[0];
  const box = element.getBoundingClientRect();
  if (!caret) return true;
  const line = parseFloat(getComputedStyle(element).lineHeight) || 20;
  return edge === "first" ? caret.top - box.top < line * 0.8 : box.bottom - caret.bottom < line * 0.8;
}
