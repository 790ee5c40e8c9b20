// What agents proposed and waits for this person: the turns GET /v1/turns?status=waiting lists,
// re-read when the change feed says a proposal was made or decided.
import { FeedList } from "./feed_list.js";

export class WaitingProposals extends FeedList {
  constructor(api, feed) {
    super(api, feed, { gatherMs: 150 });
    this.loaded = null;
  }

  concerns(kind) {
    return kind.startsWith("proposal");
  }

  load(again = false) {
    if (this.loaded && !again) return this.loaded;
    this.loaded = this.api.json("GET", "/v1/turns", { query: { status: "waiting", limit: 100 } }).then((page) => {
      this.items = page.items;
      this._changed();
    });
    return this.loaded;
  }

  get count() {
    return this.items.length;
  }
}
