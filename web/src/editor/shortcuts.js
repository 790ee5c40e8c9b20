// Markdown shortcuts typed at the start of a paragraph, and the block menu's entries.
// Pure functions: they say what a block becomes; the view applies it as one model edit.

// Apple keyboards hold Command where others hold Control for the editor's own shortcuts.
export const isMac = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform);

const HEADING = /^(#{1,6}) $/;
const BULLET = /^([-*+]) $/;
const ORDERED = /^(\d{1,9})([.)]) $/;
const TASK = /^(?:[-*+] )?\[([ xX])\] $/;

// What typing `prefix` (the text before the caret, ending in a space) at the start of a
// paragraph turns it into: {type, attrs}, or null.
export function shortcutFor(prefix) {
  let match;
  if ((match = HEADING.exec(prefix))) return { type: "heading", attrs: { level: match[1].length } };
  if ((match = TASK.exec(prefix))) return { type: "task", attrs: { checked: match[1] !== " " } };
  if ((match = BULLET.exec(prefix))) return { type: "list_item", attrs: { ordered: false, marker: match[1] } };
  if ((match = ORDERED.exec(prefix)))
    return { type: "list_item", attrs: { ordered: true, marker: match[2], number: Number(match[1]) } };
  if (prefix === "> ") return { type: "quote", attrs: {} };
  return null;
}

// What a paragraph reading exactly `text` becomes when Enter is pressed in it: a code fence
// ("```lang") or a divider ("---"), or null.
export function enterShortcutFor(text) {
  const fence = /^(`{3,}|~{3,})([\w+#.-]*)$/.exec(text);
  if (fence) return { type: "code", attrs: { fence: fence[1], language: fence[2] } };
  if (/^(-{3,}|\*{3,}|_{3,})$/.test(text)) return { type: "divider", attrs: { marker: text } };
  return null;
}

export const TABLE_HEADER = { text: "| Column | Column |", attrs: { header: true, delimiter: "| --- | --- |" } };
export const TABLE_ROW = { text: "|  |  |", attrs: { header: false, delimiter: "" } };

// The block menu ("/"): each entry turns the current block into a type, or inserts blocks.
export const BLOCK_MENU = [
  { label: "Text", keywords: "paragraph plain", type: "paragraph", attrs: {} },
  { label: "Heading 1", keywords: "h1 title", type: "heading", attrs: { level: 1 } },
  { label: "Heading 2", keywords: "h2 subtitle", type: "heading", attrs: { level: 2 } },
  { label: "Heading 3", keywords: "h3", type: "heading", attrs: { level: 3 } },
  { label: "Bulleted list", keywords: "ul bullet unordered", type: "list_item", attrs: { ordered: false, marker: "-" } },
  { label: "Numbered list", keywords: "ol ordered number", type: "list_item", attrs: { ordered: true, marker: ".", number: 1 } },
  { label: "Task", keywords: "todo checkbox check", type: "task", attrs: { checked: false } },
  { label: "Quote", keywords: "blockquote", type: "quote", attrs: {} },
  { label: "Callout", keywords: "note tip warning admonition", type: "callout", attrs: { kind: "note" } },
  { label: "Code", keywords: "fence snippet pre", type: "code", attrs: {} },
  { label: "Divider", keywords: "rule hr line separator", type: "divider", attrs: {} },
  { label: "Table", keywords: "grid rows columns", type: "table_row", table: true },
];

export function filterMenu(query) {
  const q = query.trim().toLowerCase();
  if (!q) return BLOCK_MENU;
  return BLOCK_MENU.filter((item) => `${item.label} ${item.keywords}`.toLowerCase().includes(q));
}

export const CALLOUT_KINDS = ["note", "tip", "info", "warning", "important", "caution"];
