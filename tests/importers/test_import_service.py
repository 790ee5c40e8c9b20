"""ImportService on both backends: every ledger reason, links that become edges, retries that duplicate nothing."""

from __future__ import annotations

import os
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from fastpad.errors import InsufficientScope, OutOfScope, ValidationFailed
from fastpad.importers.service import ImportService, ImportView
from fastpad.knowledge.attachments import AttachmentService
from fastpad.knowledge.graph import GraphService
from fastpad.knowledge.types import TypeService
from fastpad.security.scopes import NOTES_READ, NOTES_WRITE
from fastpad.store.imports import LedgerEntry
from tests.helpers_store import Services, Workspace, lexical
from tests.importers.fixtures import EMBEDS, MARKDOWN, NOTION, NOTION_ROOT, OBSIDIAN, write_tree, zip_tree


@pytest.fixture
def imports(svc: Services) -> ImportService:
    return ImportService(svc.store, svc.notes, TypeService(svc.store, clock=svc.clock), clock=svc.clock, batch_size=3)


def ledger(imports: ImportService, ws: Workspace, view: ImportView) -> list[LedgerEntry]:
    rows, cursor = [], None
    while True:
        page = imports.ledger(ws.owner, view.id, cursor=cursor, limit=7)
        rows += page.items
        if page.next_cursor is None:
            return rows
        cursor = page.next_cursor


def by_item(rows: list[LedgerEntry]) -> dict[str, LedgerEntry]:
    return {r.item: r for r in rows if r.kind not in ("link", "links_more", "links_left_out")}


def note_titled(svc: Services, ws: Workspace, title: str):
    matches = [n for n in svc.notes.list(ws.owner, limit=200).items if n.title == title]
    assert len(matches) == 1, (title, [n.title for n in svc.notes.list(ws.owner, limit=200).items])
    return svc.notes.get(ws.owner, matches[0].id)


def test_an_obsidian_vault_accounts_for_every_file(svc, ws, imports, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "My Vault", OBSIDIAN)
    view = imports.run(ws.owner, root)
    assert view.status == "completed" and view.source == "obsidian" and view.label == "My Vault"
    rows = ledger(imports, ws, view)
    items = by_item(rows)
    assert set(items) == set(OBSIDIAN), "a row for every file the vault holds"
    expected = {
        ".obsidian/app.json": ("skipped", "unsupported_attachment"), "styles.css": ("skipped", "unsupported_attachment"),
        "Views.base": ("skipped", "database_view"), "Secret.md": ("skipped", "encrypted_note"),
        "Vault.mdenc": ("skipped", "encrypted_note"), "Latin.md": ("skipped", "parse_error"),
        "fake.png": ("skipped", "parse_error"), "diagram.png": ("stored", None), "spec.pdf": ("stored", None),
        "Home.md": ("imported", None), "Projects/Plan.md": ("imported", None), "Board.canvas": ("imported", None),
        "Work/Meeting.md": ("imported", None), "Personal/Meeting.md": ("imported", None),
    }
    assert {path: (r.status, r.reason) for path, r in items.items()} == expected
    assert "not UTF-8" in items["Latin.md"].detail
    links = {(r.item, r.target): r.reason for r in rows if r.kind == "link"}
    assert links == {("Home.md", "Nowhere"): "unresolved_wikilink", ("Home.md", "Meeting"): "ambiguous_wikilink",
                     ("Board.canvas", "Gone/Missing.md"): "unresolved_wikilink"}
    assert view.summary is not None
    assert view.summary["text"] == "imported 5 of 8 notes, and here is each of the 3 we did not"
    assert view.summary["reasons"] == {"ambiguous_wikilink": 1, "database_view": 1, "encrypted_note": 2,
                                       "parse_error": 2, "unresolved_wikilink": 2, "unsupported_attachment": 2}


def test_vault_notes_are_untrusted_searchable_and_linked_by_obsidians_rules(svc, ws, imports, tmp_path) -> None:
    view = imports.run(ws.owner, write_tree(tmp_path / "vault", OBSIDIAN))
    home = note_titled(svc, ws, "Home")
    assert home.types == ("project_alpha", "to_do")
    assert home.properties == {"aliases": ["Start", "Front page"], "status": "active", "tags": ["2024"]}
    assert {(b["origin"], b["review_state"]) for b in home.blocks} == {("inbound_untrusted", "unreviewed")}
    text = "\n".join(b["text"] for b in home.blocks)
    attachment = next(r for r in ledger(imports, ws, view) if r.item == "diagram.png").detail.rsplit(" ", 1)[-1]
    assert f"![diagram.png]({attachment})" in text
    assert "[[Plan|Projects/Plan]], [[Plan|the goals]] and [[Plan|Plan#^step1]]" in text
    assert "\\[[Views.base]]" in text and "\\[[Meeting]]" in text and "`[[Not a link]]`" in text
    graph = GraphService(svc.store)
    plan = note_titled(svc, ws, "Plan")
    out = {(e.target_title, e.target.id if e.target else None) for e in graph.links(ws.owner, home.id).outgoing}
    assert out == {("Plan", plan.id), ("Nowhere", None)}, "an unresolved link stays a forward link"
    back = {(e.target_title, e.target.id) for e in graph.links(ws.owner, plan.id).outgoing}
    assert back == {("Home", home.id)}, "an alias and a relative path both reach Home"
    work = note_titled(svc, ws, "Meeting (Work)")
    assert note_titled(svc, ws, "Meeting (Personal)").title == "Meeting (Personal)"
    assert {e.target.id for e in graph.links(ws.owner, work.id).outgoing} == {work.id}, "its own folder wins"
    board = note_titled(svc, ws, "Board")
    assert {e.target_title for e in graph.links(ws.owner, board.id).outgoing} == {"Home", "Plan", "Gone/Missing.md"}
    with svc.store.read(ws.id) as tx:
        assert {hit.note_id for hit in lexical(tx, "Ship")} == {plan.id}
    assert AttachmentService(svc.store).get(ws.owner, attachment.rsplit("/", 1)[-1]).content.startswith(b"\x89PNG")


def test_note_embeds_become_embeds_edges_and_images_stay_attachments(svc, ws, imports, tmp_path) -> None:
    view = imports.run(ws.owner, write_tree(tmp_path / "vault", EMBEDS))
    home, plan = note_titled(svc, ws, "Home"), note_titled(svc, ws, "Plan")
    shown, again, image = (b["text"] for b in home.blocks[1:])
    assert shown == "Shown here: ![[Plan|Projects/Plan#Goals]]"
    assert again.startswith("Again ![[Plan]], linked as [[Plan]] too, and ![[Missing note]] and !\\[[lost.png]].")
    assert image.startswith("![diagram.png](/v1/attachments/")
    edges = GraphService(svc.store).links(ws.owner, home.id).outgoing
    found = sorted((e.type, e.target_title, e.target.id if e.target else None, e.evidence.block_id) for e in edges)
    assert found == sorted([
        ("embeds", "Plan", plan.id, home.blocks[1]["id"]), ("embeds", "Plan", plan.id, home.blocks[2]["id"]),
        ("mentions", "Plan", plan.id, home.blocks[2]["id"]), ("embeds", "Missing note", None, home.blocks[2]["id"]),
    ]), "a note embed is an edge of its own kind; an image embed is not an edge"
    first = next(e for e in edges if e.evidence.block_id == home.blocks[1]["id"])
    assert first.evidence.text == "Shown here: ![[Plan|Projects/Plan#Goals]]", "the embed and its heading as evidence"
    assert (first.derivation, first.status) == ("text", "inferred")
    backlinks = {(e.type, e.source.id) for e in GraphService(svc.store).links(ws.owner, plan.id).backlinks}
    assert backlinks == {("embeds", home.id), ("mentions", home.id)}
    links = {r.target: (r.reason, r.detail) for r in ledger(imports, ws, view) if r.kind == "link"}
    assert links == {"Missing note": ("unresolved_wikilink", "an embed: no item in the archive has this name or path"),
                     "lost.png": ("unresolved_wikilink", "an embed: no item in the archive has this name or path")}


def test_a_vaults_folders_stay_on_its_notes_and_list_them(svc, ws, imports, tmp_path) -> None:
    imports.run(ws.owner, write_tree(tmp_path / "vault", EMBEDS))
    folders = {n.title: svc.notes.get(ws.owner, n.id).properties.get("source_folder")
               for n in svc.notes.list(ws.owner, limit=200).items}
    assert folders == {"Home": None, "Plan": "Projects", "Deep": "Projects/Alpha", "Projection": None}

    def titles(folder: str) -> set[str]:
        return {n.title for n in svc.notes.list(ws.owner, folder=folder, limit=200).items}

    assert titles("Projects") == titles("/Projects/") == {"Plan", "Deep"}, "a folder and everything beneath it"
    assert titles("Projects/Alpha") == {"Deep"}
    assert titles("Proj") == set() and titles("projects") == set(), "whole folder names, as the archive spells them"
    first = svc.notes.list(ws.owner, folder="Projects", limit=1)
    rest = svc.notes.list(ws.owner, folder="Projects", limit=1, cursor=first.next_cursor)
    assert {n.title for n in first.items + rest.items} == {"Plan", "Deep"} and rest.next_cursor is None
    for bad in ("", "/", "x" * 1001):
        with pytest.raises(ValidationFailed):
            svc.notes.list(ws.owner, folder=bad)


def test_a_retry_reuses_every_id_and_creates_nothing_twice(svc, ws, imports, tmp_path) -> None:
    root = write_tree(tmp_path / "vault", OBSIDIAN)
    calls = []
    stopped = imports.run(ws.owner, root, should_stop=lambda: len(calls) > 2, on_progress=calls.append)
    assert stopped.status == "cancelled"
    first = ledger(imports, ws, stopped)
    landed = {r.item: r.note_id for r in first if r.status == "imported"}
    cancelled = {r.item for r in first if r.status == "cancelled"}
    assert landed and cancelled and set(by_item(first)) == set(OBSIDIAN), "a cancelled import still lists everything"
    before = {n.id: svc.notes.get(ws.owner, n.id).blocks for n in svc.notes.list(ws.owner, limit=200).items}

    again = imports.run(ws.owner, root)
    rows = by_item(ledger(imports, ws, again))
    assert {item: rows[item].status for item in landed} == dict.fromkeys(landed, "unchanged")
    assert {rows[item].status for item in cancelled if item.endswith((".md", ".canvas"))} <= {"imported", "skipped"}
    assert all(rows[item].note_id == note_id for item, note_id in landed.items())
    notes = svc.notes.list(ws.owner, limit=200).items
    assert len(notes) == 5 and len({n.title for n in notes}) == 5
    for note_id, blocks in before.items():
        assert svc.notes.get(ws.owner, note_id).blocks == blocks, "what the first attempt wrote is untouched"
    graph = GraphService(svc.store)
    for note in notes:
        for edge in graph.links(ws.owner, note.id).outgoing:
            assert edge.target is not None or edge.target_title in ("Nowhere", "Gone/Missing.md"), edge

    third = imports.run(ws.owner, root)
    assert third.summary["notes"] == {"total": 8, "imported": 0, "unchanged": 5, "not_imported": 3}
    assert len(svc.notes.list(ws.owner, limit=200).items) == 5

    purged = rows["Projects/Plan.md"].note_id
    block_ids = [b["id"] for b in svc.notes.get(ws.owner, purged).blocks]
    with svc.store.write(ws.id) as tx:  # the note is gone for good (as a purge leaves it)
        tx._x("DELETE FROM notes WHERE workspace_id = ? AND id = ?", (ws.id, purged))
    imports.run(ws.owner, root)
    assert [b["id"] for b in svc.notes.get(ws.owner, purged).blocks] == block_ids, "the same ids, minted once"


def test_a_notion_export_becomes_pages_and_typed_rows(svc, ws, imports, tmp_path) -> None:
    zipped = zip_tree(tmp_path / "notion.zip", NOTION, top=NOTION_ROOT)
    view = imports.run(ws.owner, zipped)
    assert view.source == "notion" and view.status == "completed"
    rows = ledger(imports, ws, view)
    items = by_item(rows)
    tasks, people = "Tasks 11111111111111111111111111111111", "People 22222222222222222222222222222222"
    assert {path: (r.kind, r.status, r.reason) for path, r in items.items()} == {
        "": ("comments", "skipped", "comments_not_in_export"),
        "index.html": ("file", "skipped", "unsupported_attachment"),
        f"{tasks}.csv": ("view", "skipped", "database_view"),
        f"{tasks}_all.csv": ("database", "defined", None),
        f"{people}_all.csv": ("database", "defined", None),
        "Home aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.md": ("note", "imported", None),
        "Home aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/Sub page bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.md": ("note", "imported", None),
        "Home aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/cat.png": ("attachment", "stored", None),
        f"{tasks}/Write 55555555555555555555555555555555.md": ("database_row", "imported", None),
        f"{tasks}/Ship 66666666666666666666666666666666.md": ("database_row", "imported", None),
        f"{tasks}_all.csv#row 3": ("database_row", "imported", None),
        f"{tasks}_all.csv#row 4": ("database_row", "imported", None),
        f"{people}/Ada 33333333333333333333333333333333.md": ("database_row", "imported", None),
        f"{people}/Bob 44444444444444444444444444444444.md": ("database_row", "imported", None),
    }
    assert {r.target: r.reason for r in rows if r.kind == "link"} == {
        "Home aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/Linked cccccccccccccccccccccccccccccccc.csv": "database_view",
        "Deep " * 50 + "Page dddddddddddddddddddddddddddddddd.md": "path_too_long",
        "Nope eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee.md": "unresolved_wikilink",
    }
    types = {t.type.name: {p.name: p.kind for p in t.type.properties} for t in TypeService(svc.store).list(ws.owner)}
    assert types == {"Tasks": {"Done": "checkbox", "Points": "number", "Due": "date", "Owner": "relation",
                               "Stage": "select", "Link": "url"},
                     "People": {"Email": "text"}}
    write = note_titled(svc, ws, "Write")
    ada = note_titled(svc, ws, "Ada")
    assert write.types == ("Tasks",)
    assert write.properties == {"Tasks.Done": True, "Tasks.Points": 3, "Tasks.Due": "2025-01-05",
                                "Tasks.Owner": ada.id, "Tasks.Stage": "Doing", "Tasks.Link": "https://example.com/a",
                                "source_folder": "Tasks 11111111111111111111111111111111"}, "a page keeps the export's folder it sat in"
    assert [b["text"] for b in write.blocks] == ["The draft."], "the page's Key: value lines became properties"
    assert note_titled(svc, ws, "Plan").properties == {"Tasks.Done": False, "Tasks.Points": 1, "Tasks.Stage": "Done"}
    home = note_titled(svc, ws, "Home")
    text = "\n".join(b["text"] for b in home.blocks)
    assert "[[Sub page]]" in text and "[[Tasks|the tasks]]" not in text
    cat = items["Home aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/cat.png"].detail.rsplit(" ", 1)[-1]
    assert f"![cat]({cat})" in text
    graph = GraphService(svc.store)
    assert {e.target.id for e in graph.links(ws.owner, home.id).outgoing} == {note_titled(svc, ws, "Sub page").id}


def test_a_markdown_folder_titles_by_frontmatter_heading_or_name(svc, ws, imports, tmp_path) -> None:
    view = imports.run(ws.owner, write_tree(tmp_path / "docs", MARKDOWN))
    assert view.source == "markdown"
    items = by_item(ledger(imports, ws, view))
    assert items["docs/notes.txt"].reason == "unsupported_attachment"
    readme, guide = note_titled(svc, ws, "Read me first"), note_titled(svc, ws, "The guide")
    assert note_titled(svc, ws, "plain").blocks[0]["text"] == "No heading, no frontmatter."
    assert guide.types == ("reference",)
    assert "[[The guide|the guide]] and [[The guide|guide]]" in readme.blocks[1]["text"]
    graph = GraphService(svc.store)
    assert {e.target.id for e in graph.links(ws.owner, guide.id).outgoing} == {readme.id}


def test_link_rows_are_per_target_and_capped_per_note(svc, ws, imports, tmp_path) -> None:
    body = " ".join(f"[[Missing {i}]] [[Missing {i}]]" for i in range(105))
    view = imports.run(ws.owner, write_tree(tmp_path / "v", {"Many.md": body, ".obsidian/app.json": "{}"}))
    rows = [r for r in ledger(imports, ws, view) if r.item == "Many.md"]
    assert [r.kind for r in rows].count("link") == 100
    assert rows[-1].kind == "links_more" and rows[-1].count == 5
    assert view.summary["link_rows"] == {"listed": 101, "left_out": 0, "left_out_notes": 0}


def test_titles_never_steal_an_existing_notes_links(svc, ws, imports, tmp_path) -> None:
    mine = svc.notes.create(ws.owner, title="Plan", markdown="my own plan")
    imports.run(ws.owner, write_tree(tmp_path / "v", {"Plan.md": "imported", "Home.md": "see [[Plan]]"}))
    titles = {n.title for n in svc.notes.list(ws.owner, limit=50).items}
    assert titles == {"Plan", "Plan (2)", "Home"}
    home = note_titled(svc, ws, "Home")
    target = GraphService(svc.store).links(ws.owner, home.id).outgoing[0].target
    assert target.id != mine.id and target.title == "Plan (2)"


def test_bad_input_is_refused_with_nothing_written(svc, ws, imports, tmp_path) -> None:
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("v/zeros.md", b"\0" * (4 << 20))
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("v/a.md", "fine")
        z.writestr("../../etc/cron.d/x", "evil")
    html = write_tree(tmp_path / "html", {"Page 0123456789abcdef0123456789abcdef.html": "<html/>"})
    for archive, code in ((bomb, "compression_ratio"), (evil, "path_traversal"), (html, "notion_html_export")):
        with pytest.raises(ValidationFailed) as excinfo:
            imports.run(ws.owner, archive)
        assert excinfo.value.field_errors[0].code == code
    assert svc.notes.list(ws.owner, limit=5).items == []
    with svc.store.read(ws.id) as tx:
        assert tx._x("SELECT count(*) FROM imports WHERE workspace_id = ?", (ws.id,)).fetchone()[0] == 0


def test_unreadable_files_are_ledger_rows(svc, ws, imports, tmp_path) -> None:
    root = write_tree(tmp_path / "v", {"ok.md": "fine", "bin.md": b"\x00\x01\x02"})
    os.mkfifo(root / "pipe.md")
    rows = by_item(ledger(imports, ws, imports.run(ws.owner, root)))
    assert {p: (r.status, r.reason) for p, r in rows.items()} == {
        "ok.md": ("imported", None), "bin.md": ("skipped", "parse_error"), "pipe.md": ("skipped", "parse_error")}


def test_who_may_import(svc, ws, imports, tmp_path) -> None:
    root = write_tree(tmp_path / "n", NOTION)
    reader = replace(ws.owner, scopes=frozenset({NOTES_READ}))
    with pytest.raises(InsufficientScope):
        imports.run(reader, root)
    writer = replace(ws.owner, scopes=frozenset({NOTES_READ, NOTES_WRITE}))
    with pytest.raises(InsufficientScope):
        imports.run(writer, root)  # its databases would become types: schema:write
    scoped = replace(ws.owner, note_ids=frozenset())
    with pytest.raises(OutOfScope):
        imports.run(scoped, root)
    assert svc.notes.list(ws.owner, limit=5).items == []


def test_entries_that_cannot_be_read_are_ledger_rows_in_a_zip_too(svc, ws, imports, tmp_path) -> None:
    from tests.importers.test_archive import mark_encrypted

    path = tmp_path / "odd.zip"
    deep = "/".join(["d"] * 300) + "/deep.md"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("v/ok.md", "fine")
        z.writestr(f"v/{deep}", "too deep to read")
        z.writestr("v/locked.md", "ciphertext")
    mark_encrypted(path, "v/locked.md")
    rows = by_item(ledger(imports, ws, imports.run(ws.owner, path)))
    assert {p[:8]: (r.status, r.reason) for p, r in rows.items()} == {
        "ok.md": ("imported", None), "d/d/d/d/": ("skipped", "path_too_long"), "locked.m": ("skipped", "encrypted_note")}
    assert "levels deep" in rows[deep].detail


def test_a_markdown_folder_of_title_named_notes_links_by_title_with_no_false_ledger_rows(svc, ws, imports,
                                                                                        tmp_path) -> None:
    """Files named by date, notes called by their frontmatter title, links written as titles: every
    link is an edge, so the ledger reports none of them (it reported each as unresolved)."""
    count = 60
    files = {f"journal/2024-01-{i:02d}-{i * 7919 % 1000:03d}.md":
             f"---\ntitle: Entry {i}\n---\n\nAfter [[Entry {(i + 1) % count}]] and [[entry {(i + 2) % count}]]; "
             f"not [[No such entry]].\n" for i in range(count)}
    view = imports.run(ws.owner, write_tree(tmp_path / "folder", files))
    assert view.source == "markdown" and view.status == "completed"
    links = [(r.item, r.target, r.reason) for r in ledger(imports, ws, view) if r.kind == "link"]
    assert sorted(links) == sorted((item, "No such entry", "unresolved_wikilink") for item in files)
    graph = GraphService(svc.store)
    first = note_titled(svc, ws, "Entry 0")
    outgoing = graph.links(ws.owner, first.id).outgoing
    assert {e.target.title for e in outgoing if e.target is not None} == {"Entry 1", "Entry 2"}
    assert len(outgoing) == 3  # and the forward link to the entry no note is called
