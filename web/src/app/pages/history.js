// A note's history (GET /v1/notes/{id}/history): its sessions, newest first — who, when, through
// which proposal, how many changes and blocks. Choosing one shows the note as it was after it
// (GET /v1/notes/{id}?at=…), read-only, each block marked against now, with Restore this version
// and Restore this block (POST /v1/notes/{id}/history:restore): a new change by you; nothing
// in between is lost. A viewer reads history and restores nothing.
import { explain } from "../explain.js";
import { el, fill, idempotencyKey, link, when } from "../dom.js";
import { nameOf } from "../people.js";

const PAGE = 30;
const STATUS = { same: "", changed: "Changed since", removed: "Deleted since", added: "Added since" };

export function historyPage(app, noteId) {
  const viewer = app.config.role === "viewer";
  const title = app.index.notes.get(noteId)?.title || "Untitled";
  const sessions = el("ol", { class: "history-sessions", "aria-label": "Sessions" });
  const more = el("button", { type: "button", class: "more", hidden: true }, "Older");
  const version = el("section", { class: "history-version", "aria-label": "Version", hidden: true });
  const message = el("p", { class: "quiet", role: "status" });
  app.show(`History · ${title}`, el("section", { class: "history" },
    el("p", {}, link(`/notes/${noteId}`, `← Back to ${title}`)),
    el("div", { class: "history-columns" }, el("div", {}, sessions, more, message), version)));
  let cursor = null;
  let chosen = null;

  async function authorName(author) {
    if (author.kind === "agent") return `${author.name ?? "an agent"} (an agent)`;
    if (author.name) return author.name;
    const person = (await app.people.list().catch(() => [])).find((p) => p.id === author.id);
    return person ? nameOf(person) : "a former member";
  }

  async function loadMore() {
    more.hidden = true;
    try {
      const page = await app.api.json("GET", `/v1/notes/${noteId}/history`, { query: { limit: PAGE, ...(cursor ? { cursor } : {}) } });
      for (const session of page.sessions) sessions.append(await sessionItem(session));
      cursor = page.next_cursor;
      more.hidden = !cursor;
      if (!cursor && page.compacted_before) message.textContent = "Older history was compacted into the note.";
      if (!chosen && page.sessions.length) show(page.sessions[0], sessions.firstElementChild);
    } catch (error) {
      message.textContent = explain(error, "The history could not be read");
    }
  }

  async function sessionItem(session) {
    const what = session.restore ? "Restored an earlier version"
      : session.kinds.includes("create") ? "Created the note"
        : `${session.changes} change${session.changes === 1 ? "" : "s"} to ${session.blocks_touched.length} block${session.blocks_touched.length === 1 ? "" : "s"}`;
    const item = el("li", { class: "history-session" });
    const button = el("button", { type: "button", class: "history-pick", dataset: { frontier: session.frontier } },
      el("strong", {}, await authorName(session.author)),
      el("span", {}, ` · ${what}`),
      session.proposal ? el("span", { class: "quiet" }, ` · proposed by ${session.proposal.author.name ?? "an agent"}`) : null,
      el("span", { class: "quiet history-when" }, when(session.last_at)));
    button.addEventListener("click", () => show(session, item));
    item.append(button);
    return item;
  }

  async function show(session, item) {
    chosen = session;
    for (const other of sessions.children) other.classList.toggle("chosen", other === item);
    version.hidden = false;
    fill(version, el("p", { class: "quiet" }, "Reading that version…"));
    let at;
    try {
      at = await app.api.json("GET", `/v1/notes/${noteId}`, { query: { at: session.frontier } });
    } catch (error) {
      fill(version, el("p", {}, explain(error, "That version could not be read")));
      return;
    }
    if (chosen !== session) return;
    const current = at.at === at.current_frontier;
    const changed = at.diff.filter((d) => d.status !== "same").length;
    fill(version,
      el("h2", {}, at.title || "Untitled"),
      el("p", { class: "quiet" }, current ? "This is the note as it is now."
        : `As it was ${when(session.last_at)} · ${changed} block${changed === 1 ? "" : "s"} differ from now`),
      viewer || current ? null : el("button", { type: "button", class: "primary", onclick: () => restore(session.frontier) }, "Restore this version"),
      el("ol", { class: "history-blocks" }, at.diff.map((d) => blockItem(d, session.frontier, current))));
  }

  function blockItem(d, frontier, current) {
    const shown = d.then ?? d.now;
    return el("li", { class: `history-block ${d.status}`, dataset: { id: d.block_id, status: d.status } },
      STATUS[d.status] ? el("span", { class: "history-mark" }, STATUS[d.status]) : null,
      el("div", { class: `history-text type-${shown.type}` }, d.status === "added" ? el("s", {}, shown.text) : shown.text || "\u00a0"),
      d.status === "changed" ? el("div", { class: "history-now quiet" }, `Now: ${d.now.text}`) : null,
      viewer || current || d.status === "same" || d.status === "added" ? null
        : el("button", { type: "button", class: "history-restore-block", onclick: () => restore(frontier, d.block_id) }, "Restore this block"));
  }

  async function restore(frontier, blockId) {
    try {
      await app.api.json("POST", `/v1/notes/${noteId}/history:restore`,
        { json: { at: frontier, ...(blockId ? { block_id: blockId } : {}), idempotencyKey: idempotencyKey() } });
      app.flash(blockId ? "The block reads as it did. Its later text stays in the history." : "The note reads as it did. Everything since stays in the history.");
      app.go(`/notes/${noteId}`);
    } catch (error) {
      app.flash(explain(error, "It could not be restored"));
    }
  }

  more.addEventListener("click", loadMore);
  loadMore();
  return { close() {} };
}
