// A few helpers for building the app's pages: element creation with text (never HTML from data).

// Replaces an element's children; null, undefined and false (a condition's "nothing") are left out.
export function fill(element, ...children) {
  element.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return element;
}

export function el(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") element.className = value;
    else if (key === "dataset") Object.assign(element.dataset, value);
    else if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key in element && typeof value !== "string") element[key] = value;
    else element.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

export function link(href, ...children) {
  return el("a", { href, dataset: { link: "" } }, ...children);
}

export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  const days = (Date.now() - date.getTime()) / 86_400_000;
  if (days < 1 && date.getDate() === new Date().getDate()) return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return date.toLocaleDateString([], { month: "short", day: "numeric", year: days > 300 ? "numeric" : undefined });
}

export function idempotencyKey() {
  return `web-${crypto.randomUUID()}`;
}

// A property's value as text, where it is shown rather than edited.
export function formatValue(value) {
  if (Array.isArray(value)) return value.join(", ");
  if (value === true) return "yes";
  if (value === false) return "no";
  if (value === null || value === undefined) return "—";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}
