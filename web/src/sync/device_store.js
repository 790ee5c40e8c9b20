// What this device keeps (IndexedDB): per note, the updates typed here that the server has
// not acknowledged yet (the queue), and the last server state seen (so a note opened before
// can be reopened with no connection). The queue is written before anything is sent and
// emptied the moment the server acknowledges.
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

function run(db, name, mode, work) {
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(name, mode);
    const request = work(transaction.objectStore(name));
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

  add(noteId, seq, bytes) {
    return run(this.db, "pending", "readwrite", (store) => store.put({ noteId, seq, bytes, at: Date.now() }));
  }

  pending(noteId) {
    return run(this.db, "pending", "readonly", (store) => store.getAll(noteRange(noteId)));
  }

  // Deletes these queued updates: the server holds them now. By key, not by range, so
  // another tab's unsent updates to the same note stay queued.
  acknowledge(noteId, seqs) {
    return run(this.db, "pending", "readwrite", (store) => {
      for (const seq of seqs) store.delete([noteId, seq]);
    });
  }

  saveNote(record) {
    return run(this.db, "notes", "readwrite", (store) => store.put(record));
  }

  loadNote(noteId) {
    return run(this.db, "notes", "readonly", (store) => store.get(noteId));
  }

  forgetNote(noteId) {
    return run(this.db, "notes", "readwrite", (store) => store.delete(noteId));
  }
}

class MemoryStore {
  persistent = false;
  queued = new Map();
  notes = new Map();

  async add(noteId, seq, bytes) {
    this.queued.set(`${noteId}:${seq}`, { noteId, seq, bytes });
  }

  async pending(noteId) {
    return [...this.queued.values()].filter((item) => item.noteId === noteId).sort((a, b) => a.seq - b.seq);
  }

  async acknowledge(noteId, seqs) {
    for (const seq of seqs) this.queued.delete(`${noteId}:${seq}`);
  }

  async saveNote(record) {
    this.notes.set(record.noteId, record);
  }

  async loadNote(noteId) {
    return this.notes.get(noteId);
  }

  async forgetNote(noteId) {
    this.notes.delete(noteId);
  }
}
