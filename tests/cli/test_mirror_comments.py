"""Comments and the Markdown mirror: a block comment and a text comment follow their block through
`fp pull` → edit the file (the block retyped around the commented words, another moved) →
`fp push`, and the pulled file holds no comment (comments are not note content); Fastpad's own
export (`fp pull`, comments beside each note) pushed into a new workspace restores the threads."""

from __future__ import annotations

import json
import shutil
import uuid

from tests.cli.conftest import CliServer, Fp, _init_server
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


def test_comments_round_trip_through_fastpads_own_export_into_a_new_workspace(
        fp: Fp, cli_server: CliServer, tmp_path) -> None:
    token = cli_server.person_token()
    note = _create(cli_server, token, NOTE.replace("Pushed plan", "Exported plan"))
    ids = {b["text"].split(",")[0]: b["id"] for b in note["blocks"]}
    url = f"/v1/notes/{note['id']}/comments"
    with cli_server.client(token) as client:
        def send(method: str, path: str, body: dict | None = None) -> dict:
            answer = client.request(method, path, json=body, headers={"idempotency-key": str(uuid.uuid4())})
            assert answer.status_code in (200, 201, 204), answer.text
            return answer.json() if answer.content else {}
        on_text = send("POST", url, {"body": "Which users?", "blockId": ids["Second"], "start": 13, "end": 27})
        send("POST", url, {"body": "The beta list.", "threadId": on_text["id"]})
        settled = send("POST", url, {"body": "Settled.", "blockId": ids["First"]})
        send("POST", f"/v1/comments/{settled['id']}/resolve")
        exported = client.get(url).json()["items"]

    mirror = tmp_path / "mirror"
    fp.json("pull", str(mirror), env={"FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": token})
    beside = _file_of(mirror, note["id"]).with_suffix(".comments.json")
    assert [t["id"] for t in json.loads(beside.read_text())["threads"]] == [t["id"] for t in exported]
    assert "Which users?" not in _file_of(mirror, note["id"]).read_text()  # never in the Markdown

    fresh = _init_server(tmp_path / "second")
    fresh.start()
    try:
        other = fresh.person_token()
        there = {"FASTPAD_URL": fresh.base_url, "FASTPAD_TOKEN": other}
        copy = tmp_path / "copy"
        fp.json("pull", str(copy), env=there)
        for file in mirror.glob(f"*{note['id']}*"):
            shutil.copy(file, copy / file.name)
        pushed = fp.json("push", str(copy), env=there)["pushed"]
        assert [p["comments_restored"] for p in pushed] == [3]
        with fresh.client(other) as client:
            arrived = client.get(f"/v1/notes/{pushed[0]['note_id']}/comments").json()["items"]
    finally:
        fresh.stop()

    def shape(threads: list[dict]) -> list[tuple]:
        return [(t["block_id"], t["anchor"], t["quote"], t["range"], t["resolved"],
                 [c["body"] for c in t["comments"]]) for t in threads]
    assert shape(arrived) == shape(exported)
