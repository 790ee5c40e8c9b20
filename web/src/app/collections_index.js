// The workspace's collections (saved views) for the sidebar: GET /v1/collections, read again
// when the change feed says one was created, changed or deleted.
const GATHER_MS = 200;

export class CollectionsIndex {
  constructor(api, feed) {
    this.api = api;
    this.items = [];
    this.listeners = new Set();
    feed.listen((changes) => {
      if (!changes.some((change) => change.kind.startsWith("collection"))) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.load(), GATHER_MS);
    });
  }

  async load() {
    const page = await this.api.json("GET", "/v1/collections");
    this.items = page.items.sort((a, b) => a.name.localeCompare(b.name));
    this._changed();
  }

  // One this tab created or changed, shown before the feed says so.
  put(view) {
    this.items = [...this.items.filter((item) => item.id !== view.id), view].sort((a, b) => a.name.localeCompare(b.name));
    this._changed();
  }

  name(id) {
    return this.items.find((item) => item.id === id)?.name ?? null;
  }

  listen(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  _changed() {
    for (const listener of this.listeners) listener();
  }
}
