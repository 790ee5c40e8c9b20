"""CLI start-up: the wall time of ``fp --version`` and of an offline ``fp capture``, as a person waits for them.

Targets: ``fp --version`` under 150 ms and an offline capture (spooled to disk,
fsync'd, exit 7 after the connection is refused) under 250 ms. Each run is a
fresh process of the installed ``fp`` executable, so interpreter start-up and
imports are included. Alongside, which heavy modules each one loaded (none of
fastapi, loro, onnxruntime, numpy, tiktoken should be). A capture imports httpx
to try the network (about 50 ms of its time, rich included: httpx imports it).
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import write_result  # noqa: E402

FP = str(Path(sys.executable).with_name("fp"))
RUNS = 21
HEAVY = ("fastapi", "loro", "onnxruntime", "numpy", "tiktoken", "uvicorn", "psycopg", "yaml", "markdown_it")
TARGETS = {"version_ms": 150, "offline_capture_ms": 250}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when this returns: connections are refused


def _wall(args: list[str], env: dict[str, str], expect: int) -> dict[str, float]:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        result = subprocess.run([FP, *args], env=env, capture_output=True, stdin=subprocess.DEVNULL)
        samples.append((time.perf_counter() - start) * 1000)
        assert result.returncode == expect, (args, result.returncode, result.stderr)
    return {"median_ms": round(statistics.median(samples), 1), "min_ms": round(min(samples), 1),
            "max_ms": round(max(samples), 1), "runs": RUNS}


def _heavy_imports(args: list[str], env: dict[str, str]) -> list[str]:
    """Top-level packages among HEAVY that the command imported (from ``python -X importtime``)."""
    code = f"import sys; sys.argv = ['fp', *{args!r}]; from fastpad.cli import main; main()"
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL)
    loaded = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in result.stderr.splitlines() if "|" in line}
    return sorted(loaded & set(HEAVY))


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FASTPAD_")}
        env.update({"HOME": home, "XDG_CONFIG_HOME": f"{home}/config", "XDG_STATE_HOME": f"{home}/state",
                    "FASTPAD_URL": f"http://127.0.0.1:{_closed_port()}", "FASTPAD_TOKEN": "fpk_live_" + "b" * 43})
        capture = ["capture", "a thought on a plane"]
        figures = {
            "version": _wall(["--version"], env, 0),
            "offline_capture": _wall(capture, env, 7),
            "heavy_imports": {"version": _heavy_imports(["--version"], env),
                              "offline_capture": _heavy_imports(capture, env)},
            "spooled_captures": len(list(Path(home, "state", "fastpad", "spool").glob("*/pending/*.json"))),
        }
    figures["meets_targets"] = (figures["version"]["median_ms"] < TARGETS["version_ms"]
                                and figures["offline_capture"]["median_ms"] < TARGETS["offline_capture_ms"])
    path = write_result("cli", figures, TARGETS)
    print(path.read_text())


if __name__ == "__main__":
    main()
