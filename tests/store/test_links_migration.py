"""Migration 4 on a database that already holds notes: their titles are registered,
so a link written after the upgrade finds a note written before it."""

from __future__ import annotations

from fastpad.knowledge.graph import GraphService
from fastpad.notes import Block, NoteDocument, NoteMeta, new_id
from tests.helpers_store import edit_ops, make_services

LINKS_VERSION = 4


def _old_note(tx, title: str, at) -> str:
    """A note row as a version-3 database holds it (no title index existed then)."""
    doc = NoteDocument.new(meta=NoteMeta(title=title), blocks=[Block(new_id(), "paragraph", "old text")])
    note_id = new_id()
    d = tx._d  # noqa: SLF001 - writing a row the way an older Fastpad did
    tx._x(  # noqa: SLF001
        "INSERT INTO notes (id, workspace_id, title, types, properties, snapshot, frontier, op_seq, created_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
        (note_id, tx.workspace_id, title, d.js([]), d.js({}), doc.snapshot(), doc.frontier(), d.ts(at), d.ts(at)),
    )
    return note_id


def test_titles_of_notes_written_before_links_existed_resolve_after_the_upgrade(make_store, fast_hasher) -> None:
    old = make_store(migrate_to=LINKS_VERSION - 1)
    url = make_store.last_url()
    workspace_id = new_id()
    svc = make_services(old, fast_hasher)
    with old.write(workspace_id) as tx:
        tx.insert_workspace("ws", svc.clock())
        plain = _old_note(tx, " Old Plan ", svc.clock())
        accented = _old_note(tx, "Ärzte", svc.clock())
    old.close()

    store = make_store(url=url)
    svc = make_services(store, fast_hasher)
    owner = svc.people.principal_for(workspace_id, svc.people.create_person(workspace_id, "o@example.com").id)
    graph = GraphService(store, clock=svc.clock)
    linker = svc.notes.create(owner, title="New", blocks=[Block(None, "paragraph", "[[old plan]] and [[ärzte]]")])
    targets = {e.target_title: e.target and e.target.id for e in graph.links(owner, linker.id).outgoing}
    assert targets["old plan"] == plain
    if store.backend == "sqlite":
        assert targets["ärzte"] is None, "SQLite's lower() left the Ä alone"
    # The migration's lower() is ASCII-only on SQLite; the note's next write stores
    # the write path's key, and the link waiting for it resolves then.
    ops, frontier = edit_ops(store, workspace_id, accented,
                             lambda d: d.replace_text(d.blocks()[0].id, "touched after the upgrade"))
    svc.notes.apply_ops(owner, accented, ops=ops, peer_id="1", expected_frontier=frontier)
    targets = {e.target_title: e.target and e.target.id for e in graph.links(owner, linker.id).outgoing}
    assert targets == {"old plan": plain, "ärzte": accented}
    assert graph.links(owner, accented).aliases == [], "re-keying a title is not a rename"
