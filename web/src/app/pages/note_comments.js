// A note's comments: the panel beside the editor (threads, replies, edit and delete your own,
// resolve and reopen) and a marker on each block with open threads. Select text, or put the
// caret in a block, and press Comment. Comments are not note content: they go through
// /v1/notes/{id}/comments and /v1/comments/{id}, never into the Loro document, and the editor
// shows the markers as annotations (setAnnotations), which the note never holds. A viewer
// comments too. A text comment's range is sent in code points (the server's unit; the page's
// strings count UTF-16 units).
import { el, fill, idempotencyKey, when } from "../dom.js";
import { explain } from "../explain.js";
import { selectionOffsets } from "../../editor/dom.js";
import { mentionsAsText } from "../../model/mentions.js";

const RELOAD_AFTER_MS = 400;

export class NoteComments {
  constructor(app, noteId, editor, editorRoot) {
    Object.assign(this, { app, noteId, editor, editorRoot });
    this.threads = [];
    this.editing = null; // the id of the comment whose body is being edited
    this.element = el("aside", { class: "comments", "aria-label": "Comments" });
    // The selection is read on mousedown, before the click moves focus (and the selection) away.
    this.commentButton = el("button", { type: "button", class: "comment-start", onmousedown: () => (this.anchor = this._anchorOfSelection()), onclick: () => this._startThread() }, "Comment");
    this.draft = null;
    editor.setAnnotations((id) => this._marker(id), "comments");
    this.reload();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
  }

  reloadSoon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), RELOAD_AFTER_MS);
  }

  async reload() {
    try {
      const answer = await this.app.api.json("GET", `/v1/notes/${this.noteId}/comments`);
      if (this.closed) return;
      this.threads = answer.items;
    } catch {
      // offline: the panel shows what it had
    }
    this._render();
  }

  // Where a new thread goes: the selected text in one block, else the block the caret is in.
  _anchorOfSelection() {
    const selection = document.getSelection();
    const node = selection?.rangeCount ? selection.getRangeAt(0).startContainer : null;
    const start = node?.nodeType === Node.ELEMENT_NODE ? node : node?.parentElement;
    const block = start?.closest?.(".block");
    if (!block || !this.editorRoot.contains(block)) return null;
    const text = block.querySelector(".text");
    const offsets = text ? selectionOffsets(text) : null;
    const anchor = { blockId: block.dataset.id };
    if (offsets && offsets[0] !== offsets[1]) {
      const [from, to] = offsets[0] < offsets[1] ? offsets : [offsets[1], offsets[0]];
      const written = text.textContent;
      const points = (units) => Array.from(written.slice(0, units)).length;
      Object.assign(anchor, { start: points(from), end: points(to), quote: written.slice(from, to) });
    }
    return anchor;
  }

  _startThread() {
    const anchor = this.anchor ?? this._anchorOfSelection();
    this.anchor = null;
    if (!anchor) {
      this.app.flash("Select text or put the caret in a block, then press Comment.");
      return;
    }
    this.draft = anchor;
    this._render();
    this.element.querySelector(".comment-draft textarea")?.focus();
  }

  // A write; one with a body carries its idempotency key there (DELETE and /resolve and /reopen have none).
  async _send(method, path, json, failure) {
    try {
      await this.app.api.json(method, path, json === undefined ? {} : { json: { ...json, idempotencyKey: idempotencyKey() } });
      return true;
    } catch (error) {
      this.app.flash(explain(error, failure));
      return false;
    } finally {
      this.reload();
    }
  }

  async _post(body) {
    const { quote, ...anchor } = this.draft;
    if (await this._send("POST", `/v1/notes/${this.noteId}/comments`, { ...anchor, body }, "The comment could not be posted")) this.draft = null;
  }

  _marker(blockId) {
    const open = this.threads.filter((thread) => thread.block_id === blockId && !thread.resolved && !thread.on_deleted);
    if (!open.length) return [];
    const count = open.reduce((sum, thread) => sum + thread.comments.filter((c) => !c.deleted).length, 0);
    const title = `${count} comment${count === 1 ? "" : "s"} on this block`;
    return [el("button", { type: "button", class: "comment-marker", title, "aria-label": title, onclick: () => this._reveal(open[0].id) }, String(count))];
  }

  _reveal(threadId) {
    const thread = this.element.querySelector(`[data-thread="${CSS.escape(threadId)}"]`);
    thread?.scrollIntoView({ block: "nearest" });
    thread?.classList.add("landed");
  }

  _render() {
    this.editor.setAnnotations((id) => this._marker(id), "comments");
    const open = this.threads.filter((thread) => !thread.resolved);
    const resolved = this.threads.filter((thread) => thread.resolved);
    fill(this.element,
      el("div", { class: "comments-head" }, el("h2", {}, `Comments${open.length ? ` · ${open.length}` : ""}`), this.commentButton),
      this.draft ? this._form("Post", (body) => this._post(body), () => { this.draft = null; this._render(); }, "", "comment-draft", this.draft.quote) : null,
      open.length || this.draft ? null : el("p", { class: "quiet" }, "No comments. Select text or put the caret in a block, then press Comment."),
      open.map((thread) => this._thread(thread)),
      resolved.length ? el("details", { class: "resolved-threads" }, el("summary", {}, `Resolved · ${resolved.length}`), resolved.map((thread) => this._thread(thread))) : null,
    );
    // A link to a comment (an Inbox mention): that thread, in view.
    const linked = decodeURIComponent(location.hash.slice(1));
    if (linked.startsWith("comment-") && !this.revealed) {
      this.revealed = true;
      const thread = this.threads.find((t) => t.id === linked.slice(8) || t.comments.some((c) => c.id === linked.slice(8)));
      if (thread) this._reveal(thread.id);
    }
  }

  _thread(thread) {
    const where = thread.on_deleted
      ? el("p", { class: "comment-anchor deleted" }, "On deleted text", thread.quote ? el("q", {}, thread.quote) : null)
      : el("p", { class: "comment-anchor" }, thread.quote ? el("q", {}, thread.quote) : "On the block");
    return el("section", { class: `comment-thread${thread.resolved ? " resolved" : ""}`, dataset: { thread: thread.id, block: thread.block_id } },
      where,
      thread.comments.map((comment) => this._comment(comment)),
      thread.resolved ? null : this._form("Reply", (body) => this._send("POST", `/v1/notes/${this.noteId}/comments`, { threadId: thread.id, body }, "The reply could not be posted"), null, "", "comment-reply"),
      el("button", { type: "button", class: "comment-resolve", onclick: () => this._send("POST", `/v1/comments/${thread.id}/${thread.resolved ? "reopen" : "resolve"}`, undefined, "The thread could not be changed") }, thread.resolved ? "Reopen" : "Resolve"),
    );
  }

  _comment(comment) {
    if (comment.deleted) return el("div", { class: "comment deleted quiet", id: `comment-${comment.id}` }, "Comment deleted");
    const mine = comment.author.kind === "person" && comment.author.id === this.app.config.personId;
    const who = comment.author.kind === "agent" ? `${comment.author.name ?? "An agent"} (an agent)` : comment.author.name ?? "A former member";
    if (this.editing === comment.id) {
      return this._form("Save", async (body) => {
        if (await this._send("PATCH", `/v1/comments/${comment.id}`, { body }, "The comment could not be saved")) this.editing = null;
      }, () => { this.editing = null; this._render(); }, comment.body, "comment-edit");
    }
    return el("div", { class: "comment", id: `comment-${comment.id}` },
      el("p", { class: "comment-by" }, el("strong", {}, who), ` · ${when(comment.created_at)}`, comment.edited_at ? " · edited" : ""),
      el("p", { class: "comment-body" }, mentionsAsText("paragraph", comment.body)),
      mine ? el("div", { class: "comment-own" },
        el("button", { type: "button", onclick: () => { this.editing = comment.id; this._render(); } }, "Edit"),
        el("button", { type: "button", onclick: () => this._send("DELETE", `/v1/comments/${comment.id}`, undefined, "The comment could not be deleted") }, "Delete"),
      ) : null,
    );
  }

  _form(label, submit, cancel, value, kind, quote) {
    const area = el("textarea", { rows: 2, "aria-label": label === "Reply" ? "Reply" : "Comment", placeholder: label === "Reply" ? "Reply…" : "Write a comment…" });
    area.value = value;
    return el("form", { class: `comment-form ${kind}`, onsubmit: (event) => {
      event.preventDefault();
      if (area.value.trim()) submit(area.value);
    } },
      quote ? el("q", {}, quote) : null,
      area,
      el("div", { class: "decision" }, el("button", { type: "submit", class: "primary" }, label), cancel ? el("button", { type: "button", onclick: cancel }, "Cancel") : null),
    );
  }
}
