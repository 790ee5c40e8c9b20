"""The adversarial suite's servers: ``target``, one ``fp serve`` per backend (``tests/conftest.py``,
shared with the hostile-input suite in ``tests/hostile``), each with its two furnished workspaces
(``tests/security/world.py``).

Every category's tally is kept, and the attempts and refusals of each are printed at the end of the
run (``bench/security.py`` writes the same figures to ``bench/results/security.json``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.mcp.conftest import McpServer
from tests.security.tally import Tally
from tests.security.world import World, build_world

TALLIES = pytest.StashKey[list[Tally]]()


@pytest.fixture(scope="session")
def world(target: McpServer) -> World:
    return build_world(target)


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Callable[[Tally], None]:
    """Keep a category's tally for the summary, and fail on every fault in it at once."""

    def judged(tally: Tally) -> None:
        request.config.stash.setdefault(TALLIES, []).append(tally)
        assert tally.attempts, f"nothing was tried for {tally.category}"
        faults = tally.faults()
        assert faults == [], (f"{len(faults)} of {len(tally.attempts)} attempts ({tally.category}):\n"
                              + "\n".join(faults))

    return judged


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    tallies = config.stash.get(TALLIES, [])
    if not tallies:
        return
    terminalreporter.section("agent attacks (tests/security): attempts, refusals, leaks")
    for tally in sorted(tallies, key=lambda t: (t.backend, t.category)):
        terminalreporter.write_line(tally.summary())
