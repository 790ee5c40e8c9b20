// Who wrote the block the caret is in, from its history (GET /v1/notes/{id}/blocks/{block}):
// "Typed by Tess · 10:42", "Written by summariser (an agent) · yesterday". Shown in the note's
// head, read when the caret enters another block and again after a save reaches the server.
import { el, fill, when } from "../dom.js";
import { nameOf } from "../people.js";

export class BlockAuthor {
  constructor(api, people, noteId, editorRoot) {
    Object.assign(this, { api, people, noteId });
    // Always in place (empty until the caret is in a saved block), so showing it moves no text.
    this.element = el("p", { class: "block-author quiet", "aria-live": "polite" });
    this.blockId = null;
    this.asked = 0;
    editorRoot.addEventListener("focusin", (event) => {
      const id = event.target.closest?.(".block")?.dataset.id;
      if (id && id !== this.blockId) this.show(id);
    });
  }

  // Reads the block's history again (after a save: the caret's block may be newly typed).
  refresh() {
    if (this.blockId) this.show(this.blockId);
  }

  async show(blockId) {
    this.blockId = blockId;
    const asked = ++this.asked;
    let state = null;
    try {
      state = await this.api.json("GET", `/v1/notes/${this.noteId}/blocks/${blockId}`);
    } catch {
      state = null; // not saved yet, or offline: nothing to say
    }
    const author = state?.author;
    // A person who chose no display name is called by their email, as everywhere in the app.
    const person = author?.kind === "person" && !author.name
      ? (await this.people.list().catch(() => [])).find((p) => p.id === author.id) : null;
    if (asked !== this.asked) return;
    if (!author) {
      fill(this.element);
      return;
    }
    const said = author.kind === "agent"
      ? `Written by ${author.name ?? "an agent"} (an agent)`
      : `Typed by ${author.name ?? (person ? nameOf(person) : "a former member")}`;
    fill(this.element, said, state.written_at ? ` · ${when(state.written_at)}` : "");
  }
}
