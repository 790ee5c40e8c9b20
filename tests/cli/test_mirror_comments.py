"""Comments and the Markdown mirror: a block comment and a text comment follow their block through
`fp pull` → edit the file (the block retyped around the commented words, moved, a neighbour
deleted) → `fp push`, and the pulled file holds no comment (comments are not note content)."""

from __future__ import annotations

import uuid

from tests.cli.conftest import CliServer, Fp
from tests.cli.test_mirror import _create, _file_of, _server_markdown

NOTE = """\
---
title: Pushed plan
---

# Pushed plan

First, write the announcement.

Second, tell the beta users.

Third, flip the switch.
"""


def test_comments_follow_their_blocks_through_fp_push(fp: Fp, cli_server: CliServer, tmp_path) -> None:
    token = cli_server.person_token()
    person = {"FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": token}
    note = _create(cli_server, token, NOTE)
    ids = {b["text"].split(",")[0]: b["id"] for b in note["blocks"]}
    url = f"/v1/notes/{note['id']}/comments"
    with cli_server.client(token) as client:
        def comment(body: dict) -> dict:
            made = client.post(url, json=body, headers={"idempotency-key": str(uuid.uuid4())})
            assert made.status_code == 201, made.text
            return made.json()
        on_block = comment({"body": "Who writes it?", "blockId": ids["First"]})
        on_text = comment({"body": "Which users?", "blockId": ids["Second"], "start": 13, "end": 27})
    assert on_text["quote"] == "the beta users"

    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person)
    path = _file_of(mirror, note["id"])
    pulled = path.read_text()
    assert "Who writes it?" not in pulled and "Which users?" not in pulled
    edited = (pulled
              .replace("First, write the announcement.", "First, draft and write the announcement.")
              .replace("Second, tell the beta users.", "Second, tell all the beta users today."))
    third = next(line for line in edited.splitlines() if line.startswith("Third"))
    first = next(line for line in edited.splitlines() if line.startswith("First"))
    edited = edited.replace(third + "\n", "").replace(first, third + "\n\n" + first)  # Third moves up
    path.write_text(edited)
    assert fp.json("push", str(mirror), env=person)["pushed"][0]["kind"] == "update"

    with cli_server.client(token) as client:
        blocks = client.get(f"/v1/notes/{note['id']}").json()["blocks"]
        threads = {t["id"]: t for t in client.get(url).json()["items"]}
    texts = {b["id"]: b["text"] for b in blocks}
    assert [b["id"] for b in blocks][1] == ids["Third"]  # the move landed
    block_thread, text_thread = threads[on_block["id"]], threads[on_text["id"]]
    assert (block_thread["block_id"], block_thread["on_deleted"]) == (ids["First"], False)
    assert texts[ids["First"]] == "First, draft and write the announcement."
    span = text_thread["range"]
    assert texts[ids["Second"]][span["start"]:span["end"]] == "the beta users" and not text_thread["on_deleted"]
    assert "Who writes it?" not in _server_markdown(cli_server, token, note["id"])
