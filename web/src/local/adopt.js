// Adopting the notes written in this browser before an account (note_store.js) into the workspace
// the person has just signed in to — on the app's first signed-in start, whether they signed up or
// signed in. Each becomes their note through the published API's one way to create one,
// `POST /v1/notes`, as their own typing (origin human_typed): under the id this browser gave it,
// with its title and its blocks, each keeping its id.
//
// Exactly once: the note's id is the key. A retry of a request whose answer was lost replays under
// its idempotency key (made from the id); a second adoption of the same note from anywhere else —
// another tab, another session — meets `409 conflict` (`exists`, or `id_taken` if another workspace
// of this deployment adopted it first) and creates nothing. Once the workspace holds the note, it
// leaves this browser, so the next start has nothing left to adopt.
import { NoteModel } from "../model/note.js";

// → {adopted: [the notes created now, as POST /v1/notes answered, the one written to last first],
// failed: Error | null}. A
// note that could not be adopted (offline, a fault) stays in this browser for the next start.
export async function adoptLocalNotes(api, notes) {
  const adopted = [];
  for (const { noteId } of await notes.list()) {
    const model = new NoteModel(await notes.document(noteId));
    const blocks = model.blocks().filter((block) => block.id);
    try {
      // A note never typed into (the page opened, nothing written) is not worth a note.
      if (model.title || blocks.some((block) => block.text)) {
        adopted.push(await api.json("POST", "/v1/notes", { json: { id: noteId, title: model.title, blocks, idempotencyKey: `adopt-${noteId}` } }));
      }
    } catch (error) {
      if (!alreadyAdopted(error)) return { adopted, failed: error };
    }
    await notes.remove(noteId);
  }
  return { adopted, failed: null };
}

function alreadyAdopted(error) {
  if (error?.slug === "idempotency-conflict") return true; // this session created it, from the note as it then was
  return error?.status === 409 && ["exists", "id_taken"].includes(error.problem?.reason);
}
