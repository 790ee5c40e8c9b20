// One note: its title, types and properties, the block editor, what agents propose for it and
// which of its text no person ratified (note_review.js), its backlinks (each with the sentence
// that makes the link), its comments (note_comments.js), archive / trash / restore, publish /
// unpublish, and a link to its history (history.js).
import { EditorView } from "../../editor/view.js";
import { NoteProperties } from "./note_properties.js";
import { NoteReview } from "./note_review.js";
import { BlockAuthor } from "./block_author.js";
import { NoteComments } from "./note_comments.js";
import { noteTitle } from "./note_title.js";
import { CollectionView, EMBED_LANGUAGE } from "../collection_view.js";
import { NoteSync } from "../../sync/note_sync.js";
import { PresenceChannel } from "../../sync/presence.js";
import { PresenceView } from "./presence_view.js";
import { cursorAt } from "../../model/carets.js";
import { explain } from "../explain.js";
import { nameOf } from "../people.js";
import { el, fill, idempotencyKey, link } from "../dom.js";

// What the top bar says, per sync state, so a person knows what to do.
const HINTS = {
  saved: "",
  saving: "",
  offline: "Your edits are kept on this device and will be sent when the connection returns.",
  "session-ended": "Your edits are kept on this device and are sent once you sign in again.",
  deleted: "This note no longer exists on the server. Your text stays on screen: copy what you need.",
  trashed: "Someone moved this note to the trash. Restore it to keep saving; your edits are kept.",
  fault: "The server failed to save. Fastpad keeps trying; your edits are kept.",
  refused: "The server refused this change. Your text stays on screen: copy what you need.",
  "rate-limited": "The server asked to slow down; saving resumes by itself.",
};
const VOLATILE = "This browser keeps no local copy (private window or blocked site data): do not reload until it says Saved.";

export class NotePage {
  constructor(app, noteId) {
    this.app = app;
    this.noteId = noteId;
    this.closed = false;
  }

  async open() {
    const app = this.app;
    app.show("Opening…", el("p", { class: "quiet" }, "Opening the note…"));
    // The others see this tab arrive while the note is still loading; their carets are drawn once it is.
    this.channel = new PresenceChannel({ api: app.api, noteId: this.noteId, onChange: (peers) => this.presence?.show(peers) });
    try {
      this.sync = await NoteSync.open({
        api: app.api,
        store: app.store,
        feed: app.feed,
        noteId: this.noteId,
        onStatus: (status) => this._status(status),
        onRemote: (changes) => this._remote(changes),
      });
    } catch (error) {
      this.channel.stop();
      app.show("Not opened", el("section", { class: "list" }, el("h1", {}, "This note could not be opened"), el("p", {}, explain(error, "Opening it failed")), link("/", "Go home")));
      return;
    }
    if (this.closed) return this.sync.stop(); // close() has stopped the channel
    this.model = this.sync.model;
    app.index.openNoteId = this.noteId;
    this._build();
    this.unlistenIndex = app.index.listen(() => this._renderState());
    this._beforeUnload = (event) => {
      if (!this.sync.persistent && this.sync.hasUnsent) {
        event.preventDefault();
        event.returnValue = VOLATILE;
      }
    };
    window.addEventListener("beforeunload", this._beforeUnload);
    this._status({ state: this.sync.state, label: "", unsent: this.sync.hasUnsent, persistent: this.sync.persistent });
  }

  close() {
    this.closed = true;
    if (this.app.index.openNoteId === this.noteId) this.app.index.openNoteId = null;
    this.sync?.stop();
    this.editor?.destroy();
    this.embeds?.forEach((view) => view.close());
    this.unlistenIndex?.();
    this.review?.close();
    this.comments?.close();
    this.channel?.stop();
    this.presence?.close();
    document.removeEventListener("selectionchange", this._selectionChange);
    window.removeEventListener("beforeunload", this._beforeUnload);
  }

  focusTitle() {
    this.title?.focus();
  }

  _build() {
    const app = this.app;
    this.title = noteTitle(this.model, { changed: () => this._renderTitle(), focusBlock: (id) => this.editor.focusBlock(id, 0) });
    this.meta = el("div", { class: "note-meta" });
    this.actions = el("div", { class: "note-actions" });
    this.banner = el("div", { class: "banner", role: "status", hidden: true });
    this.waiting = el("div", { class: "proposals-here", "aria-label": "Proposals for this note" });
    const host = el("div", { class: "editor-host" });
    this.backlinks = el("section", { class: "backlinks", "aria-label": "Backlinks" });
    const beside = el("div", { class: "note-with-comments" });
    const article = el("article", { class: "note" }, el("div", { class: "note-head" }, this.title, this.meta, this.actions), this.banner, this.waiting, beside, this.backlinks);
    app.show(this.model.title || "Untitled", article);
    this.embeds = new Set();
    this.editor = new EditorView(host, this.model, { noteId: this.noteId, findNotes: (query) => this._findNotes(query), findMentions: (query) => this._findMentions(query), embed: (block) => this._embed(block) });
    this._startPresence(article);
    this._renderMeta();
    this._renderState();
    this._loadBacklinks();
    this._loadPublication();
    this.review = new NoteReview(app, this.noteId, this.waiting, this.editor);
    this.comments = new NoteComments(app, this.noteId, this.editor, host);
    fill(beside, host, this.comments.element);
    this.blockAuthor = new BlockAuthor(app.api, app.people, this.noteId, host);
    this.actions.after(this.blockAuthor.element);
    // A link to one block (a proposal's source, say): that block, in view, with the caret in it.
    const linked = decodeURIComponent(location.hash.slice(1));
    if (linked && this.model.has(linked)) {
      this.editor.focusBlock(linked, 0);
      // Marked for a moment, so the eye finds the block the link (a mention in the Inbox) was about.
      host.querySelector(`.block[data-id="${CSS.escape(linked)}"]`)?.classList.add("landed");
    }
  }

  // Who else is here: this tab's caret goes out as Loro cursors whenever it moves, the others'
  // come in and are drawn over the note (sync/presence.js, presence_view.js).
  _startPresence(article) {
    this.presence = new PresenceView({ topbar: this.app.topbar, before: this.app.status, note: article, editor: this.editor, model: this.model });
    this.presence.show(this.channel.peers());
    this._selectionChange = () => {
      this.presence.draw(); // this tab's typing moves the others' carets on screen too
      if (this.editor.selection.composing) return;
      const held = this.editor.selection.read(cursorAt);
      // Typing keeps the caret's anchor (see cursorAt): only a caret that moved otherwise is posted.
      const anchoredTo = (caret) => `${caret.id}:${caret.atEnd ? "end" : caret.cursor.encode().join(".")}`;
      const where = held ? `${anchoredTo(held.anchor)} ${anchoredTo(held.focus)}` : "";
      if (where === this._caretShown) return;
      this._caretShown = where;
      const wire = (caret) => ({ cursor: caret.cursor.encode(), width: caret.width });
      this.channel.publish(held ? { anchor: wire(held.anchor), focus: wire(held.focus) } : { anchor: null, focus: null });
    };
    document.addEventListener("selectionchange", this._selectionChange);
  }

  // A `fastpad-collection` code block shows its collection, live, where the block is.
  _embed(block) {
    // Its first line: what follows (the definition `fp pull` writes under it) is description.
    const id = block.type === "code" && block.attrs.language === EMBED_LANGUAGE ? block.text.trim().split("\n")[0].trim() : "";
    if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) return null;
    const view = new CollectionView(this.app, id, { embedded: true });
    this.embeds.add(view);
    return view.element;
  }

  // The title on screen, in the top bar and in the sidebar's summary of this note.
  _renderTitle() {
    const title = this.model.title || "Untitled";
    this.app.heading.textContent = title;
    document.title = `${title} · Fastpad`;
    if (this._summary() && this._summary().title !== this.model.title) this.app.index.put({ id: this.noteId, title: this.model.title });
  }

  _remote(changes) {
    if (!this.editor) return;
    this.editor.refresh(changes);
    this.presence.draw();
    if (changes.meta) {
      if (document.activeElement !== this.title && this.title.textContent !== this.model.title) this.title.textContent = this.model.title;
      this._renderTitle();
      this._renderMeta();
    }
    this._loadBacklinks();
    this.review.reloadSoon();
    this.comments.reloadSoon(); // where a text comment's range is now
  }

  _renderMeta() {
    this.properties ??= new NoteProperties(this.app, this.noteId, this.meta, this.model);
    this.properties.render();
  }

  _summary() {
    return this.app.index.notes.get(this.noteId);
  }

  _renderState() {
    const summary = this._summary();
    const trashed = summary?.trashed ?? false;
    const archived = summary?.archived ?? false;
    // A viewer reads (and comments); the server refuses their ops, so nothing here offers a write.
    const viewer = this.app.config.role === "viewer";
    const action = (label, verb) => el("button", { type: "button", onclick: () => this._lifecycle(verb) }, label);
    const published = !trashed && this.publication?.published;
    fill(this.actions,
      link(`/notes/${this.noteId}/history`, "History"),
      published ? el("a", { class: "public-link", href: `/n/${this.noteId}`, target: "_blank", rel: "noopener" }, "Public page") : null,
      viewer ? null : [
        trashed || !this.publication ? null
          : el("button", { type: "button", onclick: () => this._publish(!published) }, published ? "Unpublish" : "Publish"),
        trashed ? action("Restore", "restore") : archived ? action("Unarchive", "unarchive") : action("Archive", "archive"),
        trashed ? null : action("Move to trash", "trash"),
      ],
    );
    this.banner.hidden = !trashed && !archived && !viewer;
    this.banner.textContent = trashed
      ? "This note is in the trash. Restore it to edit and find it again."
      : viewer
        ? "You can read and comment; a viewer cannot edit."
        : archived
          ? "This note is archived: it stays linkable and exportable, and search leaves it out."
          : "";
    this.editor.setReadOnly(trashed || viewer);
    this.title.contentEditable = trashed || viewer ? "false" : "plaintext-only";
  }

  async _lifecycle(verb) {
    try {
      const note = await this.app.api.json("POST", `/v1/notes/${this.noteId}/${verb}`, { json: { idempotencyKey: idempotencyKey() } });
      this.app.index.put(note);
      if (verb === "trash" && this.publication) this.publication = { ...this.publication, published: false }; // trashing unpublishes
      if (verb === "restore") this.sync.resume();
      if (verb === "trash") this.app.flash("Moved to the trash. Restore it from Trash.");
    } catch (error) {
      this.app.flash(explain(error, `The note could not be ${verb === "trash" ? "moved to the trash" : `${verb}d`}`));
    }
  }

  // Whether the note is published; until it is known there is no Publish button to press.
  async _loadPublication() {
    try {
      this.publication = await this.app.api.json("GET", `/v1/notes/${this.noteId}/publication`);
    } catch {
      this.publication = null; // offline: the status bar says so, and publishing waits for the connection
    }
    this._renderState();
  }

  async _publish(publish) {
    try {
      this.publication = await this.app.api.json(publish ? "PUT" : "DELETE", `/v1/notes/${this.noteId}/publication`);
      this.app.flash(publish ? "Published: anyone with the link can read it, secrets masked." : "Unpublished: its link now reads as a note that does not exist.");
    } catch (error) {
      this.app.flash(explain(error, publish ? "The note could not be published" : "The note could not be unpublished"));
    }
    this._renderState();
  }

  // Backlinks change when other notes do; re-read them at most once a second while edits arrive.
  async _loadBacklinks() {
    if (this._backlinksTimer) return;
    this._backlinksTimer = setTimeout(async () => {
      this._backlinksTimer = null;
      try {
        const links = await this.app.api.json("GET", `/v1/notes/${this.noteId}/links`);
        this._renderBacklinks(links.backlinks ?? []);
      } catch {
        // offline or gone: the list stays as it was, the status bar says why
      }
    }, this._backlinksLoaded ? 1000 : 0);
    this._backlinksLoaded = true;
  }

  _renderBacklinks(backlinks) {
    fill(this.backlinks,
      el("h2", {}, `Backlinks${backlinks.length ? ` · ${backlinks.length}` : ""}`),
      backlinks.length
        ? el(
            "ul",
            {},
            backlinks.map((edge) =>
              el(
                "li",
                { class: "backlink" },
                link(`/notes/${edge.source.id}`, edge.source.title || "Untitled"),
                el("span", { class: "edge-type" }, edge.type.replace(/_/g, " ")),
                edge.evidence?.text ? el("blockquote", { class: "evidence" }, edge.evidence.text) : edge.evidence?.withheld ? el("p", { class: "quiet" }, "Evidence withheld") : null,
              ),
            ),
          )
        : el("p", { class: "quiet" }, "No note links here yet. Type [[ in another note to link to this one."),
    );
  }

  async _findNotes(query) {
    await this.app.index.load().catch(() => {});
    return this.app.index.match(query, 8).filter((note) => note.id !== this.noteId);
  }

  // `@` offers the workspace's people first, then notes; people who cannot be read (offline) are left out.
  async _findMentions(query) {
    const [people, notes] = await Promise.all([this.app.people.match(query, 5).catch(() => []), this._findNotes(query)]);
    return [...people.map((person) => ({ person: { id: person.id, name: nameOf(person), email: person.email } })), ...notes];
  }

  _status(status) {
    // A saved edit may have met a waiting proposal (now a merge) or rewritten an agent's block.
    if (status.state === "saved" && this.review?.shows) this.review.reloadSoon();
    if (status.state === "saved") this.blockAuthor?.refresh();
    const hint = [HINTS[status.state], !status.persistent && status.unsent ? VOLATILE : ""].filter(Boolean).join(" ");
    this.app.setStatus({ state: status.state, label: status.label || "", hint });
  }
}
