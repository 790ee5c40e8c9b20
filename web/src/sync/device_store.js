// What this device keeps (IndexedDB), per note: a log of updates and a snapshot.
//
// - The log holds each update typed here, written before anything is sent (`acked: false`),
//   and each update pulled from the server (`acked: true`). A sent update is marked acked the
//   moment the server acknowledges it, so it is never sent again.
// - Now and then the log is folded into a snapshot of the note (`compact`), which keeps the
//   log short without writing a megabyte per keystroke on a large note.
//
// Snapshot + log is the note as this device last saw it, so a note opened before reopens with
// no connection; the unacked entries are what still has to reach the server.
//
// A browser that refuses storage (private window, blocked site data) gets a store in memory
// that says so: `persistent` is false and the app warns before a reload would lose work.

const DATABASE = "fastpad";
const VERSION = 1;

export async function openDeviceStore() {
  try {
    const db = await new Promise((resolve, reject) => {
      const request = indexedDB.open(DATABASE, VERSION);
      request.onupgradeneeded = () => {
        const database = request.result;
        database.createObjectStore("pending", { keyPath: ["noteId", "seq"] });
        database.createObjectStore("notes", { keyPath: "noteId" });
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
      request.onblocked = () => reject(new Error("blocked"));
    });
    // A probe write: some browsers open the database and then refuse every write.
    await run(db, "notes", "readwrite", (store) => store.put({ noteId: "probe" }));
    await run(db, "notes", "readwrite", (store) => store.delete("probe"));
    return new IndexedDbStore(db);
  } catch {
    return new MemoryStore();
  }
}

function run(db, name, mode, work, { commit = false } = {}) {
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(name, mode);
    const request = work(transaction.objectStore(name));
    if (commit) transaction.commit?.();
    transaction.oncomplete = () => resolve(request?.result);
    transaction.onerror = () => reject(transaction.error);
    transaction.onabort = () => reject(transaction.error ?? new Error("aborted"));
  });
}

function noteRange(noteId) {
  return IDBKeyRange.bound([noteId, 0], [noteId, Number.MAX_SAFE_INTEGER]);
}

class IndexedDbStore {
  persistent = true;

  constructor(db) {
    this.db = db;
  }

  // Committed as soon as it is written, not when the task that issued it ends: an update logged
  // as the page goes away still lands.
  add(noteId, seq, bytes, { acked = false } = {}) {
    return run(this.db, "pending", "readwrite", (store) => store.put({ noteId, seq, bytes, acked, at: Date.now() }), { commit: true });
  }

  // Every logged update of the note, oldest first.
  log(noteId) {
    return run(this.db, "pending", "readonly", (store) => store.getAll(noteRange(noteId)));
  }

  // The server holds these updates now. By key, not by range, so another tab's unsent
  // updates to the same note stay as they are.
  acknowledge(noteId, seqs) {
    return run(this.db, "pending", "readwrite", (store) => {
      for (const seq of seqs) {
        const request = store.get([noteId, seq]);
        request.onsuccess = () => request.result && store.put({ ...request.result, acked: true });
      }
    });
  }

  // Folds the acked log entries up to `throughSeq` into `record` (the note's snapshot), in one
  // transaction: a crash leaves either the old pair or the new one.
  compact(record, throughSeq) {
    return dropAcked(this.db, (notes) => notes.put(record), IDBKeyRange.bound([record.noteId, 0], [record.noteId, throughSeq]));
  }

  loadNote(noteId) {
    return run(this.db, "notes", "readonly", (store) => store.get(noteId));
  }

  // Signing out: every copy of a note this device kept goes; what was typed here and never
  // reached the server stays, to be sent after the next sign-in.
  forgetSeen() {
    return dropAcked(this.db, (notes) => notes.clear(), undefined);
  }
}

// In one transaction: `changeNotes(notesStore)`, then delete the acked log entries in `range`
// (undefined: all of them). Unacked entries — work not yet on the server — are never touched.
function dropAcked(db, changeNotes, range) {
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(["notes", "pending"], "readwrite");
    changeNotes(transaction.objectStore("notes"));
    const request = transaction.objectStore("pending").openCursor(range);
    request.onsuccess = () => {
      const cursor = request.result;
      if (!cursor) return;
      if (cursor.value.acked) cursor.delete();
      cursor.continue();
    };
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error);
    transaction.onabort = () => reject(transaction.error ?? new Error("aborted"));
  });
}

class MemoryStore {
  persistent = false;
  entries = new Map();
  notes = new Map();

  async add(noteId, seq, bytes, { acked = false } = {}) {
    this.entries.set(`${noteId}:${seq}`, { noteId, seq, bytes, acked });
  }

  async log(noteId) {
    return [...this.entries.values()].filter((entry) => entry.noteId === noteId).sort((a, b) => a.seq - b.seq);
  }

  async acknowledge(noteId, seqs) {
    for (const seq of seqs) {
      const entry = this.entries.get(`${noteId}:${seq}`);
      if (entry) entry.acked = true;
    }
  }

  async compact(record, throughSeq) {
    this.notes.set(record.noteId, record);
    for (const [key, entry] of this.entries) {
      if (entry.noteId === record.noteId && entry.seq <= throughSeq && entry.acked) this.entries.delete(key);
    }
  }

  async loadNote(noteId) {
    return this.notes.get(noteId);
  }

  async forgetSeen() {
    this.notes.clear();
    for (const [key, entry] of this.entries) if (entry.acked) this.entries.delete(key);
  }
}
