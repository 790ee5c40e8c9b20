"""Migration 24 on a database that already holds renamed notes: a former title takes the origin
of the write that created its note (unreviewed unless a person's), the current title its note's
own stamp — so an auto-apply agent's title a person renamed away stays held as an alias.

The notes are written and renamed by today's write path, then the title rows' provenance columns
are dropped and version 24 forgotten, so reopening the store runs the migration over a database
as version 23 left it, with real op logs behind it."""

from __future__ import annotations

from fastpad.notes import Block
from tests.helpers_store import make_services, undo_migration


def test_existing_aliases_take_the_provenance_of_the_write_that_created_their_note(make_store, fast_hasher) -> None:
    store = make_store()
    url = make_store.last_url()
    svc = make_services(store, fast_hasher)
    ws = svc.workspace()
    plaintext, _ = svc.tokens.create(ws.id, scopes=["notes:read", "notes:write"], auto_apply=True, label="bot")
    bot = svc.tokens.authenticate(plaintext)
    persons = svc.notes.create(ws.owner, title="First", blocks=[Block(None, "paragraph", "Mine.")])
    svc.notes.rename(ws.owner, persons.id, "Second")
    agents = svc.notes.create(bot, title="Agent's", blocks=[Block(None, "paragraph", "Its.")])
    svc.notes.rename(ws.owner, agents.id, "Checked")
    with store.read(ws.id) as tx:
        stamped = tx.links.alias_provenance([persons.id, agents.id])
    undo_migration(store, ws.id, 24, [f"ALTER TABLE note_titles DROP COLUMN {column}"
                                      for column in ("origin", "review_state")])

    store = make_store(url=url)
    with store.read(ws.id) as tx:
        migrated = tx.links.alias_provenance([persons.id, agents.id])
        current = {t.title for n in (persons.id, agents.id) for t in tx.links.titles(n) if t.retired_at is None}
    expected = {persons.id: {"First": ("human_typed", "human_accepted")},
                agents.id: {"Agent's": ("agent_written", "unreviewed")}}
    assert migrated == expected and stamped == expected, "what the write path stamps, the migration finds"
    assert current == {"Second", "Checked"}
