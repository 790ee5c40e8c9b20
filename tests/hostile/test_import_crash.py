"""kill -9 of the server in the middle of an uploaded import, on both backends: after the restart the
import says it was interrupted (at once, not ten minutes later), its ledger accounts for every item
of the archive — what landed, and ``not_reached`` for the rest — and importing the archive again
completes it, creating nothing twice.

Each backend gets a server of its own here: this test kills it.
"""

from __future__ import annotations

import time

import httpx

from tests.api.conftest import Server, serve
from tests.api.test_imports import ZIP, finished, whole_ledger, zipped

NOTES = 1200  # enough that the import is still running when the server is killed


def _running(client: httpx.Client, import_id: str, timeout: float = 60.0) -> dict:
    """Wait (on the import's own progress) until some notes have landed and it is still running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = client.get(f"/v1/imports/{import_id}").json()
        if view["status"] == "running" and view["progress"].get("notes_done", 0) > 0:
            return view
        assert view["status"] in ("queued", "running"), view
    raise AssertionError(f"import {import_id} never got going: {view}")


def test_an_import_killed_midway_is_interrupted_its_ledger_whole_and_a_retry_completes(doomed: Server):
    files = {f"notes/n{i:04d}.md": f"# Note {i}\n\nSee [[n{(i + 1) % NOTES:04d}]].\n" for i in range(NOTES)}
    files["styles.css"] = "body {}"  # an item the plan skips
    archive = zipped(files)
    token = doomed.token("owner")
    with doomed.client(token) as client:
        import_id = client.post("/v1/imports", params={"name": "big.zip"}, content=archive, headers=ZIP).json()["id"]
        midway = _running(client, import_id)
    doomed.process.kill()  # SIGKILL: no shutdown, no finally
    doomed.process.wait()
    doomed.base_url, doomed.process = serve(doomed.data_dir, doomed.data_dir.parent / "server.log")

    with doomed.client(token) as client:
        view = client.get(f"/v1/imports/{import_id}").json()
        assert view["status"] == "interrupted" and view["problem"]["type"] == "interrupted", view
        rows = [r for r in whole_ledger(client, import_id) if r["kind"] not in ("link", "links_more", "links_left_out")]
        items = list(files)
        assert sorted(r["item"] for r in rows) == sorted(items), "one row per item of the archive, no more"
        unreached = [r for r in rows if r["status"] == "not_reached"]
        landed = [r for r in rows if r["status"] == "imported"]
        print(f"{doomed.backend}: killed at {midway['progress']['notes_done']} notes; after the restart "
              f"{len(landed)} imported, {len(unreached)} not_reached")
        assert unreached and landed and len(landed) + len(unreached) == NOTES
        # Importing the archive again completes it: the notes that landed are unchanged, the rest created.
        retry = finished(client, client.post("/v1/imports", params={"name": "big.zip"}, content=archive,
                                             headers=ZIP).json()["id"], timeout=300)
        assert retry["status"] == "completed", retry
        statuses = {r["item"]: r["status"] for r in whole_ledger(client, retry["id"])
                    if r["kind"] not in ("link", "links_more", "links_left_out")}
        assert {statuses[r["item"]] for r in landed} == {"unchanged"}
        assert {statuses[r["item"]] for r in unreached} == {"imported"}
