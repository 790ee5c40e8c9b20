// Sync for one open note, in the order the spec gives a keystroke (Sync and offline):
//
//   1. the screen changes (the editor, before any of this runs);
//   2. the update is queued on this device (DeviceStore) before anything is sent;
//   3. it is sent as soon as the network allows, with the frontier it was made on.
//
// Step 2 waits for the frame that shows the keystroke: a local update is held in memory until
// that frame has been produced, then logged and sent. Whatever sends, stops this sync or hides
// the page logs what is held first, so nothing is ever sent before it is on the device.
//
// What is sent is every op the server lacks — exported from the last frontier the server
// acknowledged — so keystrokes typed while a save is in flight ride in the next one, and a
// resend after a lost answer carries the same bytes under the same idempotency key. A
// `409 stale-frontier` is not an error for a person: fetch what the server has, import it,
// send again. The server drops ops it already holds, so a replay lands exactly once.
//
// Other people's edits arrive through the app's change feed (feed.js). Failures are named
// (the top bar shows them) and retried with a growing delay that restarts at once when the
// tab regains focus or the connection returns — except a delay the server asked for.
//
// Sync knows the model and the network, never the DOM.
import { frontierFromString } from "../model/frontier.js";
import { NoteModel } from "../model/note.js";
import { ApiError, sha256Hex, toBase64 } from "./api.js";

const MAX_BACKOFF_MS = 30_000;
const COMPACT_AFTER = 200; // acknowledged log entries between two snapshots
// A save the server refuses as too large is resent in pieces of this many atoms, under the
// 100,000 the server takes from one update (API › Writing a note).
const PIECE_ATOMS = 40_000;
const MAX_STALE_ROUNDS = 8;
// With a store that keeps edits, "Saving…" is said once a save has taken this long (see _saving).
const SAVING_SAID_AFTER_MS = 250;

export const STATES = {
  loading: "Opening…",
  saved: "Saved",
  saving: "Saving…",
  offline: "No connection",
  "session-ended": "Not sent", // the app's top bar says why, with the link to sign in again
  deleted: "Note deleted",
  trashed: "Note in the trash",
  fault: "Server fault",
  refused: "Change refused",
  "rate-limited": "Waiting for the server",
};

export class NoteSync {
  // Opens a note: from the server, or — with no connection — from what this device kept the
  // last time it was open. Edits this device logged and never got acknowledged are replayed.
  static async open({ api, store, feed, noteId, onStatus = () => {}, onRemote = () => {} }) {
    // The feed's end is asked for first, so nothing committed while the note loads is missed;
    // the two requests run side by side, and one pull once both are in closes any gap.
    const following = feed.ready().catch(() => {}); // offline: the feed starts once the connection returns
    const [loaded, log] = await Promise.all([NoteSync._load(api, store, noteId), store.log(noteId)]);
    const { model, serverFrontier, fromDevice } = loaded;
    const sync = new NoteSync({ api, store, feed, noteId, model, serverFrontier, onStatus, onRemote });
    for (const entry of log) {
      // Online, what the server acknowledged is in what it just sent; offline, all of it counts.
      if (entry.acked && !fromDevice) continue;
      model.importUpdates(entry.bytes);
      if (!entry.acked) sync.unsent.push(entry.seq);
    }
    sync.seq = Math.max(sync.seq, ...log.map((entry) => entry.seq));
    sync._start();
    if (fromDevice) sync._failed(new ApiError({ detail: "The server could not be reached." }));
    else {
      sync._compactSoon();
      following.then(() => {
        sync.needPull = true;
        sync.kick();
      });
      sync.kick();
    }
    return sync;
  }

  static async _load(api, store, noteId) {
    try {
      // A snapshot, not every update replayed: on a 2,000-block note it opens in a fraction of the time.
      const response = await api.request("GET", `/v1/notes/${noteId}/snapshot`, { accept: "application/octet-stream" });
      const model = NoteModel.fromExport(new Uint8Array(await response.arrayBuffer()));
      return { model, serverFrontier: response.headers.get("x-fastpad-frontier"), fromDevice: false };
    } catch (error) {
      const kept = error instanceof ApiError && error.offline ? await store.loadNote(noteId) : null;
      if (!kept) throw error;
      return { model: NoteModel.fromExport(kept.snapshot), serverFrontier: kept.serverFrontier, fromDevice: true };
    }
  }

  constructor({ api, store, feed, noteId, model, serverFrontier, onStatus, onRemote }) {
    Object.assign(this, { api, store, feed, noteId, model, serverFrontier, onStatus, onRemote });
    this.unsent = []; // queue keys (seq) of updates the server has not acknowledged
    this.fresh = []; // local updates made since the last frame, not yet in the device log
    this.written = Promise.resolve(); // settles once every device write issued so far has
    this.state = "loading";
    this.detail = "";
    this.running = false;
    this.needPull = false;
    this.attempt = 0;
    this.timer = null;
    this.serverAskedUntil = 0;
    this.stopped = false;
    this.halted = false; // refused or deleted: retrying cannot help until something changes
    this.seq = Date.now() * 1000;
    this.abort = new AbortController();
    this.ackedSinceCompaction = 0;
  }

  get persistent() {
    return this.store.persistent;
  }

  get hasUnsent() {
    const server = frontierFromString(this.serverFrontier);
    return this.model.doc.cmpFrontiers(this.model.doc.oplogFrontiers(), server) !== 0;
  }

  _start() {
    this.unsubscribe = this.model.doc.subscribeLocalUpdates((bytes) => {
      this._saving();
      if (this.fresh.push(bytes) === 1) afterFrame(() => this._logAndSend());
    });
    this.wake = () => {
      if (document.visibilityState === "hidden") {
        this._logAndSend(); // a hidden page draws no frame to wait for
        if (this.ackedSinceCompaction) this._compactSoon();
      }
      this.retryNow();
    };
    this.leave = () => this._log(); // the page going away: sent by the next one to open the note
    window.addEventListener("online", this.wake);
    window.addEventListener("focus", this.wake);
    document.addEventListener("visibilitychange", this.wake);
    window.addEventListener("pagehide", this.leave);
    this.unlisten = this.feed.listen((changes) => {
      const mine = changes.filter((change) => change.note_id === this.noteId);
      if (mine.length) this._noteChanged(mine);
    });
  }

  stop() {
    this._log(); // sent the next time the note opens
    this.stopped = true;
    this.abort.abort();
    clearTimeout(this.timer);
    clearTimeout(this.savingSoon);
    this.unsubscribe?.();
    this.unlisten?.();
    window.removeEventListener("online", this.wake);
    window.removeEventListener("focus", this.wake);
    document.removeEventListener("visibilitychange", this.wake);
    window.removeEventListener("pagehide", this.leave);
  }

  // Writes the local updates held since the last frame to the device log; true if there were any.
  _log() {
    if (!this.fresh.length) return false;
    for (const bytes of this.fresh.splice(0)) {
      const seq = ++this.seq;
      this.unsent.push(seq);
      this._write(this.store.add(this.noteId, seq, bytes));
    }
    return true;
  }

  _logAndSend() {
    if (this._log()) this.kick();
  }

  // A device write is issued at once — IndexedDB applies writes in the order they were issued,
  // and one issued as the page goes away still lands — and `written` waits for all of them.
  _write(stored) {
    this.written = Promise.all([this.written, stored.catch(() => {})]);
  }

  // Restarts a waiting retry at once — unless the server itself asked for the wait.
  retryNow() {
    if (this.stopped || document.visibilityState === "hidden") return;
    if (Date.now() < this.serverAskedUntil || !this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.attempt = 0;
    this.halted = false;
    this.kick();
  }

  // After the person dealt with what halted sync (restored the note, signed in again).
  resume() {
    this.halted = false;
    clearTimeout(this.timer);
    this.timer = null;
    this.attempt = 0;
    this.kick();
  }

  kick() {
    if (!this.running && !this.timer && !this.stopped && !this.halted) this._run();
  }

  async _run() {
    this.running = true;
    let staleRounds = 0;
    try {
      while (!this.stopped && !this.halted) {
        if (this.needPull) {
          this.needPull = false;
          await this._pull();
        } else if (this.hasUnsent) {
          if (await this._send()) staleRounds = 0;
          else if (++staleRounds > MAX_STALE_ROUNDS) throw new ApiError({ status: 409, slug: "stale-frontier", detail: "The note keeps changing under this save." });
        } else break;
      }
      // Halted meanwhile (the note went to the trash while this ran): that stays what the bar says.
      if (this.halted) return;
      // The server holds everything now, so whatever the log still has as unsent landed too (a
      // save answered after the page that sent it had gone, then resent from here).
      if (!this.hasUnsent) this._acknowledge([...this.unsent]);
      this.attempt = 0;
      this.detail = "";
      this._setState("saved");
    } catch (error) {
      if (error?.name !== "AbortError") this._failed(error);
    } finally {
      this.running = false;
    }
  }

  // Sends what the server lacks. True when it landed; false when the note had moved (the
  // next round pulls first).
  async _send() {
    this._log();
    await this.written;
    const keys = [...this.unsent];
    const doc = this.model.doc;
    const bytes = doc.export({ mode: "update", from: doc.frontiersToVV(frontierFromString(this.serverFrontier)) });
    this._saving();
    try {
      this.serverFrontier = (await this._post(bytes)).frontier;
    } catch (error) {
      if (error.slug === "stale-frontier") {
        this.needPull = true;
        return false;
      }
      if (!tooLarge(error)) throw error;
      await this._sendInPieces();
    }
    this._acknowledge(keys);
    return true;
  }

  // The server refused one update as too large: the same ops, as several smaller updates,
  // each from the version the server last acknowledged.
  async _sendInPieces() {
    const doc = this.model.doc;
    const local = doc.oplogVersion().toJSON();
    const server = doc.frontiersToVV(frontierFromString(this.serverFrontier)).toJSON();
    for (const [peer, end] of local) {
      for (let start = server.get(peer) ?? 0; start < end; start += PIECE_ATOMS) {
        const len = Math.min(PIECE_ATOMS, end - start);
        const bytes = doc.export({ mode: "updates-in-range", spans: [{ id: { peer, counter: start }, len }] });
        this.serverFrontier = (await this._post(bytes)).frontier;
      }
    }
  }

  // The key covers the whole request, this page's peer id included: a page that resends what an
  // earlier page sent (its answer lost as that page went away) makes a new request, not a replay.
  async _post(bytes) {
    const peerId = this.model.doc.peerIdStr;
    const key = await sha256Hex(new TextEncoder().encode(`${this.noteId}:${peerId}:${this.serverFrontier}:${toBase64(bytes)}`));
    return this.api.json("POST", `/v1/notes/${this.noteId}/ops`, {
      json: { ops: toBase64(bytes), peerId, expectedFrontier: this.serverFrontier, idempotencyKey: `web-${key}` },
      signal: this.abort.signal,
    });
  }

  // The server holds these now: they are no longer unsent at once, and marked so in the
  // device log after the writes issued before (a crash in between only means a harmless resend).
  _acknowledge(keys) {
    const done = new Set(keys);
    this.unsent = this.unsent.filter((seq) => !done.has(seq));
    if (!keys.length) return;
    this._write(this.store.acknowledge(this.noteId, keys));
    for (const _ of keys) this._logged(true);
  }

  async _pull() {
    const response = await this.api.request("GET", `/v1/notes/${this.noteId}/updates`, {
      query: { since: this.serverFrontier },
      accept: "application/octet-stream",
      signal: this.abort.signal,
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    this.serverFrontier = response.headers.get("x-fastpad-frontier");
    // The feed also reports this tab's own saves: those import nothing, and cost nothing more.
    const changes = this.model.importUpdates(bytes);
    if (changes.any) {
      const seq = ++this.seq;
      this._write(this.store.add(this.noteId, seq, bytes, { acked: true }));
      this._logged(true);
      this.onRemote(changes);
    }
  }

  // Folds the log into a fresh snapshot when the browser is idle: after opening, after every
  // COMPACT_AFTER acknowledged entries, and when the tab is hidden. A snapshot of a large note
  // is a megabyte, which is why it is not written per keystroke.
  _compactSoon() {
    if (this.compacting) return;
    this.compacting = true;
    const idle = window.requestIdleCallback ?? ((callback) => setTimeout(callback, 200));
    idle(() => {
      this.compacting = false;
      this.ackedSinceCompaction = 0;
      const record = {
        noteId: this.noteId,
        snapshot: this.model.doc.export({ mode: "snapshot" }),
        serverFrontier: this.serverFrontier,
        title: this.model.title,
        at: Date.now(),
      };
      this.store.compact(record, this.seq).catch(() => {});
    });
  }

  _logged(acked) {
    if (acked && ++this.ackedSinceCompaction >= COMPACT_AFTER) this._compactSoon();
  }

  _noteChanged(changes) {
    const last = changes[changes.length - 1].kind;
    if (last === "trash" || last === "purge") {
      this.halted = true;
      this._setState(last === "trash" ? "trashed" : "deleted");
      return;
    }
    if (last === "restore" && this.halted) this.halted = false;
    this.needPull = true;
    this.kick();
  }

  _failed(error) {
    const { state, halt } = classify(error);
    this.detail = error?.message ?? "";
    this.halted = halt;
    this._setState(state);
    if (halt) return;
    const delay = error?.retryAfterMs ?? backoff(++this.attempt);
    this.serverAskedUntil = error?.retryAfterMs ? Date.now() + delay : 0;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.kick();
    }, delay);
  }

  // A failure stays named while more is typed and while retries run: the bar says what the
  // next attempt is up against, not "Saving…" over and over. Once the device keeps the edit, a
  // save that lands within SAVING_SAID_AFTER_MS leaves the bar as it was: flipped to "Saving…"
  // and back at every keystroke, it is a frame of its own each time, which the next keystroke
  // often has to wait behind. Without such a store (a reload would lose the edit) it is said at once.
  _saving() {
    if (this.state !== "saved" && this.state !== "loading") return;
    if (!this.persistent) return this._setState("saving");
    this.savingSoon ??= setTimeout(() => {
      this.savingSoon = null;
      if ((this.state === "saved" || this.state === "loading") && (this.running || this.hasUnsent)) this._setState("saving");
    }, SAVING_SAID_AFTER_MS);
  }

  _setState(state) {
    clearTimeout(this.savingSoon);
    this.savingSoon = null;
    this.state = state;
    this.onStatus({ state, label: STATES[state], detail: this.detail, unsent: this.unsent.length > 0 || this.hasUnsent, persistent: this.persistent });
  }
}

// Runs `work` in a task after the next frame: the one that shows what was just typed.
function afterFrame(work) {
  if (document.visibilityState === "hidden") setTimeout(work, 0);
  else requestAnimationFrame(() => setTimeout(work, 0));
}

function tooLarge(error) {
  const fields = error?.problem?.field_errors ?? [];
  return error?.status === 422 && fields.some((item) => item.field === "ops" && ["max_bytes", "max_atoms"].includes(item.code));
}

function classify(error) {
  if (!(error instanceof ApiError)) {
    console.error(error); // a fault of this page's own: said as one, and retried
    return { state: "fault", halt: false };
  }
  if (error.offline) return { state: "offline", halt: false };
  if (error.status === 401) return { state: "session-ended", halt: false };
  if (error.status === 404) return { state: "deleted", halt: true };
  if (error.status === 409 && error.problem?.reason === "trashed") return { state: "trashed", halt: true };
  if (error.status === 429) return { state: "rate-limited", halt: false };
  if (error.status === 403 || error.status === 422) return { state: "refused", halt: true };
  return { state: "fault", halt: false };
}

function backoff(attempt) {
  const base = Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.max(0, attempt - 1));
  return base / 2 + Math.random() * (base / 2);
}
