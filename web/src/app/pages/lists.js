// The list pages: Home (recent), Inbox (where you were mentioned, proposals waiting for review,
// then captures), Archive, Trash, one type's notes.
import { explain } from "../explain.js";
import { mentionsAsText } from "../../model/mentions.js";
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
      target.list === "inbox" ? mentionsSection(app) : null,
      target.list === "inbox" ? proposalsSection(app) : null,
      target.list === "inbox" ? el("h2", {}, "Captured") : null,
      selected.size ? bulkBar(app, selected, render) : null,
      rows.length ? el("ul", { class: "notes" }, rows) : el("p", { class: "quiet" }, spec.empty)));
  };
  render();
  const inbox = target.list === "inbox";
  if (inbox) app.mentions.load(true).catch((error) => app.flash(explain(error, "Your mentions could not be loaded")));
  const unlisten = [app.index.listen(render), inbox ? app.proposals.listen(render) : null, inbox ? app.mentions.listen(render) : null];
  return { close: () => unlisten.forEach((stop) => stop?.()) };
}

// Where this person was mentioned, newest first: who, in which note, the block's text; unread
// ones stand out. Opening one marks it read and lands on the block.
function mentionsSection(app) {
  const { items, unread, nextCursor } = app.mentions;
  const open = (event, mention) => {
    if (!mention.read) app.mentions.mark(mention, true).catch((error) => app.flash(explain(error, "The mention could not be marked read")));
    app.go(mention.url);
    event.preventDefault();
  };
  const row = (mention) => el("li", { class: `note-row mention${mention.read ? "" : " unread"}`, dataset: { mention: mention.id } },
    el("a", { href: mention.url, onclick: (event) => open(event, mention) },
      el("span", { class: "title" }, `${mention.mentioned_by.name ?? "A former member"} mentioned you in ${mention.note_title ?? "a note in the trash"}`,
        mention.origin === "agent_written" ? el("span", { class: "origin" }, mention.mentioned_by.kind === "agent" ? " (an agent's write)" : " (an agent's words they accepted)") : null),
      mention.excerpt !== null ? el("span", { class: "excerpt" }, mentionsAsText("paragraph", mention.excerpt)) : null),
    el("span", { class: "types" }, mention.read ? "" : "New"),
    el("button", { type: "button", onclick: () => app.mentions.mark(mention, !mention.read).catch((error) => app.flash(explain(error, "The mention could not be changed"))) },
      mention.read ? "Mark unread" : "Mark read"),
    el("time", { datetime: mention.created_at }, when(mention.created_at)));
  return el("section", { class: "mentions", "aria-label": "Mentions" },
    el("h2", {}, "Mentions", unread ? el("button", { type: "button", onclick: () => app.mentions.markAllRead().catch((error) => app.flash(explain(error, "The mentions could not be marked read"))) }, "Mark all read") : null),
    items.length
      ? el("ul", { class: "notes" }, items.map(row))
      : el("p", { class: "quiet" }, "Nobody has mentioned you yet. Typing @ and a name in a note mentions someone."),
    nextCursor ? el("button", { type: "button", onclick: () => app.mentions.more().catch((error) => app.flash(explain(error, "More mentions could not be loaded"))) }, "Older mentions") : null);
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
