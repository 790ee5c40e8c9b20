"""Hostile text against a real server on both backends: what a person or an agent can send costs no
more than its size, and what no backend stores — or no reader should expand — is a typed 422,
named, with nothing written.
"""

from __future__ import annotations

import secrets
import threading
import time
from pathlib import Path

import httpx

from tests.api.helpers import assert_problem
from tests.hostile.conftest import Hostile

MIB = 1024 * 1024
MARKDOWN = {"content-type": "text/markdown"}
JSON = {"content-type": "application/json"}


def alias_bomb(levels: int) -> str:
    """Frontmatter whose aliases of aliases stand for 9**levels values in about 40 bytes a level."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "---\ntitle: bomb\n" + "\n".join(lines) + "\n---\n\nA paragraph.\n"


def _reset_peak(pid: int) -> None:
    """Start the server's peak resident memory (VmHWM) afresh at what it holds now (Linux: clear_refs
    5), so a peak another test's load left behind — the server is shared — is not counted here."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def _memory(pid: int) -> dict[str, int]:
    """The server's resident memory now and at its peak (bytes), from the kernel."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {name: int(fields[name].split()[0]) * 1024 for name in ("VmRSS", "VmHWM")}


def test_an_alias_bomb_is_refused_at_once_without_memory_and_other_workspaces_keep_writing(hostile: Hostile, owner):
    pid = hostile.target.process.pid
    for levels in (7, 9):
        bomb = alias_bomb(levels)
        _reset_peak(pid)
        before = _memory(pid)
        answers: list[tuple[httpx.Response, float]] = []

        def send() -> None:
            started = time.monotonic()
            answer = owner.post("/v1/notes", content=bomb.encode(), headers=MARKDOWN)
            answers.append((answer, time.monotonic() - started))

        sender = threading.Thread(target=send)
        sender.start()
        # Meanwhile, another workspace on the same server writes (on SQLite, one database file).
        with hostile.client(hostile.neighbour) as neighbour:
            writes = [neighbour.post("/v1/notes", json={"title": f"neighbour {levels}.{i}"}) for i in range(5)]
        sender.join()
        (answer, elapsed), = answers
        body = assert_problem(answer, 422, "validation-failed", hostile.base_url)
        assert body["field_errors"][0]["code"] == "frontmatter_alias", body
        assert [w.status_code for w in writes] == [201] * 5, [w.text for w in writes]
        grown = _memory(pid)["VmHWM"] - before["VmRSS"]
        print(f"alias bomb, {levels} levels ({len(bomb)} bytes): 422 in {elapsed * 1000:.0f} ms "
              f"(with 5 writes elsewhere), peak memory +{grown / MIB:.1f} MiB")
        assert elapsed < 1.0 and grown < 50 * MIB, (elapsed, grown)
    titles = [n["title"] for n in owner.get("/v1/notes", params={"limit": 200}).json()["items"]]
    assert "bomb" not in titles


def test_frontmatter_nested_or_too_large_is_refused_by_its_size_not_expanded(hostile: Hostile, owner):
    cases = {
        "frontmatter_too_deep": "---\nk: " + "[" * 33 + "]" * 33 + "\n---\n",
        "frontmatter_too_large": "---\nk: [" + ", ".join(["1"] * 10_001) + "]\n---\n",
        # libyaml's own nesting limit answers first, as malformed frontmatter
        "malformed_frontmatter": "---\nk: " + "[" * 100_000 + "]" * 100_000 + "\n---\n",
    }
    for code, markdown in cases.items():
        started = time.monotonic()
        answer = owner.post("/v1/notes", content=markdown.encode(), headers=MARKDOWN)
        body = assert_problem(answer, 422, "validation-failed", hostile.base_url)
        assert body["field_errors"][0]["code"] == code, body
        assert time.monotonic() - started < 1.0


def test_markdown_nested_100000_deep_is_refused_on_every_route_that_reads_markdown(hostile: Hostile, owner):
    for deep in ("- " * 100_000 + "x\n", "> " * 100_000 + "x\n", "1. " * 100_000 + "x\n"):
        started = time.monotonic()
        answers = {
            "POST /v1/notes (text/markdown)": owner.post("/v1/notes", content=deep.encode(), headers=MARKDOWN),
            "POST /v1/notes (markdown)": owner.post("/v1/notes", json={"title": "deep", "markdown": deep}),
        }
        for route, answer in answers.items():
            body = assert_problem(answer, 422, "validation-failed", hostile.base_url)
            assert body["field_errors"][0]["code"] == "too_deep", (route, body)
        batch = owner.post("/v1/notes:batch", json={"items": [{"markdown": deep}]})
        assert batch.status_code == 200, batch.text
        result = batch.json()["results"][0]  # each item answers on its own
        assert result["ok"] is False and result["problem"]["field_errors"][0]["code"] == "too_deep", result
        assert time.monotonic() - started < 3.0  # three requests of 200-300 KB each
        # A capture never fails on its content: text no Markdown reading takes is kept verbatim.
        captured = owner.post("/v1/capture", json={"text": deep, "idempotencyKey": f"deep-{deep[0]}-{secrets.token_hex(4)}"})
        assert captured.status_code == 201, captured.text
        blocks = owner.get(f"/v1/notes/{captured.json()['note_id']}").json()["blocks"]
        assert [(b["type"], b["text"]) for b in blocks] == [("code", deep.strip("\n"))]
    # As deep as the limit allows is a note, every level kept.
    kept = owner.post("/v1/notes", content=("- " * 32 + "x\n").encode(), headers=MARKDOWN)
    assert kept.status_code == 201, kept.text
    assert [b["attrs"]["depth"] for b in kept.json()["blocks"]] == list(range(32))
    assert kept.json()["blocks"][-1]["text"] == "x"
