// Who else is in this note, and where their carets are: each tab keeps its own state (its caret
// and selection as Loro cursors, see model/carets.js) in a Loro EphemeralStore under one key, the
// tab's id, and posts that key's update to the server (POST /v1/notes/{id}/presence) when it
// changes and as a heartbeat; it follows everyone's with a long poll (GET …/presence?seen=…) and
// applies what arrives to the same store. The server keeps it in memory only and drops a tab
// ttl_ms after its last post, or at once when it leaves (a closing tab says so on pagehide).
import { EphemeralStore } from "loro-crdt/web";
import { toBase64 } from "./api.js";
import { newId } from "../model/ulid.js";

// At most five posts a second while the caret moves (the first goes at once): a person's requests
// share one budget (1,200 a minute), and their edits must never wait for their caret.
const SEND_GAP_MS = 200;
const WAIT_MS = 25_000;
const RETRY_MS = 2_000; // offline, or the server restarting: try again after this

export class PresenceChannel {
  // onChange(peers): peers are [{tab, person: {id, name}, state}] of every other live tab.
  constructor({ api, noteId, onChange }) {
    Object.assign(this, { api, noteId, onChange });
    this.path = `/v1/notes/${noteId}/presence`;
    this.tab = newId();
    // Tabs leave when the server says they left; the store's own expiry is only a backstop.
    this.store = new EphemeralStore(2 * 60_000);
    this.people = new Map(); // tab → {id, name}, as the server names the person who posted it
    this.state = { anchor: null, focus: null };
    this.ttlMs = 25_000; // until the server says
    this.stopped = false;
    this.aborter = new AbortController();
    this.unsubscribe = this.store.subscribe(() => this.onChange(this.peers()));
    this._pagehide = () => this.stop();
    window.addEventListener("pagehide", this._pagehide);
    // A hidden tab's timers may be slowed to one a minute, so it can drop out; shown again, it is back at once.
    this._visible = () => document.visibilityState === "visible" && this.publish(this.state);
    document.addEventListener("visibilitychange", this._visible);
    this.publish(this.state);
    this._heartbeat();
    this._follow();
  }

  peers() {
    const states = this.store.getAllStates();
    return [...this.people].filter(([tab]) => tab in states).map(([tab, person]) => ({ tab, person, state: states[tab] }));
  }

  // This tab's caret and selection: {anchor, focus}, each {cursor: Uint8Array, width} or null.
  publish(state) {
    this.state = state;
    this.store.set(this.tab, state);
    if (this.sendTimer) return void (this.dirty = true);
    this._send();
    this.sendTimer = setTimeout(() => {
      this.sendTimer = null;
      if (this.dirty) this.publish(this.state);
    }, SEND_GAP_MS);
    this.dirty = false;
  }

  // Leaves the note for everyone now; `keepalive` lets the request outlive a closing tab.
  stop() {
    if (this.stopped) return;
    this.stopped = true;
    this.aborter.abort();
    clearTimeout(this.sendTimer);
    clearInterval(this.heartbeatTimer);
    window.removeEventListener("pagehide", this._pagehide);
    document.removeEventListener("visibilitychange", this._visible);
    this.unsubscribe();
    this.api.request("POST", this.path, { json: { tab: this.tab, leave: true }, keepalive: true }).catch(() => {});
    this.store.destroy();
  }

  async _send() {
    if (this.stopped) return;
    try {
      await this.api.request("POST", this.path, { json: { tab: this.tab, state: toBase64(this.store.encode(this.tab)) } });
    } catch {
      // offline or refused: the heartbeat sends the state again
    }
  }

  // Posts the state again well inside the server's ttl, so a tab that is only reading stays shown.
  _heartbeat() {
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => this.publish(this.state), this.ttlMs / 3);
  }

  async _follow() {
    let seen = null;
    while (!this.stopped) {
      try {
        const answer = await this.api.json("GET", this.path, { query: { seen, wait_ms: seen === null ? 0 : WAIT_MS }, signal: this.aborter.signal });
        seen = answer.generation;
        if (answer.ttl_ms !== this.ttlMs) {
          this.ttlMs = answer.ttl_ms;
          this._heartbeat();
        }
        this._receive(answer.tabs);
      } catch (error) {
        if (this.stopped) return;
        seen = null; // the next answer is the whole room again, at once
        await new Promise((resolve) => setTimeout(resolve, error.retryAfterMs ?? RETRY_MS));
      }
    }
  }

  _receive(tabs) {
    const live = new Set();
    for (const { tab, person, state } of tabs) {
      if (tab === this.tab) continue;
      live.add(tab);
      this.people.set(tab, person);
      this.store.apply(Uint8Array.from(atob(state), (char) => char.charCodeAt(0)));
    }
    for (const tab of this.store.keys()) {
      if (tab !== this.tab && !live.has(tab)) {
        this.people.delete(tab);
        this.store.delete(tab);
      }
    }
    this.onChange(this.peers()); // a tab whose state had not changed still changes who is shown
  }
}
