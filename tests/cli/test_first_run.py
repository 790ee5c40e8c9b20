"""`make run` as a newcomer meets it: its entry point run twice in one fresh data directory.

Every claim the printed text makes is tried as printed: the sign-in and the reset command, the
one agent token both runs print and what it may and may not do, and each MCP client config,
launched with the MCP SDK's stdio client exactly as written (command, args, env), with the
checkout's ``.venv/bin`` nowhere on PATH.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters

from tests.api.conftest import FP, free_port, run_fp, stop, wait_healthy
from tests.mcp.conftest import run

MAKE_RUN = [sys.executable, "-m", "fastpad.cli", "demo"]  # the Makefile's `run` target
DEMO_SCOPES = ["notes:read", "notes:propose", "search:read", "graph:read"]


def _json_after(text: str, label: str) -> Any:
    start = text.index(label) + len(label)
    return json.JSONDecoder().raw_decode(text, text.index("{", start))[0]


def _start(data_dir: Path, port: int, log: Path) -> tuple[subprocess.Popen, str]:
    # Started from elsewhere, as a user's shell might be: nothing may depend on the working directory.
    process = subprocess.Popen([*MAKE_RUN, "--data-dir", str(data_dir), "--port", str(port)],
                               stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=data_dir.parent)
    wait_healthy(f"http://127.0.0.1:{port}", process, log)
    return process, log.read_text()


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Any:
    """The output of a first and a second run; the second one's server keeps serving."""
    tmp = tmp_path_factory.mktemp("first-run")
    data_dir, port = tmp / "data", free_port()
    first, first_out = _start(data_dir, port, tmp / "first.out")
    stop(first)
    second, second_out = _start(data_dir, port, tmp / "second.out")
    yield {"first": first_out, "second": second_out, "base": f"http://127.0.0.1:{port}", "data_dir": data_dir,
           "tmp": tmp}
    stop(second)


def _token(output: str) -> str:
    return re.search(r"^FASTPAD_TOKEN=(fpk_live_\w+)$", output, re.M).group(1)


def test_both_runs_print_one_demo_token_and_the_first_alone_a_password(runs):
    first, second = runs["first"], runs["second"]
    assert _token(first) == _token(second), "a second run reuses the demo token"
    assert "(new;" in first and "(the one the last run printed;" in second
    tokens = json.loads(run_fp("token", "list", "--data-dir", str(runs["data_dir"]), "--json").stdout)
    assert [t["label"] for t in tokens] == ["make run (demo)"] and tokens[0]["scopes"] == DEMO_SCOPES
    assert re.search(r"sign in +owner@localhost / \S+ +\(generated; shown this once\)", first)
    assert "sign in     owner@localhost (the password the first run printed)" in second
    assert (runs["data_dir"] / "demo-agent-token").stat().st_mode & 0o077 == 0
    for output in (first, second):
        assert f"open        {runs['base']}/ in a browser" in output


def test_the_printed_sign_in_works_and_the_printed_reset_command_resets_it(runs):
    base = runs["base"]
    password = re.search(r"sign in +owner@localhost / (\S+)", runs["first"]).group(1)
    session = httpx.post(f"{base}/v1/session", json={"email": "owner@localhost", "password": password})
    assert session.status_code == 201
    cookie = {"cookie": f"fastpad_session={session.cookies['fastpad_session']}"}
    assert httpx.get(f"{base}/v1/notes", headers=cookie).status_code == 200
    page = httpx.get(f"{base}/signin")
    assert page.status_code == 200 and "fp user set-password --data-dir DATA_DIR" in page.text
    reset = re.search(r"forgot it\?  (.+)$", runs["second"], re.M).group(1)
    command = shlex.split(reset)
    assert Path(command[0]).is_absolute() and command[-1] == "owner@localhost"
    done = subprocess.run(command, input="a new password, typed\n", capture_output=True, text=True, timeout=60,
                          cwd="/", env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Password of owner@localhost set; 1 web session signed out"
    assert httpx.get(f"{base}/v1/notes", headers=cookie).status_code == 401, "the reset ended the session"
    assert httpx.post(f"{base}/v1/session", json={"email": "owner@localhost", "password": password}).status_code == 401
    signed_in = httpx.post(f"{base}/v1/session", json={"email": "owner@localhost", "password": "a new password, typed"})
    assert signed_in.status_code == 201


def test_the_token_reads_and_proposes_and_does_nothing_else(runs):
    base, token = runs["base"], _token(runs["second"])
    assert "It may read notes, search and follow links (notes:read, notes:propose, search:read, graph:read)" in runs[
        "second"]
    agent = httpx.Client(base_url=base, headers={"authorization": f"Bearer {token}"}, timeout=10)
    notes = agent.get("/v1/notes")
    assert notes.status_code == 200 and len(notes.json()["items"]) == 3
    assert agent.get("/v1/search", params={"q": "Fastpad"}).json()["hits"]
    # The printed proposal, as printed: a 202 whose turn waits in the person's Inbox.
    curl = re.search(r"--data-binary '([^']+)' (\S+)", runs["second"])
    proposed = agent.post(curl.group(2).removeprefix(base), content=curl.group(1),
                          headers={"content-type": "text/markdown"})
    assert proposed.status_code == 202, proposed.text
    turn = proposed.json()
    assert turn["new_note"]["title"] == "Proposed by curl", "its title comes from its heading"
    assert f"in the Inbox, {base}/inbox" in runs["second"] and turn["review_url"].endswith(f"/review/{turn['id']}")
    owner = json.loads(run_fp("token", "create", "--data-dir", str(runs["data_dir"]), "--scopes", "notes:read",
                              "--person", "owner@localhost", "--json").stdout)["token"]
    waiting = httpx.get(f"{base}/v1/turns", params={"status": "waiting"},
                        headers={"authorization": f"Bearer {owner}"}).json()
    assert turn["id"] in {t["id"] for t in waiting["items"]}
    assert agent.get(f"/v1/notes/{turn['note_id']}").status_code == 404, "nothing exists until a person accepts"
    # "It cannot edit, archive or delete a note itself", nor reach what only a person may.
    some_note = notes.json()["items"][0]
    refused = {
        "edit": agent.post(f"/v1/notes/{some_note['id']}/ops", json={"ops": "AA==", "peerId": "1",
                                                                     "expectedFrontier": some_note["frontier"]}),
        "archive": agent.post(f"/v1/notes/{some_note['id']}/archive"),
        "trash": agent.post(f"/v1/notes/{some_note['id']}/trash"),
        "agents": agent.get("/v1/agents"),
    }
    assert {name: r.status_code for name, r in refused.items()} == {name: 403 for name in refused}, {
        name: r.text for name, r in refused.items()}
    assert agent.get(f"/v1/notes/{some_note['id']}").json()["archived"] is False


def _stdio_configs(output: str) -> dict[str, StdioServerParameters]:
    """Each printed stdio config, read the way its client reads it."""
    desktop = _json_after(output, "MCP client config for Claude Desktop")["mcpServers"]["fastpad"]
    cursor = _json_after(output, "MCP client config for Cursor")["mcpServers"]["fastpad"]
    vscode = _json_after(output, "MCP client config for VS Code")["servers"]["fastpad"]
    assert vscode.pop("type") == "stdio"
    words = shlex.split(re.search(r"^Claude Code \(run once\):\n  (.+)$", output, re.M).group(1))
    assert words[:4] == ["claude", "mcp", "add", "fastpad"]
    split = words.index("--")
    env = dict(value.split("=", 1) for flag, value in zip(words[4:split], words[5:split]) if flag == "--env")
    claude_code = {"command": words[split + 1], "args": words[split + 2:], "env": env}
    return {name: StdioServerParameters(**config)
            for name, config in {"claude_desktop": desktop, "cursor": cursor, "vscode": vscode,
                                 "claude_code": claude_code}.items()}


def test_every_printed_mcp_config_launches_fp_mcp_as_printed(runs, monkeypatch):
    configs = _stdio_configs(runs["second"])
    venv_bin = str(Path(FP).parent)
    for name, params in configs.items():
        assert Path(params.command).is_absolute() and Path(params.command).exists(), name
        assert params.args[-1] == "mcp" and params.env["FASTPAD_URL"] == runs["base"], name
    # An MCP client passes its own environment along: one with no .venv/bin on PATH, no profile.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(runs["tmp"] / "home"))
    assert venv_bin not in os.environ["PATH"]

    async def launch(params: StdioServerParameters) -> dict[str, Any]:
        async with Client(params, mode="legacy") as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            capabilities = await client.call_tool("fastpad_capabilities", {})
            assert not capabilities.is_error, capabilities.structured_content
            return {"tools": tools, **capabilities.structured_content}

    for name, params in configs.items():
        found = run(lambda: launch(params))
        assert found["scopes"] == DEMO_SCOPES, name
        assert "fastpad_propose" in found["tools"] and "fastpad_search" in found["tools"], name
