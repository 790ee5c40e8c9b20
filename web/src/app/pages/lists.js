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
  const render = () => {
    const notes = spec.notes(app.index);
    const rows = notes.map((note) =>
      el(
        "li",
        { class: "note-row" },
        link(`/notes/${note.id}`, el("span", { class: "title" }, note.title || "Untitled")),
        el("span", { class: "types" }, note.types.map((type) => `#${type}`).join(" ")),
        el("time", { datetime: note.updated_at }, when(note.updated_at)),
        target.list === "trash" ? el("button", { type: "button", onclick: () => restore(app, note) }, "Restore") : null,
      ),
    );
    app.show(spec.title, el("section", { class: "list" }, el("h1", {}, spec.title),
      target.list === "inbox" ? proposalsSection(app) : null,
      target.list === "inbox" ? el("h2", {}, "Captured") : null,
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
