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
from bench.servers import OWNER, initialised, postgres, server_ms, serving  # noqa: E402
from fastpad.deployment import open_deployment  # noqa: E402
from fastpad.notes import Block, NoteDocument  # noqa: E402


def seed(data_dir: Path, count: int) -> list[str]:
    """Notes created in-process through NoteService (the one write path) before the
    server starts: set-up is not what is measured, and over HTTP it would spend
    a person's 1,200-a-minute allowance eight times over."""
    deployment = open_deployment(data_dir)
    operator = deployment.operator_principal()
    try:
        return [
            deployment.notes.create(operator, title=f"Note {i}", blocks=[
                Block(None, "heading", f"Note {i}", {"level": 1}),
                Block(None, "paragraph", f"Paragraph one of note {i}, about retrieval and fusion."),
                Block(None, "paragraph", f"Paragraph two of note {i}: keyset pagination and frontiers."),
                Block(None, "list_item", f"point {i}"),
            ]).id
            for i in range(count)
        ]
    finally:
        deployment.close()


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
        data_dir = stack.enter_context(initialised(database_url))
        ids = seed(data_dir, notes)
        server = stack.enter_context(serving(data_dir))
        token = server.token("notes:read,notes:write", "--person", OWNER)
        with httpx.Client(base_url=server.base_url, headers={"authorization": f"Bearer {token}"}, timeout=30) as client:
            return {"notes": notes, **measure(client, ids, samples)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=500)  # 2 x 500 requests stay under 1,200 a minute
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    figures = {backend: run(backend, args.notes, args.samples) for backend in args.backends.split(",")}
    path = write_result("api", figures, {"sqlite_post_ops_server_p50_ms": 5, "sqlite_get_note_server_p50_ms": 5})
    print(path.read_text())


if __name__ == "__main__":
    main()
