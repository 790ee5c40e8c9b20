// Every note's summary (title, types, state), for the sidebar, the lists, the palette and the
// [[ picker. Read once through GET /v1/notes; afterwards only the notes the change feed
// names are read again (one GET each, gathered over a short wait), so typing in a large
// workspace never re-reads the whole list. Typing is the feed's commonest change, and the
// GET returns the whole note: a note typed in elsewhere is re-read at most every
// OPS_EVERY_MS, and the note open here never (its page keeps its summary current).
const PAGE = 200;
const GATHER_MS = 400;
const OPS_EVERY_MS = 10_000;

export class NotesIndex {
  static FIRST_PAGE = { limit: PAGE, include_archived: true, include_trashed: true };

  constructor(api, feed) {
    this.api = api;
    this.notes = new Map();
    this.listeners = new Set();
    this.loaded = null;
    this.stale = new Set();
    this.readAt = new Map(); // note id -> when it was last re-read for typing
    this.openNoteId = null;
    feed.listen((changes) => {
      for (const change of changes) {
        if (!change.note_id) continue;
        if (change.kind === "ops") {
          if (change.note_id === this.openNoteId) continue;
          if (Date.now() - (this.readAt.get(change.note_id) ?? 0) < OPS_EVERY_MS) continue;
          this.readAt.set(change.note_id, Date.now());
        }
        this.stale.add(change.note_id);
      }
      if (!this.stale.size) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this._refreshStale(), GATHER_MS);
    });
  }

  async _refreshStale() {
    const ids = [...this.stale];
    this.stale.clear();
    await Promise.all(
      ids.map((id) =>
        this.api.json("GET", `/v1/notes/${id}`).then(
          ({ blocks, properties, ...summary }) => this.notes.set(id, summary),
          (error) => error.status === 404 && this.notes.delete(id),
        ),
      ),
    );
    if (ids.length) this._changed();
  }

  // A note this tab changed itself (a rename, a trash), shown before the feed says so.
  put(summary) {
    this.notes.set(summary.id, { ...this.notes.get(summary.id), ...summary });
    this._changed();
  }

  _changed() {
    for (const listener of this.listeners) listener();
  }

  load() {
    this.loaded ??= this.reload();
    return this.loaded;
  }

  async reload() {
    const notes = new Map();
    let cursor = null;
    do {
      const page = await this.api.json("GET", "/v1/notes", { query: { ...NotesIndex.FIRST_PAGE, cursor } });
      for (const note of page.items) notes.set(note.id, note);
      cursor = page.next_cursor;
    } while (cursor);
    this.notes = notes;
    this._changed();
  }

  listen(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // Live notes, most recently changed first.
  recent() {
    return [...this.notes.values()]
      .filter((note) => !note.trashed && !note.archived)
      .sort((a, b) => (b.updated_at ?? b.created_at).localeCompare(a.updated_at ?? a.created_at));
  }

  ofType(type) {
    return this.recent().filter((note) => note.types.includes(type));
  }

  archived() {
    return [...this.notes.values()].filter((note) => note.archived && !note.trashed);
  }

  trashed() {
    return [...this.notes.values()].filter((note) => note.trashed);
  }

  types() {
    const counts = new Map();
    for (const note of this.recent()) for (const type of note.types) counts.set(type, (counts.get(type) ?? 0) + 1);
    return [...counts].sort((a, b) => a[0].localeCompare(b[0]));
  }

  // Notes whose title or a former title (alias) matches `query`: prefix matches of the title
  // first, then other title matches, then aliases. Each note once; `alias` names the alias matched.
  match(query, limit = 20) {
    const q = query.trim().toLowerCase();
    const live = this.recent();
    if (!q) return live.slice(0, limit);
    const scored = [];
    for (const note of live) {
      const title = (note.title || "").toLowerCase();
      const at = title.indexOf(q);
      if (at >= 0) {
        scored.push([at === 0 ? 0 : 1, title.length, note]);
        continue;
      }
      const alias = (note.aliases ?? []).find((name) => name.toLowerCase().includes(q));
      if (alias) scored.push([2, alias.length, { ...note, alias }]);
    }
    scored.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    return scored.slice(0, limit).map((entry) => entry[2]);
  }
}
