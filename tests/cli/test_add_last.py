"""`fp add --last` with the documented one-line hook, in a real interactive bash on a pseudo-terminal:
the previous command, its output, its exit code and its timing."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.conftest import CliServer, Fp
from tests.unavailable import unavailable

FP_DIR = str(Path(sys.executable).parent)


class Terminal:
    """An interactive shell on a pty, driven line by line."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                        start_new_session=True)
        os.close(slave)
        self.seen = b""

    def wait_for(self, needle: bytes, *, after: int = 0, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.seen[after:]:
            assert time.monotonic() < deadline, f"never saw {needle!r} in {self.seen[-500:]!r}"
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                self.seen += os.read(self.master, 65536)

    def run(self, line: str, done: bytes) -> None:
        """Type ``line``; wait until ``done`` (which the typed line must not contain) appears."""
        start = len(self.seen)
        os.write(self.master, line.encode() + b"\n")
        self.wait_for(done, after=start)

    def close(self) -> None:
        os.write(self.master, b"exit\n")
        try:
            self.process.wait(timeout=10)
        finally:
            os.close(self.master)


def test_add_last_captures_the_previous_command_with_output_exit_code_and_timing(fp: Fp, cli_server: CliServer):
    if not (shutil.which("bash") and shutil.which("script")):
        unavailable("needs bash and script(1): apt-get install bsdutils")
    (fp.home / ".bashrc").write_text('PS1="ready> "\neval "$(fp add --hook bash)"\n')
    env = {**fp.env, "PATH": f"{FP_DIR}:{os.environ['PATH']}", "TERM": "xterm", "SHELL": shutil.which("bash"),
           "FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": cli_server.person_token()}
    result = fp.home / "result.json"
    terminal = Terminal(["bash", "-i"], env)
    try:
        terminal.wait_for(b"ready> ")
        assert os.environ.get("FASTPAD_SESSION_LOG") is None
        terminal.run("echo first-line; printf 'second \\033[1mline\\033[0m\\n'; sleep 0.3; false", b"ready> ")
        terminal.run(f"fp add --last --json > {result}; echo exit-$((0+$?))-$((6*7))", b"-42")
    finally:
        terminal.close()
    assert b"exit-0-42" in terminal.seen, terminal.seen[-800:]
    captured = json.loads(result.read_text())
    assert captured["status"] == "delivered"
    with cli_server.client(cli_server.person_token()) as client:
        note = client.get(f"/v1/notes/{captured['note_id']}").json()
    command = "echo first-line; printf 'second \\033[1mline\\033[0m\\n'; sleep 0.3; false"
    assert note["title"] == f"$ {command}"[:82]
    assert note["types"] == ["Inbox"]
    properties = note["properties"]
    assert properties["command"] == command and properties["exit_code"] == 1
    assert 300 <= properties["duration_ms"] < 10_000
    code = next(b for b in note["blocks"] if b["type"] == "code")
    assert code["text"] == f"$ {command}\nfirst-line\nsecond line", "the output, without terminal escapes"
    assert "Exit 1" in note["blocks"][-1]["text"]
    assert {b["origin"] for b in note["blocks"]} == {"inbound_untrusted"}
