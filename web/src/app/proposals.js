// What agents proposed and waits for this person: the turns GET /v1/turns?status=waiting lists,
// re-read when the change feed says a proposal was made or decided.
const GATHER_MS = 150;

export class WaitingProposals {
  constructor(api, feed) {
    this.api = api;
    this.items = [];
    this.listeners = new Set();
    this.loaded = null;
    feed.listen((changes) => {
      if (!changes.some((change) => change.kind.startsWith("proposal"))) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.load(true), GATHER_MS);
    });
  }

  load(again = false) {
    if (this.loaded && !again) return this.loaded;
    this.loaded = this.api.json("GET", "/v1/turns", { query: { status: "waiting", limit: 100 } }).then((page) => {
      this.items = page.items;
      for (const listener of this.listeners) listener();
    });
    return this.loaded;
  }

  get count() {
    return this.items.length;
  }

  listen(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
