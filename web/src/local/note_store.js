// The notes written before an account (spec, Getting started › Your first note): each a Loro
// document that lives in this browser only, in IndexedDB, until a sign-in adopts it into a
// workspace (adopt.js). Nothing here touches the network.
//
// - A note is a record (its id, when it was begun, and a snapshot once its log has been folded),
//   a head (its title and when it was last written: what the list shows) and a log of the Loro
//   updates typed into it. Every update is appended in a transaction of its own, committed at
//   once without reading anything first, so one typed as the tab closes still lands; the page
//   says the note is saved only once no append it issued is still being written (`writing`).
// - Opening a note folds a long log into its snapshot, in one transaction: a crash leaves the
//   old pair or the new one.
// - Tabs of this browser share what they write through a BroadcastChannel: a tab imports another's
//   updates as they land, and learns when a note has been adopted (and so left this browser).
//
// A browser that refuses storage (a private window, blocked site data) gets a store in memory
// with `persistent` false, found out by a probe before anything is typed, so the page says so first.
import { LoroDoc } from "loro-crdt/web";

const DATABASE = "fastpad-local-notes";
const VERSION = 1;
const CHANNEL = "fastpad-local-notes";
const FOLD_AFTER = 64; // log entries a note opens with before they are folded into its snapshot

export async function openLocalNotes() {
  try {
    const db = await new Promise((resolve, reject) => {
      const request = indexedDB.open(DATABASE, VERSION);
      request.onupgradeneeded = () => {
        request.result.createObjectStore("notes", { keyPath: "noteId" });
        request.result.createObjectStore("heads", { keyPath: "noteId" });
        request.result.createObjectStore("updates", { autoIncrement: true }).createIndex("noteId", "noteId");
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
      request.onblocked = () => reject(new Error("blocked"));
    });
    // A probe write: some browsers open a database and then refuse every write to it.
    await transact(db, ["notes"], (stores) => stores.notes.put({ noteId: "probe" }), { commit: true });
    await transact(db, ["notes"], (stores) => stores.notes.delete("probe"), { commit: true });
    return new IndexedDbNotes(db);
  } catch {
    return new MemoryNotes();
  }
}

// Runs `work(stores)` in one transaction over `names`; resolves once it has committed. `commit`:
// `work` issues every request at once (none waits on another), so the transaction is committed
// then, not when the task that issued it ends — it still lands if the page goes away meanwhile.
function transact(db, names, work, { commit = false } = {}) {
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(names, "readwrite");
    const stores = Object.fromEntries(names.map((name) => [name, transaction.objectStore(name)]));
    work(stores);
    if (commit) transaction.commit?.();
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error);
    transaction.onabort = () => reject(transaction.error ?? new Error("aborted"));
  });
}

// What both stores share: the channel between tabs, and what is still being written.
class LocalNotes {
  constructor() {
    this.pending = new Set(); // appends issued and not yet committed
    this.listeners = new Set();
    this.channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(CHANNEL) : null;
    if (this.channel) this.channel.onmessage = ({ data }) => this.listeners.forEach((listener) => listener(data));
  }

  // `listener({kind: "update", noteId, bytes})` for another tab's typing, `({kind: "adopted", noteId})`.
  listen(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // Appends one Loro update to the note's log; `title` is the note's as it now stands.
  append(noteId, bytes, title) {
    const written = this._append(noteId, bytes, title, Date.now());
    this.pending.add(written);
    const done = () => this.pending.delete(written);
    written.then(done, done);
    this.channel?.postMessage({ kind: "update", noteId, bytes });
    return written;
  }

  // Whether an append issued is still being written.
  get writing() {
    return this.pending.size > 0;
  }

  // The note left this browser for a workspace: gone here, and from every other tab.
  async remove(noteId) {
    await this._remove(noteId);
    this.channel?.postMessage({ kind: "adopted", noteId });
  }

  // The note's Loro document: its snapshot and its log, in order.
  async document(noteId) {
    const doc = new LoroDoc();
    const parts = await this._parts(noteId);
    if (parts.length) doc.importBatch(parts);
    return doc;
  }
}

class IndexedDbNotes extends LocalNotes {
  persistent = true;

  constructor(db) {
    super();
    this.db = db;
  }

  // Every note kept here ({noteId, title, updatedAt}), the one written to last first.
  list() {
    return new Promise((resolve, reject) => {
      const request = this.db.transaction("heads").objectStore("heads").getAll();
      request.onsuccess = () => resolve(request.result.sort((a, b) => b.updatedAt - a.updatedAt));
      request.onerror = () => reject(request.error);
    });
  }

  create(noteId) {
    const now = Date.now();
    return transact(this.db, ["notes", "heads"], (stores) => {
      stores.notes.add({ noteId, snapshot: null, createdAt: now });
      stores.heads.add({ noteId, title: "", updatedAt: now });
    }, { commit: true });
  }

  _append(noteId, bytes, title, at) {
    return transact(this.db, ["heads", "updates"], (stores) => {
      stores.updates.add({ noteId, bytes });
      stores.heads.put({ noteId, title, updatedAt: at });
    }, { commit: true });
  }

  // Snapshot + log; a log longer than FOLD_AFTER is folded into the snapshot in the same
  // transaction that read it (Loro imports and exports synchronously, so the transaction stays open).
  _parts(noteId) {
    const parts = [];
    return transact(this.db, ["notes", "updates"], (stores) => {
      const record = stores.notes.get(noteId);
      record.onsuccess = () => {
        const log = stores.updates.index("noteId").openCursor(IDBKeyRange.only(noteId));
        const keys = [];
        if (record.result?.snapshot) parts.push(record.result.snapshot);
        log.onsuccess = () => {
          const cursor = log.result;
          if (cursor) {
            parts.push(cursor.value.bytes);
            keys.push(cursor.primaryKey);
            return cursor.continue();
          }
          if (!record.result || keys.length <= FOLD_AFTER) return;
          const doc = new LoroDoc();
          doc.importBatch(parts);
          stores.notes.put({ ...record.result, snapshot: doc.export({ mode: "snapshot" }) });
          for (const key of keys) stores.updates.delete(key);
        };
      };
    }).then(() => parts);
  }

  _remove(noteId) {
    return transact(this.db, ["notes", "heads", "updates"], (stores) => {
      stores.notes.delete(noteId);
      stores.heads.delete(noteId);
      const log = stores.updates.index("noteId").openKeyCursor(IDBKeyRange.only(noteId));
      log.onsuccess = () => {
        if (!log.result) return;
        stores.updates.delete(log.result.primaryKey);
        log.result.continue();
      };
    });
  }
}

// This tab's memory: what a browser that keeps nothing gets. Lost with the tab, and it says so.
class MemoryNotes extends LocalNotes {
  persistent = false;
  notes = new Map(); // noteId -> head
  logs = new Map(); // noteId -> [bytes]

  async list() {
    return [...this.notes.values()].sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async create(noteId) {
    this.notes.set(noteId, { noteId, title: "", updatedAt: Date.now() });
  }

  async _append(noteId, bytes, title, at) {
    this.notes.set(noteId, { noteId, title, updatedAt: at });
    this.logs.set(noteId, [...(this.logs.get(noteId) ?? []), bytes]);
  }

  async _parts(noteId) {
    return this.logs.get(noteId) ?? [];
  }

  async _remove(noteId) {
    this.notes.delete(noteId);
    this.logs.delete(noteId);
  }
}
