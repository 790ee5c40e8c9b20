"""Migration 25 on a database that already holds notes and people: the mentions table arrives
empty, the notes are as they were, and the next write that mentions a member — in a note
from before, or a new one — puts it in their Inbox."""

from __future__ import annotations

from fastpad.knowledge.mentions import InboxService
from fastpad.notes import Block
from fastpad.notes.mentions import person_mention
from tests.helpers_store import edit_ops, make_services


def test_notes_from_before_version_25_survive_it_and_mentions_start_with_it(make_store, fast_hasher) -> None:
    old = make_store(migrate_to=24)
    url = make_store.last_url()
    svc = make_services(old, fast_hasher)
    ws = svc.workspace()
    bea = svc.people.create_person(ws.id, "bea@example.com", password="a long enough pass", display_name="Bea")
    before = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "written before")])
    old.close()

    store = make_store(url=url)
    svc = make_services(store, fast_hasher)
    inbox = InboxService(store)
    reader = svc.people.principal_for(ws.id, bea.id)
    assert svc.notes.get(ws.owner, before.id).blocks[0]["text"] == "written before"
    assert inbox.page(reader).mentions == []
    block_id = before.blocks[0]["id"]
    ops, frontier = edit_ops(store, ws.id, before.id, lambda d: d.replace_text(block_id, person_mention(bea.id, "Bea")))
    svc.notes.apply_ops(ws.owner, before.id, ops=ops, peer_id="1", expected_frontier=frontier)
    svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "now " + person_mention(bea.id, "Bea"))])
    assert sorted(m.excerpt for m in inbox.page(reader).mentions) == sorted(
        [person_mention(bea.id, "Bea"), "now " + person_mention(bea.id, "Bea")])
