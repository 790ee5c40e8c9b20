"""What agent tokens get out of Fastpad when they attack it, counted on both backends: the
adversarial suite's attacks (tests/security/attacks.py), each category over every route of the
OpenAPI document and every MCP tool, against a real `fp serve` on SQLite and on a throwaway
PostgreSQL — planted material (a secret in text and in a typed property, a live URL, text below
the floor), a note outside the token's note set, another workspace's notes (by id, and naming the
workspace), person-only actions, a revoked token, forged / tampered / replayed / expired / revoked
anchor handles, and forged / borrowed / expired sessions.

Figures per backend and category: attempts, refusals, answers that carried nothing withheld, leaks
(by kind), and faults (a leak, a server fault, or an answer other than the one the route or tool
must give). Target: no leak and no fault anywhere. It is a benchmark, not a test (the same attacks
are asserted by tests/security): figures are reported and written to bench/results/security.json.
Run with `.venv/bin/python bench/security.py`.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path

# The repository in place of this directory, whose mcp.py would shadow the MCP SDK the attacks use.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import write_result  # noqa: E402
from bench.servers import postgres  # noqa: E402
from fastpad.review.ops import OP_KINDS  # noqa: E402
from tests.mcp.conftest import start_mcp_server, stop_mcp_server  # noqa: E402
from tests.security.attacks import every_attack  # noqa: E402
from tests.security.handles import HANDLE_OPS  # noqa: E402
from tests.security.probe import ROUTES, routes_of  # noqa: E402
from tests.security.tally import Tally  # noqa: E402
from tests.security.tools import TOOLS  # noqa: E402
from tests.security.world import build_world  # noqa: E402

TARGETS = {"leaks": 0, "faults": 0}


def attack(backend: str, tmp: Path) -> tuple[list[Tally], int]:
    """Every category on one backend, and how many routes the server lists."""
    with postgres() if backend == "postgres" else contextlib.nullcontext(None) as database_url:
        target = start_mcp_server(tmp / backend, backend, database_url)
        try:
            return every_attack(build_world(target)), len(routes_of(target.base_url))
        finally:
            stop_mcp_server(target)


def main() -> None:
    tallies: list[Tally] = []
    with tempfile.TemporaryDirectory(prefix="fastpad-bench-security-") as tmp:
        for backend in ("sqlite", "postgres"):
            found, routes = attack(backend, Path(tmp))
            tallies += found
    backends: dict[str, dict] = {}
    for tally in tallies:
        backends.setdefault(tally.backend, {})[tally.category] = tally.figures()
    faults = [f"{tally.backend}: {fault}" for tally in tallies for fault in tally.faults()]
    figures = {
        "routes_in_openapi": routes, "routes_attacked": sum(r.request is not None for r in ROUTES.values()),
        "mcp_tools": len(TOOLS), "op_kinds_taking_handles": f"{len(HANDLE_OPS)} of {len(OP_KINDS)}",
        "backends": backends, "faults": faults,
        "judged": {"leaks": sum(c["leaks"] for b in backends.values() for c in b.values()), "faults": len(faults)},
    }
    path = write_result("security", figures, TARGETS)
    print(f"results in {path}")
    for tally in tallies:
        print(tally.summary())
    print(f"judged: {figures['judged']}")
    for fault in faults:
        print(f"fault: {fault}")


if __name__ == "__main__":
    main()
