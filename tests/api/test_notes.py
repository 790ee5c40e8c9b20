"""/v1/notes: JSON and Markdown create, get in both representations, keyset lists, lifecycle."""

from __future__ import annotations

from fastpad.notes import is_ulid, parse_markdown

from tests.api.helpers import assert_problem

MARKDOWN = """\
---
title: Round trip
types: [Test]
---

# Round trip

A paragraph with *emphasis*.

- one
- two
"""


def test_create_from_json_and_get(owner, server):
    created = owner.post(
        "/v1/notes",
        json={"title": "JSON note", "blocks": [{"type": "paragraph", "text": "hello"}], "types": ["Test"]},
    )
    assert created.status_code == 201, created.text
    note = created.json()
    assert is_ulid(note["id"]) and created.headers["location"] == f"/v1/notes/{note['id']}"
    assert note["title"] == "JSON note" and note["frontier"].startswith("fp1:")
    assert [b["text"] for b in note["blocks"]] == ["hello"]
    assert note["created_at"][-6] in "+-" or note["created_at"].endswith("Z"), "ISO 8601 with offset"
    fetched = owner.get(f"/v1/notes/{note['id']}")
    assert fetched.status_code == 200 and fetched.json()["id"] == note["id"]


def test_markdown_create_and_get_round_trip(owner):
    created = owner.post("/v1/notes", content=MARKDOWN.encode(), headers={"content-type": "text/markdown"})
    assert created.status_code == 201, created.text
    note = created.json()
    assert note["title"] == "Round trip"
    got = owner.get(f"/v1/notes/{note['id']}", headers={"accept": "text/markdown"})
    assert got.status_code == 200 and got.headers["content-type"].startswith("text/markdown")
    parsed = parse_markdown(got.text)
    assert parsed.meta.title == "Round trip"
    assert [(b.type, b.text) for b in parsed.blocks] == [(b["type"], b["text"]) for b in note["blocks"]]
    assert [b.id for b in parsed.blocks] == [b["id"] for b in note["blocks"]], "anchors carry the block ids"
    assert "A paragraph with *emphasis*." in got.text
    # The canonical Markdown is a fixed point: creating from it gives the same text back, but for
    # the anchors, which this note holds already — the copy's blocks get ids of their own.
    again = owner.post("/v1/notes", content=got.text.encode(), headers={"content-type": "text/markdown"}).json()
    again_text = owner.get(f"/v1/notes/{again['id']}", headers={"accept": "text/markdown"}).text
    for old_id, fresh_id in again["reassigned_block_ids"].items():
        again_text = again_text.replace(fresh_id, old_id)
    assert len(again["reassigned_block_ids"]) == len(note["blocks"]) and again_text == got.text


def test_a_note_without_a_frontmatter_title_takes_its_first_level_one_heading(owner, server):
    text = "Intro line.\n\n## Not this one\n\n# The real title\n\nBody.\n"
    as_markdown = owner.post("/v1/notes", content=text.encode(), headers={"content-type": "text/markdown"}).json()
    as_json = owner.post("/v1/notes", json={"markdown": text}).json()
    as_blocks = owner.post("/v1/notes", json={"blocks": [
        {"type": "heading", "text": " From blocks ", "attrs": {"level": 1}}, {"type": "paragraph", "text": "x"}]}).json()
    assert (as_markdown["title"], as_json["title"], as_blocks["title"]) == ("The real title", "The real title",
                                                                            "From blocks")
    # The heading stays a block: the title is added to the note, nothing is taken from its text.
    assert [b["text"] for b in as_markdown["blocks"]] == ["Intro line.", "Not this one", "The real title", "Body."]
    named = owner.post("/v1/notes", json={"title": "Given", "markdown": "# Heading\n"}).json()
    front = owner.post("/v1/notes", json={"markdown": "---\ntitle: Front\n---\n\n# Heading\n"}).json()
    lower = owner.post("/v1/notes", json={"markdown": "## Section only\n"}).json()
    assert (named["title"], front["title"], lower["title"]) == ("Given", "Front", "")
    # Its canonical Markdown is still a fixed point: read back, it names the same title and blocks.
    got = owner.get(f"/v1/notes/{as_markdown['id']}", headers={"accept": "text/markdown"}).text
    parsed = parse_markdown(got)
    assert parsed.meta.title == "The real title" and got.startswith("---\ntitle: The real title\n---\n")
    again = owner.post("/v1/notes", content=got.encode(), headers={"content-type": "text/markdown"}).json()
    again_text = owner.get(f"/v1/notes/{again['id']}", headers={"accept": "text/markdown"}).text
    for old_id, fresh_id in again["reassigned_block_ids"].items():
        again_text = again_text.replace(fresh_id, old_id)
    assert again_text == got


def test_list_is_keyset_paginated(owner):
    made = {owner.post("/v1/notes", json={"title": f"page {i}"}).json()["id"] for i in range(3)}
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = owner.get("/v1/notes", params=params).json()
        assert len(page["items"]) <= 2
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)), "no note twice"
    assert made <= set(seen)


def test_archive_trash_and_restore(owner, server):
    note_id = owner.post("/v1/notes", json={"title": "lifecycle"}).json()["id"]

    def listed(**flags) -> bool:
        ids, cursor = [], None
        while True:
            page = owner.get("/v1/notes", params={"limit": 200, **flags, **({"cursor": cursor} if cursor else {})}).json()
            ids += [i["id"] for i in page["items"]]
            if not (cursor := page["next_cursor"]):
                return note_id in ids

    assert listed()
    archived = owner.post(f"/v1/notes/{note_id}/archive")
    assert archived.status_code == 200 and archived.json()["archived"] is True
    assert not listed() and listed(include_archived="true")
    assert owner.post(f"/v1/notes/{note_id}/unarchive").json()["archived"] is False
    assert listed()
    trashed = owner.post(f"/v1/notes/{note_id}/trash")
    assert trashed.status_code == 200 and trashed.json()["trashed"] is True
    assert not listed() and listed(include_trashed="true")
    assert owner.post(f"/v1/notes/{note_id}/restore").json()["trashed"] is False
    assert listed()


def test_identifiers_and_media_types_are_validated(owner, server):
    bad = owner.get("/v1/notes/not-a-ulid")
    body = assert_problem(bad, 422, "validation-failed", server.base_url)
    assert body["field_errors"][0]["code"] == "ulid" and "note_id" in body["field_errors"][0]["field"]
    assert_problem(owner.get("/v1/notes/01ARZ3NDEKTSV4RRFFQ69G5FAV"), 404, "not-found", server.base_url)
    note_id = owner.post("/v1/notes", json={"title": "media"}).json()["id"]
    assert_problem(owner.get(f"/v1/notes/{note_id}", headers={"accept": "image/png"}), 406, "not-acceptable", server.base_url)
    plain = owner.post("/v1/notes", content=b"hi", headers={"content-type": "text/plain"})
    assert_problem(plain, 415, "unsupported-media-type", server.base_url)
    unknown_field = owner.post("/v1/notes", json={"title": "x", "colour": "red"})
    body = assert_problem(unknown_field, 422, "validation-failed", server.base_url)
    assert body["field_errors"][0]["field"] == "colour"
    broken = owner.post("/v1/notes", content=b"{not json", headers={"content-type": "application/json"})
    assert assert_problem(broken, 422, "validation-failed", server.base_url)["field_errors"][0]["code"] == "json_invalid"


def test_batch_create_reports_every_item_in_order(owner, server) -> None:
    response = owner.post("/v1/notes:batch", json={"items": [
        {"title": "first", "blocks": [{"text": "one"}]},
        {"title": "bad anchor", "markdown": "text {#not-a-ulid}\n"},
        {"title": "third", "markdown": "# Third\n\nbody\n"},
        {"title": "both", "markdown": "x\n", "blocks": [{"text": "y"}]},
    ]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["created"], body["refused"]) == (2, 2)
    assert [r["index"] for r in body["results"]] == [0, 1, 2, 3]
    assert [r["ok"] for r in body["results"]] == [True, False, True, False]
    assert body["results"][1]["problem"]["type"] == f"{server.base_url}/errors/validation-failed"
    assert body["results"][1]["problem"]["field_errors"][0]["code"] == "anchor_not_ulid"
    assert body["results"][3]["problem"]["field_errors"][0]["code"] == "exclusive"
    third = owner.get(f"/v1/notes/{body['results'][2]['note']['id']}", headers={"accept": "text/markdown"})
    assert "# Third {#" in third.text


def test_batch_create_is_bounded(owner, server) -> None:
    response = owner.post("/v1/notes:batch", json={"items": [{"title": str(i)} for i in range(101)]})
    assert response.status_code == 422
