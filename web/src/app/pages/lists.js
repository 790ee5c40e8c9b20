// The list pages: Home (recent), Inbox, Archive, Trash, one type's notes, search results.
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
    app.show(spec.title, el("section", { class: "list" }, el("h1", {}, spec.title), rows.length ? el("ul", { class: "notes" }, rows) : el("p", { class: "quiet" }, spec.empty)));
  };
  render();
  const unlisten = app.index.listen(render);
  return { close: unlisten };
}

async function restore(app, note) {
  try {
    app.index.put(await app.api.json("POST", `/v1/notes/${note.id}/restore`, { json: { idempotencyKey: idempotencyKey() } }));
  } catch (error) {
    app.flash(explain(error, "The note could not be restored"));
  }
}

export function searchPage(app, query) {
  const results = el("ol", { class: "results" });
  app.show("Search", el("section", { class: "list" }, el("h1", {}, query ? `Search: ${query}` : "Search"), results));
  if (!query.trim()) return {};
  const controller = new AbortController();
  app.api
    .json("GET", "/v1/search", { query: { q: query, limit: 20 }, signal: controller.signal })
    .then((page) => {
      const hits = page.hits ?? page.items ?? [];
      fill(results,
        ...(hits.length
          ? hits.map((hit) =>
              el("li", {}, link(`/notes/${hit.note_id ?? hit.id}`, el("span", { class: "title" }, hit.title || "Untitled")), hit.snippet ? el("p", { class: "snippet" }, hit.snippet) : null),
            )
          : [el("p", { class: "quiet" }, "Nothing found.")]),
      );
    })
    .catch((error) => error?.name !== "AbortError" && fill(results, el("p", { class: "error" }, explain(error, "Search failed"))));
  return { close: () => controller.abort() };
}
