"""Bad input that used to escape its type, against a real server on both backends: a title past the
published maximum (PostgreSQL answered an untyped 500 past ~2,700 bytes: its btree index on titles),
and a NUL in a search query (PostgreSQL dropped the lexical arm and the answer echoed its error).
"""

from __future__ import annotations

import base64

import httpx

from fastpad.notes import NoteDocument, NoteMeta
from fastpad.notes.blocks import MAX_TITLE_CHARS
from tests.api.helpers import assert_problem
from tests.hostile.conftest import Hostile

WIDE = "\U0001f600"  # four UTF-8 bytes: the widest character a title can hold


def _title_refused(hostile: Hostile, answer: httpx.Response) -> None:
    problem = assert_problem(answer, 422, "validation-failed", hostile.base_url)
    assert [e["field"] for e in problem["field_errors"]] == ["title"], problem


def test_a_title_up_to_the_maximum_is_kept_and_one_past_it_is_a_typed_422_however_it_arrives(hostile: Hostile, owner):
    longest = WIDE * MAX_TITLE_CHARS  # 2,000 bytes: within PostgreSQL's index row on every backend
    created = owner.post("/v1/notes", json={"title": longest, "markdown": "body"})
    assert created.status_code == 201, created.text
    note = created.json()
    assert owner.get(f"/v1/notes/{note['id']}").json()["title"] == longest

    for too_long in (WIDE * (MAX_TITLE_CHARS + 1), "t" * 3_000, "t" * 100_000):
        _title_refused(hostile, owner.post("/v1/notes", json={"title": too_long, "markdown": "body"}))
        _title_refused(hostile, owner.post("/v1/notes", content=f"---\ntitle: {too_long}\n---\n\nbody\n".encode(),
                                           headers={"content-type": "text/markdown"}))
        _title_refused(hostile, owner.post(f"/v1/notes/{note['id']}/rename", json={"title": too_long}))
    # A CRDT update that sets the note's title is held to the same limit.
    updates = owner.get(f"/v1/notes/{note['id']}/updates")
    doc, frontier = NoteDocument.load(updates.content), updates.headers["x-fastpad-frontier"]
    doc.set_meta(NoteMeta("t" * (MAX_TITLE_CHARS + 1)))
    _title_refused(hostile, owner.post(f"/v1/notes/{note['id']}/ops", json={
        "ops": base64.b64encode(doc.export_updates(frontier)).decode(), "expectedFrontier": frontier}))
    assert owner.get(f"/v1/notes/{note['id']}").json()["title"] == longest  # nothing half-written


def test_a_title_taken_from_a_long_heading_is_cut_to_the_maximum(hostile: Hostile, owner):
    heading = " ".join(["word"] * 1_000)
    created = owner.post("/v1/notes", content=f"# {heading}\n\nbody\n".encode(), headers={"content-type": "text/markdown"})
    assert created.status_code == 201, created.text
    title = created.json()["title"]
    assert len(title) <= MAX_TITLE_CHARS and title.endswith("…") and heading.startswith(title[:-1])
    assert created.json()["blocks"][0]["text"] == heading  # the heading itself stays whole


def test_a_nul_in_a_search_query_is_a_typed_422_that_echoes_no_database_text(hostile: Hostile, owner):
    for answer in (owner.get("/v1/search", params={"q": "budget\x00review"}),
                   owner.post("/v1/search", json={"q": "budget\x00review"})):
        problem = assert_problem(answer, 422, "validation-failed", hostile.base_url)
        assert [e["field"] for e in problem["field_errors"]] == ["q"], problem
        assert "0x00" not in answer.text and "psycopg" not in answer.text.lower()
