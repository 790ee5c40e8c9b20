"""A note's title and properties carry provenance through the one write path, on both backends:
an auto-apply agent's are its unreviewed words; a person's rename makes the title theirs and a
person's save that changes a property makes that property theirs, the rest keeping the agent's.
(Verifying an import raises its title and properties: ``tests/api/test_import_verification.py``.)"""

from __future__ import annotations

from fastpad.notes import NoteDocument, NoteMeta
from tests.helpers_store import edit_ops

AGENTS = ("agent_written", "unreviewed")
PERSONS = ("human_typed", "human_accepted")


def names(svc, ws, note_id: str):
    with svc.store.read(ws.id) as tx:
        return tx.name_provenance([note_id])[note_id]


def test_a_persons_rename_and_property_edit_make_those_theirs_and_nothing_else(svc, ws) -> None:
    plaintext, _ = svc.tokens.create(ws.id, scopes=["notes:read", "notes:write"], auto_apply=True, label="bot")
    bot = svc.tokens.authenticate(plaintext)
    note = svc.notes.create(bot, title="Agent's title", markdown="Body.\n",
                            properties={"status": "draft", "owner": "the agent"})
    assert names(svc, ws, note.id).title == AGENTS
    assert names(svc, ws, note.id).properties == {"status": AGENTS, "owner": AGENTS}

    svc.notes.rename(ws.owner, note.id, "My title")
    assert names(svc, ws, note.id).title == PERSONS

    def edit_status(doc: NoteDocument) -> None:
        meta = doc.meta
        doc.set_meta(NoteMeta(meta.title, meta.types, {**meta.properties, "status": "final"}))

    ops, frontier = edit_ops(svc.store, ws.id, note.id, edit_status)
    svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id="editor", expected_frontier=frontier)
    assert names(svc, ws, note.id).properties == {"owner": AGENTS}, "the edited one is the person's (absent)"
