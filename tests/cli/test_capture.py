"""`fp capture` never fails: spooled on a network error (exit 7), drained by the next successful command,
delivered exactly once — the server acknowledges a replay instead of capturing twice."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import CliServer, Fp


def _titled(server: CliServer, token: str, title: str) -> list[str]:
    """The ids of every note with this title."""
    ids, cursor = [], None
    with server.client(token) as client:
        while True:
            page = client.get("/v1/notes", params={"limit": 200, **({"cursor": cursor} if cursor else {})}).json()
            ids += [item["id"] for item in page["items"] if item["title"] == title]
            cursor = page["next_cursor"]
            if not cursor:
                return ids


def _note(server: CliServer, token: str, note_id: str) -> dict:
    with server.client(token) as client:
        return client.get(f"/v1/notes/{note_id}").json()


def _spool(fp: Fp) -> Path:
    (root,) = (fp.home / ".state" / "fastpad" / "spool").iterdir()
    return root


def test_capture_from_arguments_a_file_and_stdin_lands_in_the_inbox_as_untrusted(fp, cli_server, person_env, tmp_path):
    note = tmp_path / "thought.md"
    note.write_text("---\ntitle: From a file\n---\n\nA captured file {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\n")
    by_args = fp("capture", "the", "thing", "I", "will", "otherwise", "forget", env=person_env)
    by_file = fp("capture", "--file", str(note), "--json", env=person_env)
    by_stdin = fp("capture", "--title", "Piped", "--json", input="line one\n\nline two\n", env=person_env)
    assert by_args.returncode == by_file.returncode == by_stdin.returncode == 0, by_args.stderr + by_file.stderr
    assert by_args.stdout.strip() and "Captured" in by_args.stderr  # the note id is the result; prose on stderr
    ids = {by_args.stdout.strip(), json.loads(by_file.stdout)["note_id"], json.loads(by_stdin.stdout)["note_id"]}
    notes = {note_id: _note(cli_server, person_env["FASTPAD_TOKEN"], note_id) for note_id in ids}
    assert len(notes) == 3
    for note_view in notes.values():
        assert note_view["types"] == ["Inbox"]
        assert {b["origin"] for b in note_view["blocks"]} == {"inbound_untrusted"}
    titles = {n["title"] for n in notes.values()}
    assert titles == {"the thing I will otherwise forget", "From a file", "Piped"}
    from_file = next(n for n in notes.values() if n["title"] == "From a file")
    assert from_file["blocks"][0]["text"] == "A captured file"
    assert from_file["blocks"][0]["id"] != "01JB2K7Q9XN4M8YV3TD0FZ5ERW", "a captured copy gets fresh block ids"


def test_capture_with_nothing_to_capture_is_a_usage_error(fp, person_env):
    result = fp("capture", "--json", env=person_env)  # stdin is /dev/null: empty
    assert result.returncode == 2 and result.stdout == ""
    assert json.loads(result.stderr)["error"] == "usage"


@pytest.fixture
def restartable(cli_server: CliServer) -> CliServer:
    """The shared server, which this test stops and starts again (on the same port and data)."""
    yield cli_server
    if cli_server.process is None:
        cli_server.start()


def test_capture_with_the_server_down_spools_then_the_next_command_delivers_it_once(fp, restartable):
    env = {"FASTPAD_URL": restartable.base_url, "FASTPAD_TOKEN": restartable.person_token()}
    restartable.stop()
    offline = fp("capture", "written on a plane", "--json", env=env)
    assert offline.returncode == 7, offline.stderr
    spooled = json.loads(offline.stdout)
    assert spooled["status"] == "spooled" and spooled["reason"]["error"] == "server-unreachable"
    pending = list((_spool(fp) / "pending").glob("*.json"))
    assert len(pending) == 1 and json.loads(pending[0].read_text())["idempotency_key"] == spooled["idempotency_key"]

    status = fp.json("capture", "--status", env=env)
    assert status["counts"] == {"pending": 1, "delivered": 0, "failed": 0}

    restartable.start()
    failed = fp("diff", "01ARZ3NDEKTSV4RRFFQ69G5FAV", env=env)
    assert failed.returncode == 4, "no such turn"
    assert len(list((_spool(fp) / "pending").glob("*.json"))) == 1, "a command that failed drains nothing"

    ok = fp("turns", env=env)  # any command that succeeds against the server
    assert ok.returncode == 0, ok.stderr
    assert "delivered 1 spooled capture" in ok.stderr
    status = fp.json("capture", "--status", env=env)
    assert status["counts"] == {"pending": 0, "delivered": 1, "failed": 0}
    delivered = status["delivered"][0]
    assert _titled(restartable, env["FASTPAD_TOKEN"], "written on a plane") == [delivered["note_id"]]

    # The answer to a delivery was lost (the entry is back in pending): a replay is acknowledged, not re-captured.
    name = f"{delivered['id']}.json"
    shutil.copy(_spool(fp) / "delivered" / name, _spool(fp) / "pending" / name)
    (_spool(fp) / "delivered" / name).unlink()
    flushed = fp.json("capture", "--flush", env=env)
    assert flushed == {"delivered": 1, "failed": 0, "pending": 0, "busy": False}
    assert _titled(restartable, env["FASTPAD_TOKEN"], "written on a plane") == [delivered["note_id"]], "exactly once"


def test_a_capture_refused_for_now_waits_and_one_refused_for_good_is_kept_as_failed(fp, cli_server, tmp_path):
    reader = {"FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": cli_server.mint("notes:read")}
    # 403 (no notes:write): a credential can be replaced, so the capture waits rather than failing.
    waiting = fp("capture", "kept for later", "--json", env=reader)
    assert waiting.returncode == 7 and json.loads(waiting.stdout)["reason"]["error"] == "insufficient-scope"
    assert fp.json("capture", "--status", env=reader)["counts"] == {"pending": 1, "delivered": 0, "failed": 0}
    big = tmp_path / "big.txt"
    big.write_text("x" * (1024 * 1024 + 1))
    writer = {"FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": cli_server.person_token()}
    refused = fp("capture", "--file", str(big), "--json", env=writer)
    assert refused.returncode == 2, refused.stderr  # 422: the same bytes are refused every time
    assert json.loads(refused.stderr)["error"] == "validation-failed"
    status = fp.json("capture", "--status", env=writer)
    assert status["counts"] == {"pending": 0, "delivered": 0, "failed": 1}, "one spool per credential"
    assert status["counts"]["failed"] == 1 and status["failed"][0]["error"]["error"] == "validation-failed"


def test_flush_takes_the_spool_lock_so_cron_and_a_hook_never_send_at_once(fp):
    offline = {"FASTPAD_URL": "http://127.0.0.1:9", "FASTPAD_TOKEN": "fpk_live_" + "c" * 43}
    assert fp("capture", "while another flush runs", env=offline).returncode == 7
    lock = os.open(_spool(fp) / ".lock", os.O_RDWR)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        busy = fp("capture", "--flush", "--timeout", "0.3", "--json", env=offline)
        assert busy.returncode == 7 and json.loads(busy.stdout)["busy"] is True
    finally:
        os.close(lock)
    after = fp("capture", "--flush", "--json", env=offline)
    assert after.returncode == 7
    report = json.loads(after.stdout)
    assert report["busy"] is False and report["pending"] == 1 and report["reason"]["error"] == "server-unreachable"
