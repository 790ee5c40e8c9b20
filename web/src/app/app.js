// The app: the shell (sidebar, top bar), the router, and the pages it shows. Pages reach
// notes through the sync layer and everything else through the HTTP API; none of them
// touches Loro directly.
import { Api } from "../sync/api.js";
import { openDeviceStore } from "../sync/device_store.js";
import { ChangeFeed } from "../sync/feed.js";
import { adoptLocalNotes } from "../local/adopt.js";
import { openLocalNotes } from "../local/note_store.js";
import { el, fill, idempotencyKey, link } from "./dom.js";
import { CollectionsIndex } from "./collections_index.js";
import { explain } from "./explain.js";
import { NotesIndex } from "./notes_index.js";
import { accountPage } from "./pages/account.js";
import { auditPage } from "./pages/audit.js";
import { historyPage } from "./pages/history.js";
import { collectionPage, newCollectionPage } from "./pages/collections.js";
import { folderPage, importPage } from "./pages/imports.js";
import { listPage } from "./pages/lists.js";
import { membersPage } from "./pages/members.js";
import { NotePage } from "./pages/note_page.js";
import { searchPage } from "./pages/search.js";
import { typesPage } from "./pages/types.js";
import { newWorkspacePage, workspaceSwitcher } from "./pages/workspaces.js";
import { Palette } from "./palette.js";
import { WaitingProposals } from "./proposals.js";
import { MentionsInbox } from "./mentions_inbox.js";
import { People } from "./people.js";

const NOTE_PATH = /^\/notes\/([0-9A-HJKMNP-TV-Z]{26})$/;
const ROUTES = [
  [/^\/$/, () => ({ kind: "list", list: "recent" })],
  [NOTE_PATH, (match) => ({ kind: "note", id: match[1] })],
  [/^\/notes\/([0-9A-HJKMNP-TV-Z]{26})\/history$/, (match) => ({ kind: "history", id: match[1] })],
  [/^\/inbox$/, () => ({ kind: "list", list: "inbox" })],
  [/^\/archive$/, () => ({ kind: "list", list: "archive" })],
  [/^\/trash$/, () => ({ kind: "list", list: "trash" })],
  [/^\/types$/, () => ({ kind: "types" })],
  [/^\/types\/([^/]+)$/, (match) => ({ kind: "list", list: "type", type: decodeURIComponent(match[1]) })],
  [/^\/search$/, () => ({ kind: "search", query: new URLSearchParams(location.search).get("q") ?? "" })],
  [/^\/import$/, () => ({ kind: "import" })],
  [/^\/audit$/, () => ({ kind: "audit" })],
  [/^\/settings\/members$/, () => ({ kind: "members" })],
  [/^\/settings\/account$/, () => ({ kind: "account" })],
  [/^\/workspaces\/new$/, () => ({ kind: "new-workspace" })],
  [/^\/collections\/new$/, () => ({ kind: "new-collection" })],
  [/^\/collections\/([0-9A-HJKMNP-TV-Z]{26})$/, (match) => ({ kind: "collection", id: match[1] })],
  [/^\/folders\/(.+)$/, (match) => ({ kind: "folder", folder: match[1].split("/").map(decodeURIComponent).join("/") })],
];

// The first requests a page at `path` makes: the feed's end, the notes list, and an open
// note's history. Asked for before the app starts, they are answered by the time it asks.
export function prefetchFor(api, path) {
  api.prefetch("/v1/changes", { query: { start: "latest" } });
  api.prefetch("/v1/notes", { query: NotesIndex.FIRST_PAGE });
  const note = NOTE_PATH.exec(path);
  if (note) api.prefetch(`/v1/notes/${note[1]}/snapshot`, { accept: "application/octet-stream" });
}

export async function startApp(root, config, { api = new Api({ csrfToken: config.csrfToken, workspaceId: config.workspaceId }), store = openDeviceStore(), localNotes = openLocalNotes() } = {}) {
  store = await store;
  const feed = new ChangeFeed(api);
  const app = new App(root, { api, store, feed, config, localNotes });
  await app.start();
  window.fastpad = app; // for the browser tests and the benchmark: the app's own handles
  return app;
}

class App {
  constructor(root, { api, store, feed, config, localNotes }) {
    Object.assign(this, { root, api, store, feed, config, localNotes });
    this.index = new NotesIndex(api, feed);
    this.proposals = new WaitingProposals(api, feed);
    this.mentions = new MentionsInbox(api, feed);
    this.people = new People(api);
    this.collections = new CollectionsIndex(api, feed);
    this.page = null;
    this.palette = new Palette(this);
    api.onSessionEnded = () => this._sessionEnded();
    api.onSessionResumed = () => {
      this.sessionNotice?.remove();
      this.sessionNotice = null;
    };
  }

  async start() {
    this._buildShell();
    this.index.listen(() => this._renderSidebar());
    this.proposals.listen(() => this._renderSidebar());
    this.mentions.listen(() => this._renderSidebar());
    this.collections.listen(() => this._renderSidebar());
    this.feed.ready().catch(() => {});
    this.index.load().catch(() => {});
    this.proposals.load().catch(() => {});
    this.mentions.load().catch(() => {});
    this.collections.load().catch(() => {});
    document.addEventListener("click", (event) => this._onLinkClick(event));
    window.addEventListener("popstate", () => this.route());
    document.addEventListener("keydown", (event) => {
      if ((event.metaKey || event.ctrlKey) && event.key.toLowerCase() === "k") {
        event.preventDefault();
        this.palette.toggle();
      }
    });
    await this._adoptLocalNotes();
    await this.route();
  }

  // The notes written in this browser before the person signed in become theirs, once; the one
  // written to last opens, if they came to the home page (as "Sign in to keep it" brings them).
  async _adoptLocalNotes() {
    const { adopted, failed } = await adoptLocalNotes(this.api, await this.localNotes);
    if (failed) this.flash(explain(failed, "A note written before you signed in stays in this browser for now; it is adopted at the next start"));
    if (!adopted.length) return;
    adopted.forEach((note) => this.index.put(note));
    if (location.pathname === "/") history.replaceState(null, "", `/notes/${adopted[0].id}`);
    this.flash(adopted.length === 1 ? "The note you wrote before signing in is in your workspace now." : `The ${adopted.length} notes you wrote before signing in are in your workspace now.`);
  }

  _buildShell() {
    this.nav = el("nav", { class: "nav", "aria-label": "Notes" });
    this.switcher = workspaceSwitcher(this);
    this.searchInput = el("input", { type: "search", name: "q", placeholder: "Search", "aria-label": "Search notes" });
    this.sidebar = el(
      "aside",
      { class: "sidebar", id: "sidebar" },
      el("div", { class: "brand" }, link("/", "Fastpad")),
      this.switcher.element,
      el("button", { type: "button", class: "primary new-note", onclick: () => this.newNote() }, "New note"),
      el(
        "form",
        {
          class: "search",
          role: "search",
          onsubmit: (event) => {
            event.preventDefault();
            this.go(`/search?q=${encodeURIComponent(this.searchInput.value)}`);
          },
        },
        this.searchInput,
      ),
      el("button", { type: "button", class: "palette-hint", onclick: () => this.palette.toggle() }, "Jump to… ", el("kbd", {}, /Mac/.test(navigator.platform) ? "⌘K" : "Ctrl K")),
      this.nav,
      el(
        "div",
        { class: "sidebar-foot" },
        el("a", { href: "/types", dataset: { link: "" } }, "Types"),
        el("a", { href: "/import", dataset: { link: "" } }, "Import"),
        el("a", { href: "/agent-activity" }, "Review & agent activity"),
        el("a", { href: "/settings/tokens" }, "Agents & tokens"),
        el("a", { href: "/settings/members", dataset: { link: "" } }, "Members"),
        el("a", { href: "/settings/account", dataset: { link: "" } }, "Your account"),
        ["owner", "admin"].includes(this.config.role) ? el("a", { href: "/audit", dataset: { link: "" } }, "Audit log") : null,
        el(
          "form",
          { method: "post", action: "/signout", onsubmit: (event) => this._signOut(event) },
          el("input", { type: "hidden", name: "csrf_token", value: this.config.csrfToken }),
          el("button", { type: "submit", class: "link" }, "Sign out"),
        ),
      ),
    );
    this.status = el("div", { class: "sync-status", role: "status", "aria-live": "polite", dataset: { state: "idle" } });
    this.heading = el("div", { class: "crumb" });
    this.topbar = el(
      "header",
      { class: "topbar" },
      el("button", { type: "button", class: "menu-toggle", "aria-controls": "sidebar", "aria-label": "Menu", onclick: () => this.root.classList.toggle("nav-open") }, "☰"),
      this.heading,
      this.status,
    );
    this.main = el("main", { class: "page", id: "page" });
    fill(this.root, el("div", { class: "shell" }, this.sidebar, el("div", { class: "content" }, this.topbar, this.main)));
    this._renderSidebar();
  }

  // A request answered 401 (signed out elsewhere, or removed from the workspace): the top bar says
  // so until a request is answered again. Sync keeps its queue at a 401, so unsent edits stay on
  // this device; signing in opens in another tab, so this one (and, in a browser that keeps no
  // local copy, the edits only it holds) lives on and sends them once that sign-in lands.
  _sessionEnded() {
    const next = encodeURIComponent(location.pathname + location.search);
    this.sessionNotice = el("p", { class: "session-ended", role: "alert" }, "Session ended — ",
      el("a", { href: `/signin?next=${next}`, target: "_blank" }, "sign in again"));
    this.topbar.append(this.sessionNotice);
  }

  _renderSidebar() {
    const current = location.pathname;
    const item = (href, label, count) =>
      el("a", { href, dataset: { link: "" }, class: current === href ? "active" : undefined, "aria-current": current === href ? "page" : undefined }, el("span", {}, label), count ? el("span", { class: "count" }, String(count)) : null);
    const recent = this.index.recent().slice(0, 8);
    const types = this.index.types().filter(([type]) => type !== "Inbox");
    fill(this.nav,
      item("/", "Home"),
      item("/inbox", "Inbox", this.mentions.unread + this.proposals.count + this.index.ofType("Inbox").length),
      el("h2", {}, "Recent"),
      ...(recent.length ? recent.map((note) => item(`/notes/${note.id}`, note.title || "Untitled")) : [el("p", { class: "quiet" }, "No notes yet")]),
      types.length ? el("h2", {}, "Types") : null,
      ...types.map(([type, count]) => item(`/types/${encodeURIComponent(type)}`, `#${type}`, count)),
      el("h2", {}, "Views"),
      ...this.collections.items.map((view) => item(`/collections/${view.id}`, view.name)),
      item("/collections/new", "New view…"),
      el("h2", {}, "Put away"),
      item("/archive", "Archive", this.index.archived().length),
      item("/trash", "Trash", this.index.trashed().length),
    );
  }

  // Before the sign-out form goes: the notes this device kept, and the service worker's copy
  // of the app (which holds this session's CSRF token), are deleted; unsent edits stay.
  async _signOut(event) {
    const form = event.target;
    if (form.dataset.cleared) return;
    event.preventDefault();
    await this.store.forgetSeen().catch(() => {});
    if ("caches" in window) await caches.keys().then((names) => Promise.all(names.filter((name) => name.startsWith("fastpad-")).map((name) => caches.delete(name)))).catch(() => {});
    form.dataset.cleared = "yes";
    form.requestSubmit();
  }

  _onLinkClick(event) {
    const anchor = event.target.closest?.("a[data-link]");
    if (!anchor || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    this.go(anchor.getAttribute("href"));
  }

  go(path, { replace = false } = {}) {
    if (replace) history.replaceState(null, "", path);
    else if (path !== location.pathname + location.search) history.pushState(null, "", path);
    this.root.classList.remove("nav-open");
    return this.route();
  }

  async route() {
    const path = location.pathname;
    let target = { kind: "missing" };
    for (const [pattern, make] of ROUTES) {
      const match = pattern.exec(path);
      if (match) {
        target = make(match);
        break;
      }
    }
    this.page?.close?.();
    this.page = null;
    this.setStatus(null);
    this._renderSidebar();
    // A page that waits for the notes list first must not land over one chosen meanwhile.
    const routing = (this.routing = (this.routing ?? 0) + 1);
    const loadIndex = () => this.index.load().catch(() => {}).then(() => routing === this.routing);
    if (target.kind === "note") {
      this.page = new NotePage(this, target.id);
      await this.page.open();
    } else if (target.kind === "list") {
      if (await loadIndex()) this.page = listPage(this, target);
    } else if (target.kind === "search") {
      if (!(await loadIndex())) return; // the type filter lists the workspace's types
      this.searchInput.value = target.query;
      this.page = searchPage(this, target.query);
    } else if (target.kind === "import") {
      this.page = importPage(this);
    } else if (target.kind === "history") {
      if (await loadIndex()) this.page = historyPage(this, target.id); // the note's title from the notes list
    } else if (target.kind === "audit") {
      if (await loadIndex()) this.page = auditPage(this); // note titles for its note filter and rows
    } else if (target.kind === "members") {
      this.page = membersPage(this);
    } else if (target.kind === "account") {
      this.page = accountPage(this);
    } else if (target.kind === "new-workspace") {
      this.page = newWorkspacePage(this);
    } else if (target.kind === "types") {
      this.page = typesPage(this);
    } else if (target.kind === "collection") {
      this.page = collectionPage(this, target.id); // its rows carry their titles: no wait for the notes list
    } else if (target.kind === "new-collection") {
      this.page = newCollectionPage(this);
    } else if (target.kind === "folder") {
      this.page = folderPage(this, target.folder);
    } else {
      this.show("Not found", el("p", {}, "There is no page here. ", link("/", "Go home")));
    }
  }

  // Puts a page's content in the main area, with its name in the top bar.
  show(title, ...content) {
    document.title = title ? `${title} · Fastpad` : "Fastpad";
    this.heading.textContent = title;
    fill(this.main, ...content);
  }

  setStatus(status) {
    // Unchanged, the bar is left alone: redrawn, it would be a frame of its own.
    const shown = JSON.stringify(status);
    if (shown === this.statusShown) return;
    this.statusShown = shown;
    if (!status) {
      this.status.dataset.state = "idle";
      fill(this.status);
      return;
    }
    this.status.dataset.state = status.state;
    fill(this.status, el("span", { class: "dot", "aria-hidden": "true" }), el("span", { class: "label" }, status.label), status.hint ? el("span", { class: "hint" }, status.hint) : null);
    this.status.title = status.hint ?? "";
  }

  async newNote() {
    try {
      const note = await this.api.json("POST", "/v1/notes", { json: { title: "", idempotencyKey: idempotencyKey() } });
      this.index.put(note);
      await this.go(`/notes/${note.id}`);
      this.page?.focusTitle?.();
    } catch (error) {
      this.flash(explain(error, "The note could not be created"));
    }
  }

  // A short message for something the person just did that did not work.
  flash(message) {
    const toast = el("div", { class: "toast", role: "alert" }, message);
    document.body.appendChild(toast);
    setTimeout(() => toast.remove(), 6000);
  }
}
