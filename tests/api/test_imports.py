"""`/v1/imports` over real HTTP on both backends: upload (whole or in parts), progress, ledger, cancel, refusals."""

from __future__ import annotations

import io
import secrets
import time
import zipfile

import httpx
import pytest

from tests.api.conftest import OWNER_EMAIL, Server
from tests.api.helpers import assert_problem, whole_ledger
from tests.importers.fixtures import NOTION, NOTION_ROOT, OBSIDIAN

ZIP = {"content-type": "application/zip"}


@pytest.fixture(scope="module")
def importer(server: Server) -> httpx.Client:
    token = server.mint("notes:read,notes:write,schema:write,graph:read", "--person", OWNER_EMAIL, "--label", "imports")["token"]
    with server.client(token) as client:
        yield client


def zipped(files: dict[str, str | bytes], top: str = "vault") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(f"{top}/{name}", content)
    return out.getvalue()


def finished(client: httpx.Client, import_id: str, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = client.get(f"/v1/imports/{import_id}").json()
        if view["status"] in ("completed", "cancelled", "failed", "interrupted"):
            return view
        time.sleep(0.2)
    raise AssertionError(f"import {import_id} did not finish: {view}")


def test_a_zip_in_one_request_imports_and_its_ledger_pages(server: Server, importer: httpx.Client):
    vault = zipped(OBSIDIAN)
    created = importer.post("/v1/imports", params={"name": "http-vault.zip"}, content=vault,
                            headers={**ZIP, "idempotency-key": "import-http-1"})
    assert created.status_code == 202, created.text
    import_id = created.json()["id"]
    assert created.headers["location"] == f"/v1/imports/{import_id}"
    view = finished(importer, import_id)
    assert view["status"] == "completed" and view["source"] == "obsidian" and view["label"] == "http-vault"
    assert view["summary"]["text"] == "imported 5 of 8 notes, and here is each of the 3 we did not"
    assert view["progress"]["notes_done"] == view["progress"]["notes_total"] == 8
    rows = whole_ledger(importer, import_id)
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    assert {r["item"] for r in rows if r["kind"] != "link"} == set(OBSIDIAN)
    stored = next(r for r in rows if r["item"] == "diagram.png")
    picture = importer.get(stored["detail"].rsplit(" ", 1)[-1])
    assert picture.status_code == 200 and picture.content.startswith(b"\x89PNG")
    assert picture.headers["content-type"] == "image/png" and picture.headers["x-content-type-options"] == "nosniff"
    home = next(r for r in rows if r["item"] == "Home.md")
    note = importer.get(f"/v1/notes/{home['note_id']}").json()
    assert {b["origin"] for b in note["blocks"]} == {"inbound_untrusted"}

    replay = importer.post("/v1/imports", params={"name": "http-vault.zip"}, content=vault,
                           headers={**ZIP, "idempotency-key": "import-http-1"})
    assert replay.status_code == 202, replay.text
    assert replay.json()["id"] == import_id and replay.headers["idempotent-replayed"] == "true"
    again = finished(importer, importer.post("/v1/imports", content=zipped(OBSIDIAN), headers=ZIP).json()["id"])
    assert again["summary"]["notes"]["unchanged"] == 5 and again["summary"]["notes"]["imported"] == 0


def test_a_zip_body_up_to_the_8_mib_body_limit_imports_in_one_request(server: Server, importer: httpx.Client):
    # Larger than a part (4 MiB), within the body limit of authenticated routes: one request does it.
    word = secrets.token_hex(3)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:  # stored: the attachment's bytes count whole
        archive.writestr(f"vault/Big {word}.md", f"# Big {word}\n\nSee the picture.\n")
        archive.writestr("vault/assets/picture.bin", secrets.token_bytes(7 << 20))
    data = out.getvalue()
    assert 4 << 20 < len(data) < 8 << 20
    created = importer.post("/v1/imports", params={"name": "big.zip"}, content=data, headers=ZIP)
    assert created.status_code == 202, created.text
    view = finished(importer, created.json()["id"], timeout=120)
    assert view["status"] == "completed", view
    assert view["archive_bytes"] == len(data)
    statuses = {r["item"]: r["status"] for r in whole_ledger(importer, view["id"])}
    assert statuses[f"Big {word}.md"] == "imported", statuses


def test_a_large_archive_streams_in_parts_and_resumes(server: Server, importer: httpx.Client):
    data = zipped(NOTION, top=NOTION_ROOT)
    announced = importer.post("/v1/imports", json={"size": len(data), "name": "notion.zip", "idempotencyKey": "imp-2"})
    assert announced.status_code == 201, announced.text
    body = announced.json()
    assert body["status"] == "uploading" and body["upload"]["max_part_bytes"] == 4 << 20
    url = f"/v1/imports/{body['id']}/archive"
    octets = {"content-type": "application/octet-stream"}
    first = importer.put(url, params={"offset": 0}, content=data[:100], headers=octets)
    assert first.status_code == 200 and first.json()["received_bytes"] == 100
    gap = importer.put(url, params={"offset": 500}, content=data[500:], headers=octets)
    assert assert_problem(gap, 409, "conflict", server.base_url)["received_bytes"] == 100
    assert importer.put(url, params={"offset": 0}, content=data[:100], headers=octets).status_code == 200
    last = importer.put(url, params={"offset": 100}, content=data[100:], headers=octets)
    assert last.status_code == 202, last.text
    view = finished(importer, body["id"])
    assert view["source"] == "notion" and view["summary"]["notes"]["not_imported"] == 0
    reasons = {r["reason"] for r in whole_ledger(importer, body["id"])}
    assert {"comments_not_in_export", "database_view", "path_too_long", "unresolved_wikilink"} <= reasons
    types = importer.get("/v1/types").json()
    assert any(t["name"] == "Tasks" for t in (types["items"] if isinstance(types, dict) else types))


def test_wrong_archives_are_refused_with_a_problem(server: Server, importer: httpx.Client):
    html = {"Space 0123456789abcdef0123456789abcdef.html": "<html/>", "index.html": "<html/>"}
    refused = importer.post("/v1/imports", content=zipped(html), headers=ZIP)
    problem = assert_problem(refused, 422, "validation-failed", server.base_url)
    assert problem["field_errors"][0] == {"field": "archive", "code": "notion_html_export",
                                         "message": "a Notion HTML export: export as Markdown & CSV instead"}
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("v/zeros.md", b"\0" * (4 << 20))
    assert assert_problem(importer.post("/v1/imports", content=bomb.getvalue(), headers=ZIP), 422,
                          "validation-failed", server.base_url)["field_errors"][0]["code"] == "compression_ratio"
    climbing = io.BytesIO()
    with zipfile.ZipFile(climbing, "w") as archive:
        archive.writestr("v/a.md", "fine")
        archive.writestr("v/../../escape.md", "evil")
    assert assert_problem(importer.post("/v1/imports", content=climbing.getvalue(), headers=ZIP), 422,
                          "validation-failed", server.base_url)["field_errors"][0]["code"] == "path_traversal"
    assert_problem(importer.post("/v1/imports", content=b"not a zip", headers=ZIP), 422, "validation-failed",
                   server.base_url)
    assert_problem(importer.post("/v1/imports", json={"size": 0}), 422, "validation-failed", server.base_url)
    assert_problem(importer.post("/v1/imports", content=b"x", headers={"content-type": "text/plain"}), 415,
                   "unsupported-media-type", server.base_url)
    with server.client(server.token("reader")) as reader:
        assert_problem(reader.post("/v1/imports", content=zipped({"a.md": "x"}), headers=ZIP), 403,
                       "insufficient-scope", server.base_url)
    assert_problem(importer.get("/v1/imports/01J00000000000000000000000"), 404, "not-found", server.base_url)


def test_cancelling_an_upload(server: Server, importer: httpx.Client):
    announced = importer.post("/v1/imports", json={"size": 1000}).json()
    cancelled = importer.post(f"/v1/imports/{announced['id']}/cancel", json={"idempotencyKey": "cancel-1"})
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = importer.post(f"/v1/imports/{announced['id']}/cancel", json={})
    assert_problem(again, 409, "conflict", server.base_url)
    late = importer.put(f"/v1/imports/{announced['id']}/archive", params={"offset": 0}, content=b"PK",
                        headers={"content-type": "application/octet-stream"})
    assert assert_problem(late, 409, "conflict", server.base_url)["reason"] == "cancelled"


def test_an_imported_vaults_folders_are_a_property_the_notes_list_filters_on(server: Server, importer: httpx.Client):
    word = secrets.token_hex(3)  # the server's workspace is shared: titles and folders of this test's own
    top = f"Field {word}"
    files = {f"{top}/2025/Day.md": f"A day, showing ![[Index {word}#Plan]].\n",
             f"{top}/Index {word}.md": "The index.\n\n## Plan\n\nDig.\n", f"Loose {word}.md": "At the root.\n"}
    view = finished(importer, importer.post("/v1/imports", content=zipped(files), headers=ZIP).json()["id"])
    notes = {r["item"]: r["note_id"] for r in whole_ledger(importer, view["id"]) if r["status"] == "imported"}
    assert set(notes) == set(files)
    day = importer.get(f"/v1/notes/{notes[f'{top}/2025/Day.md']}").json()
    assert day["properties"] == {"source_folder": f"{top}/2025"}

    def listed(folder: str) -> set[str]:
        answer = importer.get("/v1/notes", params={"folder": folder, "limit": 200})
        assert answer.status_code == 200, answer.text
        return {n["id"] for n in answer.json()["items"]}

    assert listed(top) == {notes[f"{top}/Index {word}.md"], notes[f"{top}/2025/Day.md"]}
    assert listed(f"{top}/2025/") == {notes[f"{top}/2025/Day.md"]}
    assert_problem(importer.get("/v1/notes", params={"folder": "/"}), 422, "validation-failed", server.base_url)
    embed = importer.get(f"/v1/notes/{day['id']}/links").json()["outgoing"]
    assert [(e["type"], e["target"]["id"], e["evidence"]["text"]) for e in embed] == [
        ("embeds", notes[f"{top}/Index {word}.md"], f"A day, showing ![[Index {word}|Index {word}#Plan]].")]
