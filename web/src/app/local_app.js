// Signed out, `/`: the first note, before an account (spec, Getting started › Your first note).
// The same editor as a note page, on a note that lives only in this browser: the sync layer is
// swapped for the local note store (local/note_store.js), and nothing is sent anywhere. The page
// says so, with the way to keep it: signing in, after which the app adopts it (local/adopt.js).
//
// Every change is written to IndexedDB before the top bar says it is saved; a browser that keeps
// nothing (the store's probe failed) is said to before anything is typed.
import { EditorView } from "../editor/view.js";
import { NoteModel } from "../model/note.js";
import { newId } from "../model/ulid.js";
import { el, fill } from "./dom.js";
import { noteTitle } from "./pages/note_title.js";

const SIGN_IN = "/signin?next=/";
const STATUS = {
  saving: ["Saving…", ""],
  saved: ["Saved in this browser", ""],
  volatile: ["Not kept", "This browser keeps no local storage: the note is lost when you leave this page."],
  failed: ["Not saved", "This browser refused to store the note: copy what you need, or sign in to keep it."],
};

export async function startLocalApp(root, notes) {
  const app = new LocalApp(root, await notes);
  await app.start();
  window.fastpad = app; // for the browser tests: the page's own handles
  return app;
}

class LocalApp {
  constructor(root, notes) {
    Object.assign(this, { root, notes });
    this.noteId = null;
  }

  async start() {
    this._buildShell();
    this.notes.listen((message) => this._fromOtherTab(message));
    window.addEventListener("beforeunload", (event) => {
      if ((this.notes.persistent && !this.refused) || !this._written()) return;
      event.preventDefault();
      event.returnValue = STATUS[this.refused ? "failed" : "volatile"][1];
    });
    const [latest] = await this.notes.list();
    await this.open(latest?.noteId ?? (await this._begin()));
  }

  _buildShell() {
    this.status = el("div", { class: "sync-status", role: "status", "aria-live": "polite", dataset: { state: "idle" } });
    const topbar = el("header", { class: "topbar" }, el("div", { class: "brand" }, "Fastpad"), el("div", { class: "crumb" }), this.status,
      el("a", { class: "button primary", href: SIGN_IN }, this.notes.persistent ? "Sign in to keep it" : "Sign in"));
    // Said before anything is typed: where this note lives — or, in a browser that keeps nothing,
    // that it will not outlive this page (signing in leaves the page too).
    const notice = this.notes.persistent
      ? el("p", { class: "banner local-notice" }, "This note lives only in this browser until you sign in: nothing is sent anywhere. ",
        el("a", { href: SIGN_IN }, "Sign in to keep it"), ".")
      : el("p", { class: "banner local-warning", role: "alert" }, "This browser keeps no local storage (a private window, or site data blocked): ",
        "what you write here is lost when you leave, reload or close this page — signing in included. Copy what you need before you go.");
    this.main = el("article", { class: "note" });
    this.others = el("section", { class: "local-notes", "aria-label": "Notes in this browser" });
    fill(this.root, el("div", { class: "local-shell" }, topbar, el("main", { class: "page" }, el("div", { class: "note" }, notice), this.main, this.others)));
    this._setStatus(this.notes.persistent ? "saved" : "volatile");
  }

  async _begin() {
    const noteId = newId();
    await this.notes.create(noteId);
    return noteId;
  }

  async open(noteId) {
    this.unsubscribe?.();
    this.editor?.destroy();
    this.noteId = noteId;
    this.model = new NoteModel(await this.notes.document(noteId));
    this.unsubscribe = this.model.doc.subscribeLocalUpdates((bytes) => this._save(bytes));
    this.title = noteTitle(this.model, { changed: () => this._renderTitle(), focusBlock: (id) => this.editor.focusBlock(id, 0) });
    const host = el("div", { class: "editor-host" });
    fill(this.main, this.title, host);
    this.editor = new EditorView(host, this.model, { noteId });
    this._renderTitle();
    await this._renderOthers();
  }

  // Every local change, in order, to the device; "saved" once none is still being written. One
  // refused write leaves the note incomplete there for good, and the bar says so from then on.
  _save(bytes) {
    const written = this.notes.append(this.noteId, bytes, this.model.title);
    if (!this.notes.persistent || this.refused) return;
    this._setStatus("saving");
    written.then(
      () => !this.refused && !this.notes.writing && this._setStatus("saved"),
      () => {
        this.refused = true;
        this._setStatus("failed");
      },
    );
  }

  _written() {
    return Boolean(this.model?.title) || (this.model?.blocks() ?? []).some((block) => block.text);
  }

  // Another tab of this browser typed into a note here, or a sign-in there adopted one: this
  // browser is signed in now, and a reload is the app, with the note in the workspace.
  _fromOtherTab(message) {
    if (message.kind === "adopted") {
      location.reload();
      return;
    }
    if (message.kind !== "update" || message.noteId !== this.noteId) return;
    const changes = this.model.importUpdates(message.bytes);
    this.editor.refresh(changes);
    if (changes.meta && document.activeElement !== this.title) this.title.textContent = this.model.title;
  }

  _renderTitle() {
    document.title = `${this.model.title || "Untitled"} · Fastpad`;
    this._renderOthersSoon();
  }

  _renderOthersSoon() {
    clearTimeout(this.othersTimer);
    this.othersTimer = setTimeout(() => this._renderOthers(), 500);
  }

  // The other notes this browser keeps, and a fresh one: all of them are adopted at sign-in.
  async _renderOthers() {
    const others = (await this.notes.list()).filter((note) => note.noteId !== this.noteId);
    fill(this.others,
      others.length ? el("h2", {}, "Also in this browser") : null,
      others.length ? el("ul", { class: "notes" }, others.map((note) =>
        el("li", { class: "note-row" }, el("button", { type: "button", class: "link", onclick: () => this.open(note.noteId) }, note.title || "Untitled")))) : null,
      el("button", { type: "button", onclick: async () => this.open(await this._begin()) }, "New note"),
    );
  }

  _setStatus(state) {
    const [label, hint] = STATUS[state];
    this.status.dataset.state = state;
    fill(this.status, el("span", { class: "dot", "aria-hidden": "true" }), el("span", { class: "label" }, label), hint ? el("span", { class: "hint" }, hint) : null);
  }
}
