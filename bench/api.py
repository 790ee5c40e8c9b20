"""Spine latency: POST /v1/notes/{id}/ops (a one-paragraph edit) and GET /v1/notes/{id}
at 10,000 notes, over real HTTP against `fp serve`, on SQLite and PostgreSQL.

Server-side figures come from each response's Server-Timing header; client-side
figures (loopback round trip) are reported beside them. Target (issue 3): p50
under 5 ms server-side on SQLite.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import random
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402

from bench.common import percentiles, write_result  # noqa: E402
from bench.servers import OWNER, fastpad, postgres, server_ms  # noqa: E402
from fastpad.notes import NoteDocument  # noqa: E402


def seed(client: httpx.Client, count: int) -> list[str]:
    ids = []
    for i in range(count):
        body = {
            "title": f"Note {i}",
            "blocks": [
                {"type": "heading", "text": f"Note {i}", "attrs": {"level": 1}},
                {"text": f"Paragraph one of note {i}, about retrieval and fusion."},
                {"text": f"Paragraph two of note {i}: keyset pagination and frontiers."},
                {"type": "list_item", "text": f"point {i}"},
            ],
        }
        response = client.post("/v1/notes", json=body)
        response.raise_for_status()
        ids.append(response.json()["id"])
    return ids


def measure(client: httpx.Client, ids: list[str], samples: int) -> dict:
    rng = random.Random(7)
    get_server, get_client = [], []
    for note_id in rng.sample(ids, samples):
        response = client.get(f"/v1/notes/{note_id}")
        response.raise_for_status()
        get_server.append(server_ms(response))
        get_client.append(response.elapsed.total_seconds() * 1000)

    editing = rng.sample(ids, 50)
    copies = {}
    for note_id in editing:
        state = client.get(f"/v1/notes/{note_id}/updates")
        copies[note_id] = [NoteDocument.load(state.content), state.headers["x-fastpad-frontier"]]
    ops_server, ops_client = [], []
    for i in range(samples):
        note_id = editing[i % len(editing)]
        doc, frontier = copies[note_id]
        paragraph = doc.blocks()[1].id
        doc.replace_text(paragraph, f"Paragraph one, edit {i}: retrieval and fusion, revised.")
        response = client.post(f"/v1/notes/{note_id}/ops", json={
            "ops": base64.b64encode(doc.export_updates(frontier)).decode(),
            "expectedFrontier": frontier,
            "idempotencyKey": str(uuid.uuid4()),
        })
        response.raise_for_status()
        copies[note_id][1] = response.json()["frontier"]
        ops_server.append(server_ms(response))
        ops_client.append(response.elapsed.total_seconds() * 1000)
    return {
        "get_note_server": percentiles(get_server),
        "get_note_client": percentiles(get_client),
        "post_ops_server": percentiles(ops_server),
        "post_ops_client": percentiles(ops_client),
    }


def run(backend: str, notes: int, samples: int) -> dict:
    with contextlib.ExitStack() as stack:
        database_url = stack.enter_context(postgres()) if backend == "postgres" else None
        server = stack.enter_context(fastpad(database_url))
        # Seeding 10k notes is set-up, not what is measured: a generous rate limit.
        token = server.token("notes:read,notes:write", "--person", OWNER, "--rate-limit", "100000")
        with httpx.Client(base_url=server.base_url, headers={"authorization": f"Bearer {token}"}, timeout=30) as client:
            ids = seed(client, notes)
            return {"notes": notes, **measure(client, ids, samples)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    figures = {backend: run(backend, args.notes, args.samples) for backend in args.backends.split(",")}
    path = write_result("api", figures, {"sqlite_post_ops_server_p50_ms": 5, "sqlite_get_note_server_p50_ms": 5})
    print(path.read_text())


if __name__ == "__main__":
    main()
