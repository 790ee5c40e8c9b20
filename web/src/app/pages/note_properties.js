// A note's types and typed properties, edited in place: apply and remove types, and a widget
// per property kind. Every change is one PATCH /v1/notes/{id}/types, checked by the server
// against the type's definition; a value it refuses stays in its widget with the reason beside
// it. The note's own document carries the result back (the change feed), so another device
// sees it too.
import { el, fill, formatValue, idempotencyKey, link } from "../dom.js";
import { explain } from "../explain.js";
import { folderPath } from "./imports.js";

const ATTACHMENTS = "/v1/attachments/";
const SOURCE_FOLDER = "source_folder"; // where an import found the note (fastpad/knowledge/notes.py)

export class NoteProperties {
  constructor(app, noteId, host, model) {
    Object.assign(this, { app, noteId, host, model });
    this.answered = null; // {frontier, meta}: the last change the server answered, until the note holds it
    this.types = null; // the workspace's types, by name
    this.related = new Map(); // target type → notes of it, for relation widgets
    this.refused = new Map(); // property key → {value, message}: the last value the server refused, kept on screen
    host.addEventListener("focusout", () => queueMicrotask(() => this.stale && !host.contains(document.activeElement) && this.render()));
  }

  // The note's types and properties: its document's, or the server's last answer while the
  // document has yet to pull it (a widget drawn from the older values would send them back).
  _current() {
    if (this.answered && !this.model.holds(this.answered.frontier)) return this.answered.meta;
    this.answered = null;
    return this.model.meta.toJSON();
  }

  // Renders the types and properties, unless a widget is being edited: then once the person
  // leaves it.
  async render() {
    const meta = (this.meta = this._current());
    if (this.host.contains(document.activeElement) && document.activeElement !== document.body) {
      this.stale = true;
      return;
    }
    this.stale = false;
    // The same values drawn again would replace widgets under the pointer for nothing.
    const shown = JSON.stringify([meta.types, meta.properties, [...this.refused]]);
    if (shown === this.shown) return;
    this.shown = shown;
    await this._load();
    const applied = Array.isArray(meta.types) ? meta.types : [];
    const values = meta.properties && typeof meta.properties === "object" ? meta.properties : {};
    const defined = applied.map((name) => this.types.get(name)).filter(Boolean);
    const typed = this._keys(defined);
    const typedKeys = new Set(typed.map((prop) => prop.key));
    const available = [...this.types.keys()].filter((name) => !applied.includes(name) && name !== "Inbox").sort();
    const choose = el("select", { "aria-label": "Type to apply" }, el("option", { value: "" }, "Add a type…"),
      available.map((name) => el("option", { value: name }, name)));
    choose.addEventListener("change", () => choose.value && this._send({ add: [choose.value] }, "The type could not be applied"));
    fill(this.host,
      el("div", { class: "type-row" },
        el("ul", { class: "chips", "aria-label": "Types" }, applied.map((name) => el("li", {},
          el("a", { href: `/types/${encodeURIComponent(name)}`, dataset: { link: "" } }, `#${name}`),
          el("button", { type: "button", class: "chip-remove", "aria-label": `Remove type ${name}`, title: "Remove this type (its values stay in the note)",
            onclick: () => this._send({ remove: [name] }, "The type could not be removed") }, "×")))),
        available.length ? choose : null),
      typed.length ? el("dl", { class: "properties editable" }, typed.flatMap((prop) => this._row(prop, values[prop.key]))) : null,
      this._untyped(Object.fromEntries(Object.entries(values).filter(([key]) => !typedKeys.has(key)))));
  }

  async _load() {
    if (!this.types) {
      const listed = await this.app.api.json("GET", "/v1/types").catch(() => ({ items: [] }));
      this.types = new Map(listed.items.map((type) => [type.name, type]));
    }
  }

  // Each property once, though two applied types may inherit it from the same ancestor.
  _keys(defined) {
    const seen = new Map();
    for (const type of defined) for (const prop of type.available_properties) if (!seen.has(prop.key)) seen.set(prop.key, prop);
    return [...seen.values()];
  }

  // Values the note carries without a defined type (frontmatter, an import): shown, not edited;
  // the folder an import found it in opens that folder's page.
  _untyped(values) {
    const entries = Object.entries(values);
    if (!entries.length) return null;
    return el("dl", { class: "properties" }, entries.flatMap(([key, value]) => [el("dt", {}, key),
      el("dd", {}, key === SOURCE_FOLDER && typeof value === "string" ? link(folderPath(value), value) : formatValue(value))]));
  }

  _row(prop, value) {
    const id = `prop-${prop.key.replace(/[^A-Za-z0-9_-]/g, "-")}`;
    const refused = this.refused.get(prop.key);
    return [
      el("dt", {}, el("label", { for: id, title: prop.key }, prop.name.replace(/_/g, " "))),
      el("dd", { dataset: { property: prop.key, kind: prop.kind } }, this._widget(prop, refused ? refused.value : value, id),
        refused ? el("p", { class: "field-error", role: "alert" }, refused.message) : null),
    ];
  }

  _widget(prop, value, id) {
    const save = (next) => this._send({ properties: { [prop.key]: next } }, `${prop.name} could not be saved`, prop.key);
    const input = (type, shown, read) => {
      const field = el("input", { id, type, value: shown ?? "" });
      field.addEventListener("change", () => save(read(field.value)));
      return field;
    };
    const orNull = (text) => (text === "" ? null : text);
    switch (prop.kind) {
      case "number": return input("number", value, (text) => (text === "" ? null : Number(text)));
      case "url": return input("url", value, orNull);
      case "date": return input("date", value, orNull);
      case "datetime": return input("datetime-local", value ? localDateTime(value) : "", (text) => (text ? new Date(text).toISOString() : null));
      case "checkbox": {
        const box = el("input", { id, type: "checkbox", checked: value === true });
        box.addEventListener("change", () => save(box.checked));
        return box;
      }
      case "select": return this._select(id, value, (prop.options ?? []).map((option) => [option, option]), save);
      case "multi_select": {
        const chosen = new Set(Array.isArray(value) ? value : []);
        return el("fieldset", { id, class: "options" }, (prop.options ?? []).map((option) => {
          const box = el("input", { type: "checkbox", checked: chosen.has(option) });
          box.addEventListener("change", () => {
            if (box.checked) chosen.add(option);
            else chosen.delete(option);
            save((prop.options ?? []).filter((o) => chosen.has(o)));
          });
          return el("label", {}, box, ` ${option}`);
        }));
      }
      case "person": return this._lazySelect(id, value, save, () => this._members(value));
      case "relation": return this._lazySelect(id, value, save, () => this._notesOf(prop.target));
      case "file": return this._file(id, value, save);
      default: return input("text", value, orNull);
    }
  }

  _select(id, value, choices, save) {
    const select = el("select", { id }, el("option", { value: "" }, "—"), choices.map(([key, label]) => el("option", { value: key, selected: key === value }, label)));
    if (value && !choices.some(([key]) => key === value)) select.append(el("option", { value, selected: true }, value));
    select.addEventListener("change", () => save(select.value || null));
    return select;
  }

  // A select whose choices come from the server (people, notes of a type).
  _lazySelect(id, value, save, choices) {
    const holder = el("span", {}, el("span", { class: "quiet" }, "Loading…"));
    choices().then((list) => fill(holder, this._select(id, value, list, save)),
      (error) => fill(holder, el("span", { class: "field-error" }, explain(error, "The choices could not be loaded"))));
    return holder;
  }

  // The workspace's people, by name with their email (two people may share a name); the value is the
  // person's id. A value naming someone no longer a member stays chosen, said as such.
  async _members(value) {
    const choices = (await this.app.people.list()).map((person) => [person.id, person.display_name ? `${person.display_name} · ${person.email}` : person.email]);
    return value && !choices.some(([id]) => id === value) ? [...choices, [value, "Former member"]] : choices;
  }

  async _notesOf(type) {
    if (!this.related.has(type)) {
      this.related.set(type, this.app.api.json("POST", "/v1/query", { json: { type, sort: [{ property: "title", direction: "asc" }], limit: 200 } })
        .then((page) => page.items.filter((note) => note.id !== this.noteId).map((note) => [note.id, note.title || "Untitled"])));
    }
    return this.related.get(type);
  }

  // A file property names an uploaded attachment: choosing a file uploads it, then sets it.
  _file(id, value, save) {
    const picker = el("input", { id, type: "file", accept: "image/png,image/jpeg,image/gif,image/webp,application/pdf" });
    picker.addEventListener("change", async () => {
      const [file] = picker.files;
      if (!file) return;
      try {
        const stored = await this.app.api.json("POST", "/v1/attachments", { query: { name: file.name }, bytes: file, contentType: file.type || "application/octet-stream" });
        save(`${ATTACHMENTS}${stored.id}`); // a file property's value is the attachment's path
      } catch (error) {
        this.app.flash(explain(error, `${file.name} could not be uploaded`));
      }
    });
    return el("span", { class: "file-value" },
      // The attachment's path, or its bare id in frontmatter written by hand (the server takes both).
      value ? el("a", { href: value.startsWith(ATTACHMENTS) ? value : `${ATTACHMENTS}${value}`, target: "_blank", rel: "noopener" }, "Open the file") : null, picker);
  }

  async _send(change, failure, key = null) {
    try {
      const note = await this.app.api.json("PATCH", `/v1/notes/${this.noteId}/types`, { json: { ...change, idempotencyKey: idempotencyKey() } });
      if (key) this.refused.delete(key);
      this.app.index.put({ id: this.noteId, types: note.types });
      this.answered = { frontier: note.frontier, meta: { types: note.types, properties: note.properties } };
    } catch (error) {
      const said = error.problem?.field_errors?.map((item) => item.message).join("; ");
      if (key && said) this.refused.set(key, { value: change.properties[key], message: `Not saved: ${said}` });
      else this.app.flash(explain(error, failure));
    }
    if (document.activeElement && this.host.contains(document.activeElement)) document.activeElement.blur();
    this.render();
  }
}


// An ISO date-time as the browser's datetime-local field shows it, in this device's time zone.
function localDateTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
