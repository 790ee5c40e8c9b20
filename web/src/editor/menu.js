// A small floating list under the caret: the block menu and the note and people picker share it.
// It owns no editing: the view tells it what to show and gets the chosen item back.

export class PopupMenu {
  constructor(host) {
    this.element = document.createElement("div");
    this.element.className = "popup";
    this.element.setAttribute("role", "listbox");
    this.element.hidden = true;
    host.appendChild(this.element);
    this.items = [];
    this.index = 0;
    this.onChoose = null;
    this.element.addEventListener("mousedown", (event) => {
      const option = event.target.closest("[data-index]");
      if (!option) return;
      event.preventDefault(); // keep the caret in the block
      this.index = Number(option.dataset.index);
      this.choose();
    });
  }

  get open() {
    return !this.element.hidden;
  }

  show(items, render, anchorRect, onChoose) {
    this.items = items;
    this.index = Math.min(this.index, Math.max(0, items.length - 1));
    this.onChoose = onChoose;
    this.element.replaceChildren(
      ...(items.length
        ? items.map((item, index) => {
            const option = document.createElement("div");
            option.className = "popup-item";
            option.dataset.index = String(index);
            option.setAttribute("role", "option");
            const shown = render(item);
            // A string, or {label, detail, kind}: a person shows their email beside their name.
            if (typeof shown === "string") option.textContent = shown;
            else {
              option.append(Object.assign(document.createElement("span"), { textContent: shown.label }));
              if (shown.detail) option.append(Object.assign(document.createElement("span"), { className: "popup-detail", textContent: shown.detail }));
              option.dataset.kind = shown.kind;
            }
            return option;
          })
        : [Object.assign(document.createElement("div"), { className: "popup-empty", textContent: "No match" })]),
    );
    this.element.hidden = false;
    this._highlight();
    if (anchorRect) {
      this.element.style.left = `${Math.max(8, anchorRect.left + window.scrollX)}px`;
      this.element.style.top = `${anchorRect.bottom + window.scrollY + 4}px`;
    }
  }

  hide() {
    this.element.hidden = true;
    this.items = [];
    this.index = 0;
    this.onChoose = null;
  }

  // Handles a key while open; returns true when it used it.
  key(event) {
    if (!this.open) return false;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const step = event.key === "ArrowDown" ? 1 : -1;
      this.index = (this.index + step + this.items.length) % Math.max(1, this.items.length);
      this._highlight();
      return true;
    }
    if (event.key === "Enter" || event.key === "Tab") {
      if (!this.items.length) return false;
      this.choose();
      return true;
    }
    if (event.key === "Escape") {
      this.hide();
      return true;
    }
    return false;
  }

  choose() {
    const item = this.items[this.index];
    const onChoose = this.onChoose;
    this.hide();
    if (item !== undefined && onChoose) onChoose(item);
  }

  _highlight() {
    for (const option of this.element.querySelectorAll("[data-index]")) {
      const active = Number(option.dataset.index) === this.index;
      option.classList.toggle("active", active);
      option.setAttribute("aria-selected", String(active));
    }
  }
}
