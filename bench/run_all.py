"""Run every benchmark in turn; each writes its JSON to bench/results/.

Benchmarks are results, not tests: run them on a machine doing nothing else,
and compare figures from one run with each other.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SCRIPTS = sorted(
    path for path in BENCH.glob("*.py") if path.stem not in {"__init__", "common", "servers", "run_all"}
)


def main() -> int:
    failed = []
    for script in SCRIPTS:
        print(f"== {script.name}", flush=True)
        if subprocess.run([sys.executable, str(script)], cwd=BENCH.parent).returncode != 0:
            failed.append(script.name)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
