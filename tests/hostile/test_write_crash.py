"""kill -9 of the server under concurrent writers, on both backends: every write a writer sent and
got no answer for is retried, after the restart, under the same key with the same body, and nothing
is written twice — no note created twice, no block of a note's ops landed twice — while every write
that was sent is there once.

This holds because a write and its idempotency key commit in one transaction (``store/claims.py``):
a request killed after its commit leaves its key claimed, and the retry rebuilds the answer from what
was written instead of writing again.

Eight writers, each alternating a ``POST /v1/notes`` and a ``POST /v1/notes/{id}/ops`` on a note of
its own; the server is killed once the writers have had ``ACKED_BEFORE_KILL`` answers in a round, and
the round is repeated ``ROUNDS`` times on one data directory. Each backend gets a server of its own.
"""

from __future__ import annotations

import base64
import threading
import uuid
from dataclasses import dataclass, field

import httpx

from fastpad.notes import Block, NoteDocument, new_id
from tests.api.conftest import Server, serve

WRITERS = 8
ROUNDS = 4
ACKED_BEFORE_KILL = 24  # answers in a round before the kill: writes are in flight on every writer
TITLE = "crash "


@dataclass
class Writer:
    """One client: its own note (for ops) and the local copy of it its ops are computed on."""

    index: int
    note_id: str
    doc: NoteDocument
    frontier: str
    sent_titles: list[str] = field(default_factory=list)
    sent_texts: list[str] = field(default_factory=list)
    unanswered: tuple[str, dict] | None = None  # (path, body) of the request the kill cut off
    step: int = 0

    def next_request(self) -> tuple[str, dict]:
        self.step += 1
        key = str(uuid.uuid4())
        if self.step % 2:
            title = f"{TITLE}{self.index}-{self.step}"
            self.sent_titles.append(title)
            return "/v1/notes", {"title": title, "markdown": f"written by {self.index}", "idempotencyKey": key}
        text = f"op {self.index}-{self.step}"
        self.sent_texts.append(text)
        last = self.doc.blocks()[-1].id
        self.doc.insert_after(last, Block(new_id(), "paragraph", text))
        ops = base64.b64encode(self.doc.export_updates(self.frontier)).decode()
        return f"/v1/notes/{self.note_id}/ops", {"ops": ops, "expectedFrontier": self.frontier, "idempotencyKey": key}

    def answered(self, path: str, answer: httpx.Response) -> None:
        assert answer.status_code in (200, 201), (path, answer.status_code, answer.text)
        if path.endswith("/ops"):
            self.frontier = answer.json()["frontier"]


def _own_note(client: httpx.Client, index: int) -> Writer:
    created = client.post("/v1/notes", json={"title": f"writer {index}", "markdown": "start"})
    assert created.status_code == 201, created.text
    note = created.json()
    updates = client.get(f"/v1/notes/{note['id']}/updates")
    return Writer(index, note["id"], NoteDocument.load(updates.content), updates.headers["x-fastpad-frontier"])


def _traffic(base_url: str, token: str, writer: Writer, acked: list[int], enough: threading.Event,
             guard: threading.Lock) -> None:
    """Write until the server stops answering; keep the request it cut off."""
    with httpx.Client(base_url=base_url, headers={"authorization": f"Bearer {token}"}, timeout=30) as client:
        while True:
            path, body = next_request = writer.next_request()
            try:
                answer = client.post(path, json=body)
            except httpx.TransportError:
                writer.unanswered = next_request
                return
            writer.answered(path, answer)
            with guard:
                acked[0] += 1
                if acked[0] >= ACKED_BEFORE_KILL:
                    enough.set()


def _all_notes(client: httpx.Client) -> list[dict]:
    items, cursor = [], None
    while True:
        page = client.get("/v1/notes", params={"limit": 200, **({"cursor": cursor} if cursor else {})}).json()
        items += page["items"]
        cursor = page["next_cursor"]
        if not cursor:
            return items


def test_a_write_killed_after_its_commit_is_not_written_again_by_its_retry(doomed: Server):
    token = doomed.token("owner")
    with doomed.client(token) as client:
        writers = [_own_note(client, index) for index in range(WRITERS)]
    retried = recovered = 0
    for _ in range(ROUNDS):
        acked, enough, guard = [0], threading.Event(), threading.Lock()
        threads = [threading.Thread(target=_traffic, args=(doomed.base_url, token, w, acked, enough, guard))
                   for w in writers]
        for thread in threads:
            thread.start()
        assert enough.wait(timeout=120), "the writers never got going"
        doomed.process.kill()  # SIGKILL: no shutdown, no finally; requests are in flight
        doomed.process.wait()
        for thread in threads:
            thread.join(timeout=60)
            assert not thread.is_alive()
        doomed.base_url, doomed.process = serve(doomed.data_dir, doomed.data_dir.parent / "server.log")
        with doomed.client(token) as client:
            for writer in writers:
                assert writer.unanswered is not None  # every writer writes until the kill cuts it off
                path, body = writer.unanswered
                answer = client.post(path, json=body)
                writer.answered(path, answer)
                retried += 1
                recovered += answer.headers.get("idempotent-replayed") == "true"
                again = client.post(path, json=body)  # and the answer it rebuilt (or gave) is the one kept
                assert (again.status_code, again.content) == (answer.status_code, answer.content)
                writer.unanswered = None

    with doomed.client(token) as client:
        titles = [n["title"] for n in _all_notes(client) if n["title"].startswith(TITLE)]
        sent = [title for writer in writers for title in writer.sent_titles]
        assert sorted(titles) == sorted(sent), "each note sent is there, once"
        for writer in writers:
            texts = [b["text"] for b in client.get(f"/v1/notes/{writer.note_id}").json()["blocks"]]
            assert sorted(t for t in texts if t.startswith("op ")) == sorted(writer.sent_texts), "each op once"
    print(f"{doomed.backend}: {ROUNDS} kills, {len(sent)} notes and "
          f"{sum(len(w.sent_texts) for w in writers)} ops sent, {retried} retried, "
          f"{recovered} of them committed before the kill and answered from their claim")
