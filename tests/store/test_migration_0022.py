"""Migration 22 on a database that already holds notes: each title (and property) takes the
provenance of the write that created its note (the op log's first row), reviewed when every block of that origin
is (a verified import, an accepted proposal).

The notes are written by today's write path, then the title columns are dropped and version 22
forgotten, so reopening the store runs the migration over a database as version 21 left it, with
real op logs and block provenance behind it."""

from __future__ import annotations

from fastpad.knowledge.block_review import BlockReview
from fastpad.notes import Block
from tests.helpers_store import make_services, undo_migration


def test_existing_titles_take_the_provenance_of_the_write_that_created_them(make_store, fast_hasher) -> None:
    store = make_store()
    url = make_store.last_url()
    svc = make_services(store, fast_hasher)
    ws = svc.workspace()
    plaintext, _ = svc.tokens.create(ws.id, scopes=["notes:read", "notes:write"], auto_apply=True, label="bot")
    bot = svc.tokens.authenticate(plaintext)
    persons = svc.notes.create(ws.owner, title="Typed", blocks=[Block(None, "paragraph", "Mine.")])
    agents = svc.notes.create(bot, title="Agent's", blocks=[Block(None, "paragraph", "Its.")])
    clipped = svc.notes.create(ws.owner, markdown="---\ntitle: Clipped\nsource: the web\n---\n\nOutside.\n",
                               inbound=True)
    confirmed = svc.notes.create(ws.owner, title="Confirmed", blocks=[Block(None, "paragraph", "Outside, read.")],
                                 inbound=True)
    BlockReview(store, svc.notes).mark_reviewed(ws.owner, confirmed.id, confirmed.blocks[0]["id"])
    undo_migration(store, ws.id, 22, [f"ALTER TABLE notes DROP COLUMN {column}"
                                      for column in ("title_origin", "title_review_state", "property_provenance")])

    store = make_store(url=url)
    with store.read(ws.id) as tx:
        named = tx.name_provenance([persons.id, agents.id, clipped.id, confirmed.id])
    assert named[clipped.id].properties == {"source": ("inbound_untrusted", "unreviewed")}
    assert {note_id: names.title for note_id, names in named.items()} == {
        persons.id: ("human_typed", "human_accepted"),
        agents.id: ("agent_written", "unreviewed"),
        clipped.id: ("inbound_untrusted", "unreviewed"),
        confirmed.id: ("inbound_untrusted", "human_accepted"),
    }
