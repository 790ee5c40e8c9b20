"""Block ids are unique across the workspace: a create that carries another note's anchors gets
fresh ids for those blocks and says which (``reassigned_block_ids``); a note's own ids stay its own."""

from __future__ import annotations

import base64

from fastpad.notes import Block, NoteDocument, new_id, parse_markdown

from tests.api.helpers import assert_problem, whole_ledger
from tests.api.test_imports import ZIP, finished, zipped

ORIGINAL = """\
---
title: Retrieval design
---

# Retrieval design

Four arms, fused by weighted RRF.
"""


def _markdown_note(owner, markdown: str) -> dict:
    created = owner.post("/v1/notes", content=markdown.encode(), headers={"content-type": "text/markdown"})
    assert created.status_code == 201, created.text
    return created.json()


def _markdown(owner, note_id: str) -> str:
    return owner.get(f"/v1/notes/{note_id}", headers={"accept": "text/markdown"}).text


def test_pasting_another_notes_markdown_mints_new_ids_and_says_which(owner) -> None:
    original = _markdown_note(owner, ORIGINAL)
    assert original["reassigned_block_ids"] == {}
    original_ids = [b["id"] for b in original["blocks"]]
    fresh_anchor = new_id()  # an anchor no note holds is kept as it is
    pasted = _markdown(owner, original["id"]) + f"\nA paragraph of its own. {{#{fresh_anchor}}}\n"

    copy = _markdown_note(owner, pasted)

    copy_ids = [b["id"] for b in copy["blocks"]]
    assert copy["reassigned_block_ids"] == dict(zip(original_ids, copy_ids[:2]))
    assert not set(copy_ids) & set(original_ids) and copy_ids[2] == fresh_anchor
    assert [b.id for b in parse_markdown(_markdown(owner, copy["id"])).blocks] == copy_ids
    assert [b["id"] for b in owner.get(f"/v1/notes/{original['id']}").json()["blocks"]] == original_ids


def test_block_ids_given_as_json_are_reassigned_alike_in_one_create_and_in_a_batch(owner) -> None:
    original = owner.post("/v1/notes", json={"title": "ids", "blocks": [{"text": "one"}, {"text": "two"}]}).json()
    given = [{"id": b["id"], "text": b["text"]} for b in original["blocks"]]
    single = owner.post("/v1/notes", json={"title": "copy", "blocks": given}).json()
    assert set(single["reassigned_block_ids"]) == {b["id"] for b in original["blocks"]}

    kept = new_id()
    batch = owner.post("/v1/notes:batch", json={"items": [
        {"title": "copy again", "blocks": given},
        {"title": "own id", "blocks": [{"id": kept, "text": "mine"}]},
        {"title": "own id, copied in the same batch", "blocks": [{"id": kept, "text": "mine too"}]},
    ]}).json()
    first, second, third = (r["note"] for r in batch["results"])
    assert set(first["reassigned_block_ids"]) == {b["id"] for b in original["blocks"]}
    assert second["reassigned_block_ids"] == {} and second["blocks"][0]["id"] == kept
    assert list(third["reassigned_block_ids"]) == [kept] and third["blocks"][0]["id"] != kept


def test_an_update_keeps_the_notes_own_ids_and_refuses_another_notes(owner, server) -> None:
    original = owner.post("/v1/notes", json={"title": "elsewhere", "blocks": [{"text": "theirs"}]}).json()
    note = owner.post("/v1/notes", json={"title": "mine", "blocks": [{"text": "before"}]}).json()
    own_id = note["blocks"][0]["id"]
    doc, frontier = _updates(owner, note["id"])
    doc.replace_text(own_id, "after")
    edited = _send(owner, note["id"], doc.export_updates(frontier), frontier)
    assert edited.status_code == 200, edited.text
    assert [b["id"] for b in owner.get(f"/v1/notes/{note['id']}").json()["blocks"]] == [own_id]

    doc, frontier = _updates(owner, note["id"])
    foreign_id = original["blocks"][0]["id"]
    doc.insert_after(own_id, Block(foreign_id, "paragraph", "theirs, copied with its id"))
    refused = _send(owner, note["id"], doc.export_updates(frontier), frontier)
    body = assert_problem(refused, 422, "validation-failed", server.base_url)
    assert body["field_errors"][0]["code"] == "block_identity" and foreign_id in body["field_errors"][0]["message"]
    assert [b["id"] for b in owner.get(f"/v1/notes/{note['id']}").json()["blocks"]] == [own_id]


def test_capture_and_a_markdown_import_of_another_notes_markdown_never_reuse_its_anchors(owner) -> None:
    original = _markdown_note(owner, ORIGINAL)
    pasted = _markdown(owner, original["id"])
    original_ids = {b["id"] for b in original["blocks"]}

    captured = owner.post("/v1/capture", json={"text": pasted, "idempotencyKey": f"capture-{original['id']}"}).json()
    upload = owner.post("/v1/imports", params={"name": "copies.zip"}, content=zipped({"Copy.md": pasted}),
                        headers={**ZIP, "idempotency-key": f"import-{original['id']}"})
    assert upload.status_code == 202, upload.text
    imported = upload.json()
    assert finished(owner, imported["id"])["status"] == "completed"
    (row,) = [r for r in whole_ledger(owner, imported["id"]) if r["item"] == "Copy.md"]

    for copy_id in (captured["note_id"], row["note_id"]):
        copy = owner.get(f"/v1/notes/{copy_id}").json()
        assert [b["text"] for b in copy["blocks"]] == [b["text"] for b in original["blocks"]]
        assert not {b["id"] for b in copy["blocks"]} & original_ids


def test_the_openapi_document_names_the_reassignment(server) -> None:
    with server.client() as anonymous:
        document = anonymous.get("/openapi.json").json()
    created = document["paths"]["/v1/notes"]["post"]["responses"]["201"]["content"]["application/json"]["schema"]
    schema = document["components"]["schemas"][created["$ref"].rsplit("/", 1)[-1]]
    assert "reassigned_block_ids" in schema["required"]
    assert schema["properties"]["reassigned_block_ids"]["additionalProperties"] == {"type": "string"}


def _updates(owner, note_id: str) -> tuple[NoteDocument, str]:
    """The note as an editor acting for a person copies it, and the frontier of that copy."""
    response = owner.get(f"/v1/notes/{note_id}/updates")
    assert response.status_code == 200, response.text
    return NoteDocument.load(response.content), response.headers["x-fastpad-frontier"]


def _send(owner, note_id: str, ops: bytes, frontier: str):
    return owner.post(f"/v1/notes/{note_id}/ops", json={
        "ops": base64.b64encode(ops).decode(), "peerId": "7", "expectedFrontier": frontier,
    })
