// The workspace's change feed, followed by one long poll for the whole app: the sidebar and
// every open note listen to it, so a tab holds one waiting request, not one per view.
const LONG_POLL_MS = 25_000;
const MAX_BACKOFF_MS = 30_000;

export class ChangeFeed {
  constructor(api) {
    this.api = api;
    this.listeners = new Set();
    this.cursor = null;
    this.abort = new AbortController();
  }

  // The feed's end, read before a view loads what it shows, so nothing committed in between
  // is missed.
  async ready() {
    if (!this.cursor) {
      const page = await this.api.json("GET", "/v1/changes", { query: { start: "latest" } });
      this.cursor ??= page.next_cursor;
    }
    if (!this.started) {
      this.started = true;
      this._follow();
    }
  }

  // listener(changes): every change of a page, oldest first. Returns the unsubscribe.
  listen(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async _follow() {
    let failures = 0;
    while (!this.abort.signal.aborted) {
      try {
        if (!this.cursor) await this.ready();
        const page = await this.api.json("GET", "/v1/changes", {
          query: { cursor: this.cursor, wait_ms: LONG_POLL_MS, limit: 200 },
          signal: this.abort.signal,
        });
        this.cursor = page.next_cursor;
        failures = 0;
        if (page.items.length) for (const listener of this.listeners) listener(page.items);
      } catch (error) {
        if (error?.name === "AbortError") return;
        failures += 1;
        await pause(error?.retryAfterMs ?? Math.min(MAX_BACKOFF_MS, 500 * 2 ** failures));
      }
    }
  }

  stop() {
    this.abort.abort();
  }
}

// Waits `ms`, or until the connection comes back.
function pause(ms) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      window.removeEventListener("online", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    window.addEventListener("online", done);
  });
}
