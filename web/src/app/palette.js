// The command palette (Cmd/Ctrl-K): jump to a note by title, or run a command.
import { el, fill } from "./dom.js";

export class Palette {
  constructor(app) {
    this.app = app;
    this.input = el("input", { type: "text", class: "palette-input", placeholder: "Jump to a note, or type a command", "aria-label": "Command palette", role: "combobox", "aria-expanded": "true", "aria-controls": "palette-list" });
    this.list = el("ul", { class: "palette-list", id: "palette-list", role: "listbox" });
    this.dialog = el("div", { class: "palette", role: "dialog", "aria-modal": "true", "aria-label": "Command palette", hidden: true }, el("div", { class: "palette-box" }, this.input, this.list));
    document.body.appendChild(this.dialog);
    this.items = [];
    this.index = 0;
    this.input.addEventListener("input", () => this._render());
    this.input.addEventListener("keydown", (event) => this._key(event));
    this.dialog.addEventListener("mousedown", (event) => {
      if (event.target === this.dialog) this.close();
      const option = event.target.closest("[data-index]");
      if (option) {
        event.preventDefault();
        this._run(this.items[Number(option.dataset.index)]);
      }
    });
  }

  get open() {
    return !this.dialog.hidden;
  }

  toggle() {
    if (this.open) this.close();
    else this.show();
  }

  show() {
    this.returnFocus = document.activeElement;
    this.dialog.hidden = false;
    this.input.value = "";
    this.index = 0;
    this._render();
    this.input.focus();
    this.app.index.load().then(() => this.open && this._render(), () => {});
  }

  close() {
    this.dialog.hidden = true;
    this.returnFocus?.focus?.();
  }

  _commands() {
    const app = this.app;
    return [
      { label: "New note", hint: "command", run: () => app.newNote() },
      { label: "Go to Home", hint: "command", run: () => app.go("/") },
      { label: "Go to Inbox", hint: "command", run: () => app.go("/inbox") },
      { label: "Go to Archive", hint: "command", run: () => app.go("/archive") },
      { label: "Go to Trash", hint: "command", run: () => app.go("/trash") },
      { label: "Import a vault or an export", hint: "command", run: () => app.go("/import") },
      { label: "Review & agent activity", hint: "command", run: () => location.assign("/agent-activity") },
      { label: "Agents & tokens", hint: "command", run: () => location.assign("/settings/tokens") },
    ];
  }

  _render() {
    const query = this.input.value.trim().toLowerCase();
    const commands = this._commands().filter((command) => !query || command.label.toLowerCase().includes(query));
    const notes = this.app.index.match(query, 12).map((note) => ({ label: note.title || "Untitled", hint: note.alias ? `was “${note.alias}”` : note.types.map((type) => `#${type}`).join(" ") || "note", run: () => this.app.go(`/notes/${note.id}`) }));
    const search = query ? [{ label: `Search for “${this.input.value.trim()}”`, hint: "search", run: () => this.app.go(`/search?q=${encodeURIComponent(this.input.value.trim())}`) }] : [];
    this.items = query ? [...notes, ...commands, ...search] : [...commands, ...notes];
    this.index = Math.min(this.index, Math.max(0, this.items.length - 1));
    fill(this.list,
      ...this.items.map((item, index) =>
        el("li", { role: "option", dataset: { index: String(index) }, class: index === this.index ? "active" : undefined, "aria-selected": String(index === this.index) }, el("span", {}, item.label), el("span", { class: "hint" }, item.hint)),
      ),
    );
  }

  _key(event) {
    if (event.key === "Escape") {
      event.preventDefault();
      this.close();
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      this.index = (this.index + step + this.items.length) % Math.max(1, this.items.length);
      this._render();
    } else if (event.key === "Enter") {
      event.preventDefault();
      this._run(this.items[this.index]);
    }
  }

  _run(item) {
    if (!item) return;
    this.returnFocus = null;
    this.close();
    item.run();
  }
}
