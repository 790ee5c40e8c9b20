// A list the sidebar shows, read from the server and read again (once, shortly after) when the
// change feed reports changes of the kinds it is about: what WaitingProposals and
// CollectionsIndex share. A subclass says which changes matter (`concerns`) and how to read
// the list (`load`), and calls `_changed()` when it has new items.
export class FeedList {
  constructor(api, feed, { gatherMs }) {
    this.api = api;
    this.items = [];
    this.listeners = new Set();
    feed.listen((changes) => {
      this.noticed(changes);
      if (!changes.some((change) => this.concerns(change.kind))) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.load(true), gatherMs); // several changes at once: one read
    });
  }

  // A hook for changes that do not call for a read of the list (a cache to drop, say).
  noticed() {}

  listen(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  _changed() {
    for (const listener of this.listeners) listener();
  }
}
