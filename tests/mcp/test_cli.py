"""``fp mcp``: refuses an interactive terminal; ``--check`` verifies the configured credential
and prints what it reaches (the stdio bridge itself is exercised in test_flow.py)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

from tests.api.conftest import FP
from tests.mcp.conftest import McpServer, fp_env


def test_fp_mcp_refuses_an_interactive_terminal(mcp: McpServer, tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run([FP, "mcp"], stdin=terminal, capture_output=True, text=True, timeout=30,
                              env=fp_env(mcp.base_url, mcp.tokens["agent"], tmp_path))
    finally:
        os.close(controller)
        os.close(terminal)
    assert done.returncode == 2
    assert "stdio" in done.stderr and "fp mcp --check" in done.stderr and done.stdout == ""


def test_fp_mcp_check_reports_what_the_credential_reaches(mcp: McpServer, tmp_path: Path) -> None:
    env = fp_env(mcp.base_url, mcp.tokens["searcher"], tmp_path)
    shown = subprocess.run([FP, "mcp", "--check"], capture_output=True, text=True, timeout=30, env=env)
    assert shown.returncode == 0, shown.stderr
    assert f"{mcp.base_url}/mcp answers" in shown.stdout and "notes:read, search:read" in shown.stdout
    found = json.loads(subprocess.run([FP, "mcp", "--check", "--json"], capture_output=True, text=True, timeout=30,
                                      env=env).stdout)
    assert found["scopes"] == ["notes:read", "search:read"] and found["writable"] == "none"
    assert found["identity"]["token_id"] == mcp.token_ids["searcher"]
    assert "fastpad_search" in found["tools"] and "fastpad_propose" not in found["tools"]


def test_fp_mcp_check_with_a_rejected_credential_exits_3(mcp: McpServer, tmp_path: Path) -> None:
    env = fp_env(mcp.base_url, "fpk_live_" + "B" * 43, tmp_path)
    done = subprocess.run([FP, "mcp", "--check"], capture_output=True, text=True, timeout=30, env=env)
    assert done.returncode == 3 and "unauthenticated" in done.stderr
