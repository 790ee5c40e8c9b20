"""The project's Node.js and npm for tests that run JavaScript: the ones tools/node.py installs
in .venv/node (``make test`` does, before pytest), never the machine's.

``require()`` checks they are there. Without them a test fails under CI (and skips elsewhere,
if it may), naming the command that installs them.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("fastpad_tools_node", Path(__file__).resolve().parents[1] / "tools" / "node.py")
tools_node = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tools_node)

NODE: Path = tools_node.NODE


def require(purpose: str, *, optional: bool = True) -> None:
    """Fail unless tools/node.py's Node is installed (skip instead, outside CI, if ``optional``);
    then put its bin dir first on this process's PATH, so a test's plain ``node`` is that one too."""
    if not tools_node.installed():
        message = f"{purpose}: the project's Node.js is not installed; run `python tools/node.py` (make test does)"
        if os.environ.get("CI") or not optional:
            pytest.fail(message)
        pytest.skip(message)
    if os.environ.get("PATH", "").split(os.pathsep)[0] != str(tools_node.BIN):
        os.environ["PATH"] = tools_node.env()["PATH"]


def npm_ci(directory: Path) -> None:
    """``npm ci`` in ``directory`` with the project's npm (make test has usually done it already)."""
    subprocess.run([*tools_node.npm_command(), "ci", "--no-audit", "--no-fund"], cwd=directory, env=tools_node.env(),
                   check=True, capture_output=True, timeout=300)
