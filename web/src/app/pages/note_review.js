// Review where you read: on a note's page, what agents propose shows on the blocks it touches,
// and text no person ratified carries a mark in the margin.
//
// Proposals: every turn waiting on this note, read with its per-block diff, sources and — when
// the note moved since the agent read it — the three-way merge (GET /v1/turns/{id}/diff). Each
// waiting block gets a card on the block it changes (an insertion: on the block it goes after):
// what the agent read, what it wants, the blocks it drew from, and accept / reject for that
// block alone; a conflicting block offers the person's version, the proposal and the merge.
//
// Provenance: GET /v1/notes/{id}/provenance lists the blocks an agent wrote that no person
// accepted, and text from outside; each carries a quiet mark, with who and when on hover,
// and marking it reviewed is one click on the mark.
//
// Redaction placeholders: an agent is shown a secret as [redacted:rule:fingerprint] (and may
// never write one back). Text a person copied from an agent's answer can carry one; on a block
// that holds one, the owner can expand it in place (POST /v1/notes/{id}/placeholders/reveal: a
// person's alone, and logged); the value is shown beside it, never written into the note.
import { el, fill, idempotencyKey, when } from "../dom.js";
import { explain } from "../explain.js";

const RELOAD_AFTER_MS = 300; // gathers the burst of feed events one decision makes
const PLACEHOLDER = /\[redacted:[a-z0-9-]+:[0-9a-f]{6}\]/g; // fastpad/outbound/secrets.py PLACEHOLDER_RE

export class NoteReview {
  // host: where the note's proposal summary goes; editor: the EditorView the cards go into.
  constructor(app, noteId, host, editor) {
    Object.assign(this, { app, noteId, host, editor });
    this.reviews = []; // GET /v1/turns/{id}/diff of each turn waiting on this note
    this.marked = new Map(); // block id → its provenance entry
    this.revealed = new Map(); // placeholder → the secret it stands for, while the owner shows it
    this.busy = false;
    this.unlisten = app.proposals.listen(() => this.reloadSoon());
    editor.setAnnotations((id) => this._annotations(id));
    this.reload();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.unlisten();
  }

  // Whether anything is shown that the person's own edits can change.
  get shows() {
    return this.reviews.length > 0 || this.marked.size > 0;
  }

  // After a remote change to the note or a proposal event: blocks and their provenance moved.
  reloadSoon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), RELOAD_AFTER_MS);
  }

  async reload() {
    const api = this.app.api;
    const turns = this.app.proposals.items.filter((turn) => turn.note_id === this.noteId);
    try {
      const [provenance, ...reviews] = await Promise.all([
        api.json("GET", `/v1/notes/${this.noteId}/provenance`),
        ...turns.map((turn) => api.json("GET", `/v1/turns/${turn.id}/diff`)),
      ]);
      if (this.closed) return;
      this.marked = new Map(provenance.blocks.map((entry) => [entry.block_id, entry]));
      this.reviews = reviews.filter((review) => review.turn.open);
    } catch {
      return; // offline or gone: the status bar says so; what is shown stays
    }
    this._render();
  }

  _render() {
    this.editor.setAnnotations((id) => this._annotations(id));
    fill(this.host, ...this.reviews.map((review) => this._summary(review)), this._unreviewedLine());
  }

  // -- what a waiting turn shows --------------------------------------------------------

  _summary(review) {
    const turn = review.turn;
    const waiting = [...turn.diffs.filter((diff) => diff.state === "pending"), ...turn.ops.filter((op) => op.state === "pending")];
    const loose = turn.diffs.filter((diff) => diff.state === "pending" && this._anchor(turn, diff) === null);
    return el("section", { class: "proposal-here", dataset: { turn: turn.id } },
      el("p", {},
        `${agentName(review)} proposes ${waiting.length} change${waiting.length === 1 ? "" : "s"} to this note`,
        review.note_moved ? (review.merge?.clean === false ? " — some overlap your edits since; choose below." : " — merged with your edits since.") : ".",
        " ", el("a", { href: `/review/${turn.id}` }, "Full review")),
      el("div", { class: "decision" },
        el("button", { type: "button", class: "primary", disabled: review.merge?.clean === false, title: review.merge?.clean === false ? "Decide the overlapping blocks first" : "", onclick: () => this._decide(turn, "accept") }, "Accept all"),
        el("button", { type: "button", onclick: () => this._decide(turn, "reject") }, "Reject all")),
      this._ops(review),
      // An insertion at the very top has no block to sit on: it waits here.
      loose.map((diff) => this._card(review, diff)));
  }

  // The links and calendar events the turn proposes: never the agent's to accept, each decided
  // here on its own.
  _ops(review) {
    const turn = review.turn;
    const waiting = turn.ops.map((op, index) => [op, index]).filter(([op]) => op.state === "pending");
    if (!waiting.length) return null;
    const title = (id) => this.app.index.notes.get(id)?.title || "another note";
    const describe = (op) => op.op === "add_edge" ? `Link this note (${op.type.replace(/_/g, " ")}) to “${title(op.to_note_id)}”`
      : op.op === "add_event" ? `Add the event “${op.title}”, ${op.start} – ${op.end}`
        : `Move an event to ${op.start} – ${op.end}`;
    return el("ul", { class: "proposed-ops", "aria-label": "Links and events proposed" }, waiting.map(([op, index]) => el("li", { dataset: { op: String(index) } },
      describe(op), " ",
      el("button", { type: "button", onclick: () => this._decide(turn, "accept-some", { op_indexes: [index] }) }, "Accept"),
      el("button", { type: "button", onclick: () => this._decide(turn, "reject-some", { op_indexes: [index] }) }, "Reject"))));
  }

  // The block a waiting diff shows on: the block it changes, or for an insertion the block it
  // goes after (following insertions that go after other insertions); null: the note's top.
  _anchor(turn, diff) {
    if (diff.kind !== "inserted") return diff.block_id;
    const after = new Map(turn.diffs.filter((d) => d.kind === "inserted").map((d) => [d.block_id, d.after_id]));
    let anchor = diff.after_id;
    for (let hops = 0; anchor && after.has(anchor) && hops < turn.diffs.length; hops++) anchor = after.get(anchor);
    return anchor && this.editor.model.has(anchor) ? anchor : null;
  }

  _annotations(id) {
    const nodes = [];
    const mark = this.marked.get(id);
    if (mark) nodes.push(this._mark(mark));
    const placeholders = this.editor.model.block(id).text.match(PLACEHOLDER);
    if (placeholders) nodes.push(this._reveals(placeholders));
    for (const review of this.reviews) {
      for (const diff of review.turn.diffs) {
        if (diff.state === "pending" && this._anchor(review.turn, diff) === id) nodes.push(this._card(review, diff));
      }
    }
    return nodes;
  }

  _card(review, diff) {
    const turn = review.turn;
    const conflict = review.merge?.conflicts.find((c) => c.block_id === diff.block_id);
    const what = { inserted: "proposes a new block here", replaced: "proposes a change", deleted: "proposes deleting this block" }[diff.kind];
    const id = diff.block_id;
    return el("div", { class: "suggestion", role: "group", "aria-label": `Suggestion by ${agentName(review)}`, dataset: { turn: turn.id, block: id, kind: diff.kind } },
      el("p", { class: "suggestion-head" }, el("strong", {}, agentName(review)), ` ${what}`),
      conflict ? this._conflict(turn, conflict) : el("p", { class: "change" }, ...changeOf(diff)),
      this._sources(review, diff),
      conflict ? null : el("div", { class: "decision" },
        el("button", { type: "button", class: "primary", onclick: () => this._decide(turn, "accept-some", { block_ids: [id] }) }, "Accept"),
        el("button", { type: "button", onclick: () => this._decide(turn, "reject-some", { block_ids: [id] }) }, "Reject")));
  }

  // The note moved under this block since the agent read it, and both changed it: the three
  // versions, and the person picks — their own is never dropped without their word.
  _conflict(turn, conflict) {
    const id = conflict.block_id;
    const choose = (label, choice, primary = false) => el("button", {
      type: "button", class: primary ? "primary" : "", onclick: () => this._decide(turn, "accept-some", { block_ids: [id], resolutions: { [id]: choice } }),
    }, label);
    return el("div", { class: "merge" },
      el("p", { class: "quiet" }, "You changed this block after the agent read it."),
      el("dl", {},
        el("dt", {}, "The agent read"), el("dd", {}, conflict.base ?? "(nothing)"),
        el("dt", {}, "Yours now"), el("dd", { class: "mine" }, conflict.mine ?? "(deleted)"),
        el("dt", {}, "The agent wants"), el("dd", { class: "theirs" }, conflict.proposal ?? "(deleted)"),
        conflict.suggestion !== null ? [el("dt", {}, "Both, merged"), el("dd", { class: "merged" }, conflict.suggestion)] : null),
      el("div", { class: "decision" },
        conflict.suggestion !== null ? choose("Take the merge", "suggestion", true) : null,
        choose("Keep mine", "mine", conflict.suggestion === null),
        choose("Take the agent's", "proposal"),
        el("button", { type: "button", onclick: () => this._decide(turn, "reject-some", { block_ids: [id] }) }, "Reject")));
  }

  _sources(review, diff) {
    const cited = diff.source_block_ids.map((blockId) => [blockId, review.sources[blockId]]).filter(([, source]) => source);
    if (!cited.length) return null;
    return el("p", { class: "sources" }, "Drawn from ", cited.map(([blockId, source], index) => [
      index ? ", " : "",
      el("a", { href: `/notes/${source.note_id}#${blockId}`, title: source.text }, source.note_title || "Untitled"),
    ]));
  }

  async _decide(turn, action, body = {}) {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.app.api.json("POST", `/v1/turns/${turn.id}/${action}`, { json: { ...body, idempotencyKey: idempotencyKey() } });
      this.app.flash(action.startsWith("accept") ? "Accepted: it is in the note now, marked as reviewed by you." : "Rejected: nothing of it reached the note.");
    } catch (error) {
      this.app.flash(explain(error, action.startsWith("accept") ? "The suggestion could not be accepted" : "The suggestion could not be rejected"));
    } finally {
      this.busy = false;
    }
    await this.app.proposals.load(true);
    this.reload();
  }

  // -- redaction placeholders ---------------------------------------------------------

  // One "Show" per placeholder; the value appears beside it until hidden again (kept across
  // the re-renders a change to the note brings).
  _reveals(placeholders) {
    return el("div", { class: "reveals" }, [...new Set(placeholders)].map((placeholder) => {
      const row = el("p", { class: "reveal" });
      const draw = () => {
        const value = this.revealed.get(placeholder);
        fill(row, el("span", { class: "quiet" }, `${placeholder} is a secret agents never see. `),
          el("button", { type: "button", class: "link", onclick: () => (value === undefined ? show() : hide()) }, value === undefined ? "Show the secret" : "Hide it"),
          value === undefined ? null : [" ", el("code", { class: "revealed" }, value)]);
      };
      const show = async () => {
        try {
          this.revealed.set(placeholder, (await this.app.api.json("POST", `/v1/notes/${this.noteId}/placeholders/reveal`, { json: { placeholder } })).value);
        } catch (error) {
          this.app.flash(explain(error, "The secret could not be shown"));
        }
        this._render();
      };
      const hide = () => {
        this.revealed.delete(placeholder);
        this._render();
      };
      draw();
      return row;
    }));
  }

  // -- provenance in the margin -----------------------------------------------------------

  _mark(entry) {
    const outside = entry.origin === "inbound_untrusted";
    const reviewed = entry.review_state === "human_accepted";
    const who = entry.author?.name ?? (outside ? "an import or capture" : "an agent");
    const state = outside
      ? reviewed ? "from outside, reviewed by you" : "from outside (a capture or an import), not reviewed"
      : entry.review_state === "agent_accepted" ? "accepted by the agent itself" : "not reviewed";
    const title = `${outside ? "Arrived" : "Written"} by ${who}${entry.written_at ? ` · ${when(entry.written_at)}` : ""} · ${state}`;
    const kind = outside ? "outside" : "agent";
    if (reviewed) return el("span", { class: `margin-mark ${kind} reviewed`, title, role: "img", "aria-label": title });
    return el("button", {
      type: "button", class: `margin-mark ${kind}`, title: `${title}. Click to mark it reviewed.`, "aria-label": `${title}. Mark reviewed`,
      onclick: () => this._markReviewed(entry),
    });
  }

  async _markReviewed(entry) {
    try {
      await this.app.api.json("POST", `/v1/notes/${this.noteId}/blocks/${entry.block_id}/mark-reviewed`);
      this.app.flash("Marked reviewed: this block now counts as checked by you.");
    } catch (error) {
      this.app.flash(explain(error, "The block could not be marked reviewed"));
    }
    this.reload();
  }

  // What an auto-apply grant costs, said in the note: how much of it no person has read.
  _unreviewedLine() {
    const unreviewed = [...this.marked.values()].filter((entry) => entry.origin === "agent_written").length;
    if (!unreviewed) return null;
    return el("p", { class: "unreviewed-here quiet" },
      `${unreviewed} block${unreviewed === 1 ? "" : "s"} here ${unreviewed === 1 ? "was" : "were"} written by an agent and not reviewed by a person (marked in the margin).`);
  }
}

function agentName(review) {
  return review.author ?? review.turn.author?.name ?? "An agent";
}

// A diff as a person reads it: removed words struck through, added ones highlighted.
function changeOf(diff) {
  if (diff.kind === "inserted") return [el("ins", {}, diff.after?.text ?? "")];
  if (diff.kind === "deleted") return [el("del", {}, diff.before?.text ?? "")];
  return diff.hunks.map((hunk) => hunk.op === "equal" ? hunk.before
    : [hunk.before ? el("del", {}, hunk.before) : null, hunk.after ? el("ins", {}, hunk.after) : null]);
}
