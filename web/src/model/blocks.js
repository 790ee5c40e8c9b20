// The block model, one to one with fastpad/notes/blocks.py: the types, and the
// attributes each type carries with their defaults. A block's text is inline
// Markdown source; its attrs hold what the block's Markdown prefix says.

export const BLOCK_TYPES = {
  heading: { level: 1 },
  paragraph: {},
  // marker: "-", "*" or "+" for bullets; "." or ")" for ordered items.
  list_item: { ordered: false, marker: "-", number: 1, depth: 0 },
  task: { ordered: false, marker: "-", number: 1, depth: 0, checked: false },
  quote: {},
  // fold: "" (plain), "+" (open) or "-" (folded), as Obsidian writes it.
  callout: { kind: "note", fold: "", title: "" },
  code: { language: "", fence: "```" },
  divider: { marker: "---" },
  // delimiter: the header row's alignment line, e.g. "| --- | :-: |".
  table_row: { header: false, delimiter: "" },
};

export const LIST_TYPES = new Set(["list_item", "task"]);
export const MAX_DEPTH = 8;

// The block's full attribute set: defaults filled in, unknown keys dropped, and a value
// of the wrong kind read as the default (as fastpad/notes/document.py _coerce_attrs).
export function normalizeAttrs(type, attrs = {}) {
  const defaults = BLOCK_TYPES[type] ?? {};
  const out = {};
  for (const [key, fallback] of Object.entries(defaults)) {
    const value = attrs[key];
    out[key] = typeof value === typeof fallback && value !== null ? value : fallback;
  }
  return out;
}

// Reads any stored value as a valid block, whatever another peer wrote.
export function readBlock(value) {
  if (!value || typeof value !== "object") return { id: null, type: "paragraph", text: "", attrs: {} };
  const type = Object.hasOwn(BLOCK_TYPES, value.type) ? value.type : "paragraph";
  return {
    id: typeof value.id === "string" ? value.id : null,
    type,
    text: typeof value.text === "string" ? value.text : "",
    attrs: normalizeAttrs(type, value.attrs && typeof value.attrs === "object" ? value.attrs : {}),
  };
}

// A table row's cells; "\|" stays inside its cell (fastpad/notes/blocks.py table_cells).
export function tableCells(rowText) {
  let body = rowText.trim();
  if (body.startsWith("|")) body = body.slice(1);
  if (body.endsWith("|") && !body.endsWith("\\|")) body = body.slice(0, -1);
  const cells = [];
  let current = "";
  let escaped = false;
  for (const char of body) {
    if (char === "|" && !escaped) {
      cells.push(current.trim());
      current = "";
    } else current += char;
    escaped = char === "\\" && !escaped;
  }
  cells.push(current.trim());
  return cells;
}
