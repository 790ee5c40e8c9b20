// The list pages: Home (recent), Inbox (proposals waiting for review, then captures), Archive,
// Trash, one type's notes.
import { explain } from "../explain.js";
import { el, fill, idempotencyKey, link, when } from "../dom.js";

const LISTS = {
  recent: { title: "Home", empty: "No notes yet. Press “New note” to write one.", notes: (index) => index.recent() },
  inbox: { title: "Inbox", empty: "Nothing captured. `fp capture` sends text here.", notes: (index) => index.ofType("Inbox") },
  archive: { title: "Archive", empty: "Nothing archived.", notes: (index) => index.archived() },
  trash: { title: "Trash", empty: "The trash is empty.", notes: (index) => index.trashed() },
};

export function listPage(app, target) {
  const spec = target.list === "type"
    ? { title: `#${target.type}`, empty: `No notes of type ${target.type}.`, notes: (index) => index.ofType(target.type) }
    : LISTS[target.list];
  const selected = new Set(); // note ids ticked for a bulk change (lists of notes one can type)
  const selectable = target.list === "recent" || target.list === "type";
  const render = () => {
    const notes = spec.notes(app.index);
    const rows = notes.map((note) =>
      el(
        "li",
        { class: "note-row" },
        selectable ? el("input", { type: "checkbox", "aria-label": `Select ${note.title || "Untitled"}`, checked: selected.has(note.id),
          onchange: (event) => { event.target.checked ? selected.add(note.id) : selected.delete(note.id); render(); } }) : null,
        link(`/notes/${note.id}`, el("span", { class: "title" }, note.title || "Untitled")),
        el("span", { class: "types" }, note.types.map((type) => `#${type}`).join(" ")),
        el("time", { datetime: note.updated_at }, when(note.updated_at)),
        target.list === "trash" ? el("button", { type: "button", onclick: () => restore(app, note) }, "Restore") : null,
      ),
    );
    app.show(spec.title, el("section", { class: "list" }, el("h1", {}, spec.title),
      target.list === "inbox" ? proposalsSection(app) : null,
      target.list === "inbox" ? el("h2", {}, "Captured") : null,
      selected.size ? bulkBar(app, selected, render) : null,
      rows.length ? el("ul", { class: "notes" }, rows) : el("p", { class: "quiet" }, spec.empty)));
  };
  render();
  const unlisten = [app.index.listen(render), target.list === "inbox" ? app.proposals.listen(render) : null];
  return { close: () => unlisten.forEach((stop) => stop?.()) };
}

// Every turn waiting for a person, newest first: who proposed it, on which note (or the new
// note it proposes), and how many blocks; each opens its review.
function proposalsSection(app) {
  const turns = app.proposals.items;
  const noteTitle = (turn) => turn.new_note ? `New note: ${turn.new_note.title || "Untitled"}` : app.index.notes.get(turn.note_id)?.title || "Untitled";
  const size = (turn) => {
    const blocks = turn.pending_block_ids.length;
    const other = turn.pending_ops.length;
    return [blocks ? `${blocks} block${blocks === 1 ? "" : "s"}` : "", other ? `${other} link or event${other === 1 ? "" : "s"}` : ""].filter(Boolean).join(", ");
  };
  return el("section", { class: "proposals", "aria-label": "Waiting for your review" },
    el("h2", {}, "Waiting for your review"),
    turns.length
      ? el("ul", { class: "notes" }, turns.map((turn) => el("li", { class: "note-row proposal", dataset: { turn: turn.id } },
          el("a", { href: `/review/${turn.id}` }, el("span", { class: "title" }, noteTitle(turn))),
          el("span", { class: "types" }, `${turn.author.name ?? "An agent"} · ${size(turn)}`),
          el("time", { datetime: turn.created_at }, when(turn.created_at)))))
      : el("p", { class: "quiet" }, "Nothing waiting. Agents' proposals appear here until you accept or reject them."));
}

async function restore(app, note) {
  try {
    app.index.put(await app.api.json("POST", `/v1/notes/${note.id}/restore`, { json: { idempotencyKey: idempotencyKey() } }));
  } catch (error) {
    app.flash(explain(error, "The note could not be restored"));
  }
}

// Applies one type to every selected note at once (POST /v1/notes/types:bulk): each note
// succeeds or fails on its own, and the person is told how many of each.
function bulkBar(app, selected, render) {
  const types = app.index.types().map(([type]) => type).filter((type) => type !== "Inbox");
  const choose = el("input", { list: "bulk-types", "aria-label": "Type to apply", placeholder: "Type name" });
  const apply = async () => {
    const type = choose.value.trim();
    if (!type) return;
    try {
      const result = await app.api.json("POST", "/v1/notes/types:bulk", { json: {
        items: [...selected].map((noteId) => ({ note_id: noteId, add: [type] })), idempotencyKey: idempotencyKey() } });
      for (const item of result.results) if (item.ok) app.index.put({ id: item.note.note_id, types: item.note.types });
      const failed = result.results.find((item) => !item.ok);
      app.flash(`#${type} applied to ${result.succeeded} note${result.succeeded === 1 ? "" : "s"}` +
        (result.failed ? `; ${result.failed} not: ${failed.error.detail}` : "."));
      selected.clear();
    } catch (error) {
      app.flash(explain(error, `#${type} could not be applied`));
    }
    render();
  };
  return el("div", { class: "bulk-bar", role: "region", "aria-label": "Change the selected notes" },
    el("span", {}, `${selected.size} selected`), choose,
    el("datalist", { id: "bulk-types" }, types.map((type) => el("option", { value: type }))),
    el("button", { type: "button", class: "primary", onclick: apply }, "Apply type"),
    el("button", { type: "button", onclick: () => { selected.clear(); render(); } }, "Clear"));
}
