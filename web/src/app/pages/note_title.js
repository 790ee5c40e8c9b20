// A note's title, edited in place: one line of plain text written to the model as it is typed;
// Enter goes to the first block instead of breaking the line. The note page and the page of a
// note kept in this browser before an account both use it.
import { el } from "../dom.js";

// `focusBlock(id)`: puts the caret at the start of that block (the editor's).
export function noteTitle(model, { changed, focusBlock }) {
  const title = el("h1", { class: "note-title", contenteditable: "plaintext-only", spellcheck: true, "aria-label": "Title", dataset: { placeholder: "Untitled" } });
  title.textContent = model.title;
  title.addEventListener("input", () => {
    model.setTitle(title.textContent.replace(/\n/g, " "));
    changed();
  });
  title.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    const first = model.ids()[0];
    if (first) focusBlock(first);
  });
  return title;
}
