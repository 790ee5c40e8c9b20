// Where this person was mentioned: GET /v1/inbox/mentions, newest first, read again when the
// change feed reports a note write (any of which may have mentioned them). The Inbox page
// lists them; the sidebar counts the unread ones.
import { FeedList } from "./feed_list.js";
import { idempotencyKey } from "./dom.js";

// The feed kinds of writes that can put a mention into a note.
const NOTE_WRITES = new Set(["create", "ops", "accept", "auto_apply", "restore", "revert"]);

export class MentionsInbox extends FeedList {
  constructor(api, feed) {
    super(api, feed, { gatherMs: 500 });
    this.loaded = null;
    this.unread = 0;
    this.nextCursor = null;
  }

  concerns(kind) {
    return NOTE_WRITES.has(kind) || kind.startsWith("proposal_");
  }

  load(again = false) {
    if (this.loaded && !again) return this.loaded;
    this.loaded = this.api.json("GET", "/v1/inbox/mentions", { query: { limit: 50 } }).then((page) => {
      Object.assign(this, { items: page.items, unread: page.unread, nextCursor: page.next_cursor });
      this._changed();
    });
    return this.loaded;
  }

  // The next (older) page, appended.
  async more() {
    if (!this.nextCursor) return;
    const page = await this.api.json("GET", "/v1/inbox/mentions", { query: { limit: 50, cursor: this.nextCursor } });
    Object.assign(this, { items: [...this.items, ...page.items], unread: page.unread, nextCursor: page.next_cursor });
    this._changed();
  }

  async mark(mention, read) {
    const updated = await this.api.json("PATCH", `/v1/inbox/mentions/${mention.id}`, { json: { read, idempotencyKey: idempotencyKey() } });
    if (mention.read !== updated.read) this.unread += read ? -1 : 1;
    this.items = this.items.map((item) => (item.id === updated.id ? updated : item));
    this._changed();
  }

  async markAllRead() {
    await this.api.json("POST", "/v1/inbox/mentions:read-all"); // marking read twice is the same: no key needed
    this.items = this.items.map((item) => ({ ...item, read: true }));
    this.unread = 0;
    this._changed();
  }
}
