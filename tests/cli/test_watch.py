"""`fp watch` as a subprocess against the real server: it starts at the end of the feed
and prints what commits afterwards, one JSON object per line."""

from __future__ import annotations

import json
import select

from tests.cli.conftest import CliServer, Fp


def test_watch_skips_history_and_prints_each_new_change(fp: Fp, cli_server: CliServer, person_env) -> None:
    with cli_server.client(person_env["FASTPAD_TOKEN"]) as api:
        before = api.post("/v1/notes", json={"title": "Before the watch"}).json()["id"]
        watcher = fp.popen("watch", "--ndjson", env=person_env)
        try:
            created, line = [], ""
            # The watcher says nothing until a change arrives, so write until one does: the
            # first line must be one of these notes, never the one written before it started.
            for i in range(50):
                created.append(api.post("/v1/notes", json={"title": f"Watched {i}"}).json()["id"])
                ready, _, _ = select.select([watcher.stdout], [], [], 2.0)
                if ready:
                    line = watcher.stdout.readline()
                    break
            change = json.loads(line)
            assert change["kind"] == "create" and change["note_id"] in created and change["note_id"] != before
        finally:
            watcher.terminate()
            watcher.wait(10)
