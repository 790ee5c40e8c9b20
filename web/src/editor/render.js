// A block as the editor shows it: its element, built from the block alone (the view makes its
// text editable, adds the page's annotations and remembers what it showed, under `blockKey`).
import { LIST_TYPES } from "../model/blocks.js";
import { writeText } from "./dom.js";
import { CALLOUT_KINDS } from "./shortcuts.js";

// `embedded`: an element to show in the block's place instead of its text, or null.
export function renderBlock(block, previous, embedded) {
  const element = document.createElement("div");
  element.className = `block block-${block.type}`;
  element.dataset.id = block.id;
  element.dataset.type = block.type;
  const handle = document.createElement("span");
  handle.className = "handle";
  handle.draggable = true;
  handle.title = "Drag to move";
  handle.setAttribute("aria-hidden", "true");
  element.appendChild(handle);
  const { attrs } = block;
  if (block.type === "heading") element.dataset.level = String(attrs.level);
  if (LIST_TYPES.has(block.type)) {
    element.style.setProperty("--depth", String(attrs.depth));
    element.classList.toggle("checked", block.type === "task" && attrs.checked);
    element.appendChild(listMarker(block));
  }
  if (embedded) {
    element.classList.add("block-embed");
    element.appendChild(embedHost(embedded));
    return element;
  }
  if (block.type === "callout") element.appendChild(calloutHeader(block));
  if (block.type === "code") element.appendChild(codeHeader(block));
  if (block.type === "table_row") {
    element.classList.toggle("table-header", attrs.header);
    element.classList.toggle("table-first", previous?.type !== "table_row");
  }
  if (block.type === "divider") {
    const rule = document.createElement("div");
    rule.className = "text divider-line";
    rule.tabIndex = 0;
    rule.setAttribute("role", "separator");
    element.appendChild(rule);
  } else {
    const text = document.createElement("div");
    text.className = "text";
    text.spellcheck = block.type !== "code" && block.type !== "table_row";
    text.dataset.placeholder = placeholderFor(block);
    text.classList.toggle("empty", block.text === "");
    writeText(text, block.text);
    element.appendChild(text);
  }
  return element;
}

function listMarker(block) {
  if (block.type === "task") {
    const box = document.createElement("input");
    box.type = "checkbox";
    box.className = "task-box";
    box.checked = block.attrs.checked;
    box.setAttribute("aria-label", "Done");
    return box;
  }
  const marker = document.createElement("span");
  marker.className = "list-marker";
  marker.textContent = block.attrs.ordered ? `${block.attrs.number}${block.attrs.marker}` : "•";
  return marker;
}

function calloutHeader(block) {
  const select = document.createElement("select");
  select.className = "callout-kind";
  select.setAttribute("aria-label", "Callout kind");
  for (const kind of new Set([...CALLOUT_KINDS, block.attrs.kind])) {
    select.appendChild(new Option(kind, kind, false, kind === block.attrs.kind));
  }
  return select;
}

function codeHeader(block) {
  const input = document.createElement("input");
  input.className = "code-language";
  input.placeholder = "language";
  input.value = block.attrs.language;
  input.setAttribute("aria-label", "Code language");
  input.spellcheck = false;
  return input;
}

// An embedded view sits where its block is, focusable like a divider and never editable as
// text; what happens inside it (typing in its fields, dragging its cards) is its own, so those
// events stop at its edge instead of reaching the editor's handlers.
const EMBED_OWN_EVENTS = ["input", "change", "keydown", "beforeinput", "compositionend", "copy", "cut", "paste", "dragstart", "dragover", "drop"];

function embedHost(content) {
  const host = document.createElement("div");
  host.className = "text embed";
  host.tabIndex = 0;
  host.contentEditable = "false";
  host.appendChild(content);
  for (const type of EMBED_OWN_EVENTS) host.addEventListener(type, (event) => event.target !== host && event.stopPropagation());
  return host;
}

// A group of GROUP_SIZE blocks (see EditorView._place).
export function newGroup() {
  return Object.assign(document.createElement("div"), { className: "block-group" });
}

// What is on screen for a block: re-rendered when this changes. A table row's look also
// depends on whether it opens its table.
export function blockKey(block, previous) {
  const opens = block.type === "table_row" && previous?.type !== "table_row";
  return `${block.type}\u0000${JSON.stringify(block.attrs)}\u0000${block.text}\u0000${opens}`;
}

function placeholderFor(block) {
  if (block.type === "heading") return `Heading ${block.attrs.level}`;
  if (block.type === "paragraph") return "Type / for blocks, [[ to link";
  if (block.type === "code") return "Code";
  if (block.type === "quote") return "Quote";
  return "";
}
