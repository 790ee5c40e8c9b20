"""The Markdown mirror: pull → edit, move, delete and add paragraphs in files → push --dry-run shows exactly
those → push → the server holds them; pull never overwrites local edits; a credential never names a file."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest

from tests.api.conftest import OWNER_EMAIL
from tests.cli.conftest import CliServer, Fp

PLAN = """\
---
title: Launch plan
types: [Project]
---

# Launch plan

First, write the announcement.

Second, tell the beta users.

Third, flip the switch.

Last, celebrate.
"""


@pytest.fixture
def person(cli_server: CliServer) -> dict[str, str]:
    return {"FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": cli_server.person_token()}


def _create(server: CliServer, token: str, markdown: str) -> dict:
    with server.client(token) as client:
        response = client.post("/v1/notes", content=markdown, headers={"content-type": "text/markdown"})
        assert response.status_code == 201, response.text
        return response.json()


def _file_of(directory: Path, note_id: str) -> Path:
    (path,) = directory.glob(f"*-{note_id}.md")
    return path


def _server_markdown(server: CliServer, token: str, note_id: str) -> str:
    with server.client(token) as client:
        return client.get(f"/v1/notes/{note_id}", headers={"accept": "text/markdown"}).text


def test_pull_edit_push_round_trip(fp: Fp, cli_server, person, tmp_path):
    note = _create(cli_server, person["FASTPAD_TOKEN"], PLAN)
    ids = {b["text"].split(",")[0]: b["id"] for b in note["blocks"]}
    mirror = tmp_path / "notes"
    pulled = fp.json("pull", str(mirror), env=person)
    path = _file_of(mirror, note["id"])
    assert path.name == f"launch-plan-{note['id']}.md" and path.name in pulled["fetched"]
    assert path.read_text() == _server_markdown(cli_server, person["FASTPAD_TOKEN"], note["id"])

    text = path.read_text()
    lines = {key: next(line for line in text.splitlines() if f"{{#{block_id}}}" in line)
             for key, block_id in ids.items()}
    edited = (text
              .replace(lines["First"], lines["First"].replace("write the announcement", "write and proofread it"))
              .replace(lines["Second"] + "\n\n", "")                       # delete
              .replace(lines["Last"], "A new paragraph, typed here.\n\n" + lines["Last"]))  # add
    edited = edited.replace(lines["Third"] + "\n\n", "") + "\n" + lines["Third"] + "\n"       # move to the end
    path.write_text(edited)

    plan = fp.json("push", str(mirror), "--dry-run", env={"FASTPAD_URL": "http://127.0.0.1:9"})  # offline
    (item,) = plan["files"]
    assert item["note_id"] == note["id"] and item["action"] == "update"
    changes = {(c["kind"], c.get("text"), c.get("old_text")) for c in item["changes"]}
    assert changes == {
        ("delete", None, "Second, tell the beta users."),
        ("edit", "First, write and proofread it.", "First, write the announcement."),
        ("insert", "A new paragraph, typed here.", None),
        ("move", None, None),
    }, item["changes"]
    moved = next(c for c in item["changes"] if c["kind"] == "move")
    insert = next(c for c in item["changes"] if c["kind"] == "insert")
    # Third and Last swapped: either one is the block that moved (the other stays put).
    assert (moved["block_id"], moved["after_id"]) in {(ids["Third"], ids["Last"]), (ids["Last"], insert["block_id"])}

    pushed = fp.json("push", str(mirror), env=person)
    assert pushed["pushed"] == [{"file": path.name, "note_id": note["id"], "kind": "update"}]
    server = _server_markdown(cli_server, person["FASTPAD_TOKEN"], note["id"])
    assert path.read_text() == server, "the file is rewritten in canonical form: the new paragraph has its anchor"
    with cli_server.client(person["FASTPAD_TOKEN"]) as client:
        blocks = client.get(f"/v1/notes/{note['id']}").json()["blocks"]
    assert [b["text"] for b in blocks] == ["Launch plan", "First, write and proofread it.",
                                           "A new paragraph, typed here.", "Last, celebrate.", "Third, flip the switch."]
    kept = {b["text"]: b["id"] for b in blocks}
    assert kept["First, write and proofread it."] == ids["First"] and kept["Third, flip the switch."] == ids["Third"]
    assert ids["Second"] not in kept.values()
    assert fp.json("push", str(mirror), env=person)["pushed"] == [], "nothing left to push"


def test_a_new_file_becomes_a_note_and_gets_its_canonical_name(fp, cli_server, person, tmp_path):
    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person)
    (mirror / "idea.md").write_text("---\ntitle: A fresh idea\n---\n\nWrite it down.\n\n- then\n- act\n")
    assert fp.json("push", str(mirror), "--dry-run", env=person)["files"] == [
        {"file": "idea.md", "action": "create", "note_id": None, "title": "A fresh idea", "blocks": 3}]
    (created,) = fp.json("push", str(mirror), env=person)["pushed"]
    assert created["kind"] == "create" and not (mirror / "idea.md").exists()
    path = _file_of(mirror, created["note_id"])
    assert path.name.startswith("a-fresh-idea-")
    assert path.read_text() == _server_markdown(cli_server, person["FASTPAD_TOKEN"], created["note_id"])


def test_a_new_file_without_a_frontmatter_title_is_named_by_its_heading_then_its_file(fp, cli_server, person,
                                                                                         tmp_path):
    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person)
    (mirror / "scratch.md").write_text("# Weekly review\n\nWhat went well.\n")
    (mirror / "loose-thought.md").write_text("No heading here.\n")
    planned = {f["file"]: f["title"] for f in fp.json("push", str(mirror), "--dry-run", env=person)["files"]}
    assert planned == {"scratch.md": "Weekly review", "loose-thought.md": "loose-thought"}
    pushed = fp.json("push", str(mirror), env=person)["pushed"]
    names = sorted(p["file"].rsplit("-", 1)[0] for p in pushed)
    assert names == ["loose-thought", "weekly-review"], "renamed by their titles, not untitled-<id>.md"
    (review,) = [p for p in pushed if p["file"].startswith("weekly-review-")]
    assert _file_of(mirror, review["note_id"]).read_text() == _server_markdown(
        cli_server, person["FASTPAD_TOKEN"], review["note_id"])


def test_an_agents_new_file_becomes_a_proposal_not_a_note(fp, cli_server, tmp_path):
    agent = {"FASTPAD_URL": cli_server.base_url,
             "FASTPAD_TOKEN": cli_server.mint("notes:read,notes:write,export", "--label", "tests: cli agent")}
    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=agent)
    (mirror / "draft.md").write_text("---\ntitle: The agent's draft\n---\n\nSuggested by a bot.\n")
    pushed = fp.json("push", str(mirror), env=agent)
    assert pushed["pushed"] == [] and [p["file"] for p in pushed["proposed"]] == ["draft.md"]
    [proposal] = pushed["proposed"]
    assert proposal["review_url"].endswith(f"/review/{proposal['turn_id']}")
    assert (mirror / "draft.md").exists()  # nothing came back to write: the note exists once a person accepts it
    owner = cli_server.person_token()
    with cli_server.client(owner) as client:
        turn = client.get(f"/v1/turns/{proposal['turn_id']}").json()
        assert (turn["status"], turn["new_note"]["title"]) == ("pending", "The agent's draft")
        assert client.get(f"/v1/notes/{turn['note_id']}").status_code == 404


def test_a_copied_file_becomes_a_note_of_its_own_ids_and_the_push_says_which_it_gave(fp, cli_server, person,
                                                                                      tmp_path):
    note = _create(cli_server, person["FASTPAD_TOKEN"], PLAN)
    original_ids = [b["id"] for b in note["blocks"]]
    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person)
    copied = _file_of(mirror, note["id"]).read_text().replace("title: Launch plan", "title: Launch plan, again")
    (mirror / "copy.md").write_text(copied)

    (created,) = fp.json("push", str(mirror), env=person)["pushed"]

    assert created["kind"] == "create" and created["note_id"] != note["id"]
    with cli_server.client(person["FASTPAD_TOKEN"]) as client:
        copy_ids = [b["id"] for b in client.get(f"/v1/notes/{created['note_id']}").json()["blocks"]]
        assert [b["id"] for b in client.get(f"/v1/notes/{note['id']}").json()["blocks"]] == original_ids
    assert created["reassigned_block_ids"] == dict(zip(original_ids, copy_ids))
    rewritten = _file_of(mirror, created["note_id"]).read_text()
    assert all(f"{{#{block_id}}}" in rewritten for block_id in copy_ids)
    assert not any(block_id in rewritten for block_id in original_ids)


def test_pull_refuses_to_overwrite_local_edits_unless_forced(fp, cli_server, person, tmp_path):
    note = _create(cli_server, person["FASTPAD_TOKEN"], "---\ntitle: Shared\n---\n\nOriginal text.\n")
    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person)
    path = _file_of(mirror, note["id"])
    path.write_text(path.read_text().replace("Original text.", "My local edit."))
    assert fp("pull", str(mirror), env=person).returncode == 0, "unchanged on the server: the edit is left alone"
    assert "My local edit." in path.read_text()

    elsewhere = tmp_path / "laptop"  # the note moves on the server: an edit pushed from another mirror
    fp.json("pull", str(elsewhere), env=person)
    other = _file_of(elsewhere, note["id"])
    other.write_text(other.read_text().replace("Original text.", "Edited on the laptop."))
    assert fp.json("push", str(elsewhere), env=person)["pushed"]
    refused = fp("pull", str(mirror), "--json", env=person)
    assert refused.returncode == 5 and refused.stdout == ""
    problem = json.loads(refused.stderr)
    assert problem["error"] == "conflict" and path.name in problem["files"]
    assert "My local edit." in path.read_text(), "nothing was written"

    stale = fp("push", str(mirror), "--json", env=person)
    assert stale.returncode == 5 and json.loads(stale.stderr)["error"] == "stale-frontier"
    assert "pull" in json.loads(stale.stderr)["next"]

    assert fp("pull", str(mirror), "--force", env=person).returncode == 0
    assert "Edited on the laptop." in path.read_text()


def test_a_title_holding_a_token_never_becomes_a_file_name(fp, cli_server, person, tmp_path):
    secret = cli_server.mint("notes:read", "--label", "pasted into a title")
    note = _create(cli_server, person["FASTPAD_TOKEN"],
                   f"---\ntitle: 'deploy with {secret} via https://evil.example.com/x'\n---\n\nOops.\n")
    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person)
    path = _file_of(mirror, note["id"])
    names = " ".join(p.name for p in mirror.rglob("*"))
    assert secret not in names and secret[len("fpk_live_"):][:12] not in names
    assert "evil.example.com" not in path.name and "redacted" in path.name
    assert re.fullmatch(r"[\w-]+-[0-9A-Z]{26}\.md", path.name)
    assert secret in path.read_text(), "redaction is for the name; the note itself says what was written"


def test_a_push_whose_answer_was_lost_is_replayed_and_acknowledged_not_applied_twice(fp, cli_server, person, tmp_path):
    from fastpad.cli.client import Api
    from fastpad.cli.mirror.manifest import Mirror
    from fastpad.cli.mirror.push import _prepare, plan_push
    from fastpad.cli.profiles import Target

    note = _create(cli_server, person["FASTPAD_TOKEN"], "---\ntitle: Journal\n---\n\nOne line.\n")
    mirror_dir = tmp_path / "notes"
    fp.json("pull", str(mirror_dir), env=person)
    path = _file_of(mirror_dir, note["id"])
    path.write_text(path.read_text() + "\nAdded once.\n")
    # What a push does before the network fails: the request is journalled, then sent — and the answer is lost.
    mirror = Mirror(mirror_dir)
    api = Api(Target(cli_server.base_url, person["FASTPAD_TOKEN"], None))
    (plan,) = [p for p in plan_push(mirror) if p.action == "update"]
    record = _prepare(api, mirror, plan)
    mirror.journal_add(record)
    api.request("POST", f"/v1/notes/{note['id']}/ops", json=record["body"])

    dry = fp.json("push", str(mirror_dir), "--dry-run", env=person)
    assert dry["unanswered"] == [{"file": path.name, "kind": "update"}]
    replayed = fp.json("push", str(mirror_dir), env=person)
    assert replayed["pushed"] == [{"file": path.name, "note_id": note["id"], "kind": "update"}]
    assert not (mirror_dir / ".fastpad" / "pending").exists() or not any((mirror_dir / ".fastpad" / "pending").iterdir())
    server = _server_markdown(cli_server, person["FASTPAD_TOKEN"], note["id"])
    assert server.count("Added once.") == 1 and path.read_text() == server
    assert fp.json("push", str(mirror_dir), env=person)["pushed"] == []


def test_an_embedded_view_is_pulled_as_its_definition_and_link_and_pushed_back_as_its_id(
        fp: Fp, cli_server, person, tmp_path):
    schemer = cli_server.mint("notes:read,notes:write,schema:write", "--person", OWNER_EMAIL, "--label", "tests: views")
    with cli_server.client(schemer) as client:
        kind = f"Shelf{uuid.uuid4().hex[:6]}"
        assert client.post("/v1/types", json={"name": kind, "properties": [
            {"name": "status", "kind": "select", "options": ["to read", "read"]}]}).status_code == 201
        book = client.post("/v1/notes", json={"title": "Middlemarch", "types": [kind],
                                              "properties": {f"{kind}.status": "to read"}}).json()
        view = client.post("/v1/collections", json={"name": "Reading list", "layout": "board", "query": {
            "type": kind, "group_by": f"{kind}.status"}}).json()
    note = _create(cli_server, person["FASTPAD_TOKEN"], f"# Reading\n\n{view['embed_markdown']}\n\nMore later.\n")
    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person)
    text = _file_of(mirror, note["id"]).read_text()
    fence = re.search(r"```fastpad-collection[^\n]*\n(.*?)\n```", text, re.S)
    assert fence is not None, text
    lines = fence.group(1).split("\n")
    assert lines[0] == view["id"]
    assert f"# Reading list: a board of #{kind}" in lines
    assert f"# query: {json.dumps({'group_by': f'{kind}.status', 'type': kind}, sort_keys=True)}" in lines
    assert f"# open: {cli_server.base_url}/collections/{view['id']}" in lines
    assert "Middlemarch" not in text and book["id"] not in text  # never its rows

    # An edit elsewhere in the file is pushed; the view's lines are description, never sent.
    path = _file_of(mirror, note["id"])
    path.write_text(text.replace("More later.", "More later, after the holidays."))
    plan = fp.json("push", str(mirror), "--dry-run", env=person)
    assert [(c["kind"], c.get("text")) for c in plan["files"][0]["changes"]] == [
        ("edit", "More later, after the holidays.")]
    fp.json("push", str(mirror), env=person)
    with cli_server.client(person["FASTPAD_TOKEN"]) as client:
        blocks = client.get(f"/v1/notes/{note['id']}").json()["blocks"]
    assert [b["text"] for b in blocks] == ["Reading", view["id"], "More later, after the holidays."]
    assert "# open: " in path.read_text()  # the rewritten file keeps its description
    again = fp.json("push", str(mirror), "--dry-run", env=person)["files"]
    assert not [f for f in again if f["action"] != "unchanged"], again  # and nothing left to send


def test_a_pushed_frontmatter_value_is_held_to_its_propertys_kind_and_a_refusal_changes_nothing(
        fp, cli_server, person, tmp_path):
    schema = cli_server.mint("notes:read,notes:write,schema:write", "--person", OWNER_EMAIL, "--label", "tests: schema")
    name = f"Task{uuid.uuid4().hex[:6]}"
    with cli_server.client(schema) as client:
        assert client.post("/v1/types", json={"name": name, "properties": [
            {"name": "status", "kind": "select", "options": ["todo", "done"]}]}).status_code == 201
    note = _create(cli_server, person["FASTPAD_TOKEN"],
                   f"---\ntitle: Paint the shed\ntypes: [{name}]\n{name}.status: todo\n---\n\nBuy paint.\n")
    mirror = tmp_path / "notes"
    fp.json("pull", str(mirror), env=person)
    path = _file_of(mirror, note["id"])
    before = _server_markdown(cli_server, person["FASTPAD_TOKEN"], note["id"])

    path.write_text(path.read_text().replace(f"{name}.status: todo", f"{name}.status: nonsense"))
    refused = fp("push", str(mirror), "--json", env=person)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"properties.{name}.status" in refused.stdout + refused.stderr and "option" in refused.stdout + refused.stderr
    assert _server_markdown(cli_server, person["FASTPAD_TOKEN"], note["id"]) == before
    assert f"{name}.status: nonsense" in path.read_text(), "the person's edit stays in the file to fix"

    path.write_text(path.read_text().replace(f"{name}.status: nonsense", f"{name}.status: done"))
    assert fp.json("push", str(mirror), env=person)["pushed"]
    with cli_server.client(person["FASTPAD_TOKEN"]) as client:
        assert client.get(f"/v1/notes/{note['id']}").json()["properties"] == {f"{name}.status": "done"}


# Every character Python's str.splitlines() ends a line at, besides "\n" and "\r" (which Markdown
# itself reads as line breaks): one note holding any of them once made `fp pull` fail for everyone.
LINE_SEPARATORS = {"U+2028": "\u2028", "U+2029": "\u2029", "U+0085": "\x85", "VT": "\v", "FF": "\f",
                   "U+001C": "\x1c", "U+001D": "\x1d", "U+001E": "\x1e"}


def test_pull_and_push_keep_every_unicode_line_separator_a_note_holds(fp, cli_server, person, tmp_path):
    token = person["FASTPAD_TOKEN"]
    held = {}
    for name, separator in LINE_SEPARATORS.items():
        with cli_server.client(token) as client:
            created = client.post("/v1/notes", json={"title": f"Separator {name}", "blocks": [
                {"text": f"before{separator}after {name}"}, {"text": "An ordinary paragraph."}]})
        assert created.status_code == 201, created.text
        held[name] = created.json()
    mirror = tmp_path / "notes"
    pulled = fp.json("pull", str(mirror), env=person)
    for name, note in held.items():
        path = _file_of(mirror, note["id"])
        assert path.name in pulled["fetched"]
        assert f"before{LINE_SEPARATORS[name]}after {name}" in path.read_text(encoding="utf-8")
        # Edit another paragraph of the file and push: the separator's block is sent back unchanged.
        path.write_text(path.read_text(encoding="utf-8").replace("An ordinary paragraph.", f"Edited {name}."),
                        encoding="utf-8")
    pushed = fp.json("push", str(mirror), env=person)
    assert sorted(p["note_id"] for p in pushed["pushed"]) == sorted(n["id"] for n in held.values())
    with cli_server.client(token) as client:
        for name, note in held.items():
            blocks = client.get(f"/v1/notes/{note['id']}").json()["blocks"]
            assert [b["text"] for b in blocks] == [f"before{LINE_SEPARATORS[name]}after {name}", f"Edited {name}."], name
    assert fp.json("pull", str(mirror), env=person)["fetched"] == []  # push rewrote the files as the server holds them
