// The workspace's collections (saved views) for the sidebar, and the types views are over:
// GET /v1/collections, read again when the change feed says one was created, changed or
// deleted; a type (GET /v1/types/{name}) read once and again only after the feed says types changed.
import { FeedList } from "./feed_list.js";

export class CollectionsIndex extends FeedList {
  constructor(api, feed) {
    super(api, feed, { gatherMs: 200 });
    this.types = new Map(); // type name -> its GET, answered or on its way
  }

  concerns(kind) {
    return kind.startsWith("collection");
  }

  noticed(changes) {
    if (changes.some((change) => change.kind.startsWith("type_"))) this.types.clear();
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
    return this.known(id)?.name ?? null;
  }

  known(id) {
    return this.items.find((item) => item.id === id) ?? null;
  }

  type(name) {
    if (!this.types.has(name)) {
      const answer = this.api.json("GET", `/v1/types/${encodeURIComponent(name)}`);
      answer.catch(() => this.types.delete(name)); // a failure is not kept
      this.types.set(name, answer);
    }
    return this.types.get(name);
  }
}
