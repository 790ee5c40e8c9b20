"""What agent credentials can get out of the HTTP API, counted against a real `fp serve` on
SQLite: every read route of the OpenAPI document (tests/api/agent_probe.py) tried for each
planted note and block — a person's note holding a secret and a live link, a capture below the
agent floor — by several kinds of credential, and the person-only actions tried by an agent.

Figures: attempts, answers by status, and leaks (a planted secret, live link or below-floor text
in an answer) per credential. Target: no leak anywhere; a revoked token gets 401 everywhere; a
credential naming another workspace reads nothing. It is a benchmark, not a test: figures are
reported and written to bench/results/security.json. Run with `.venv/bin/python bench/security.py`.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import write_result  # noqa: E402
from fastpad.notes.ids import new_id  # noqa: E402
from tests.api.agent_probe import READS, Planted, Tally, agent_session, plant, probe_reads, routes_of  # noqa: E402
from tests.api.conftest import OWNER_EMAIL, run_fp, start_server, stop  # noqa: E402

READ_SCOPES = "notes:read,search:read,graph:read,export"
TARGETS = {"leaks": 0, "revoked_non_401": 0, "other_workspace_reads_with_content": 0, "person_only_allowed": 0}


def figures_of(tally: Tally) -> dict:
    return {"attempts": tally.attempts, "statuses": {str(k): v for k, v in sorted(tally.statuses.items())},
            "leaks": tally.leaks}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="fastpad-bench-security-") as tmp:
        server = start_server(Path(tmp), "sqlite")
        try:
            owner = server.mint("notes:read,notes:write,notes:delete", "--person", OWNER_EMAIL)["token"]
            with server.client(owner) as client:
                planted: Planted = plant(client)
                elsewhere = client.post("/v1/notes", json={"title": "Another note", "markdown": "Nothing here.\n"}).json()["id"]
            runs: dict[str, dict] = {}

            agent = server.mint(READ_SCOPES, "--label", "bench: agent")["token"]
            with server.client(agent) as client:
                runs["agent"] = figures_of(probe_reads(client, planted, agent_session(client)))
                # The person-only actions, by an agent: each must be refused.
                person_only = {
                    f"GET /v1/notes/{{id}}/{part}": client.get(f"/v1/notes/{planted.notes[0]}/{part}").status_code
                    for part in ("snapshot", "updates")
                } | {"POST /v1/tokens/delegate": client.post("/v1/tokens/delegate", json={"label": "x"}).status_code,
                     "GET /v1/agents": client.get("/v1/agents").status_code}
            with server.client(agent, **{"x-fastpad-workspace": new_id()}) as client:
                other = probe_reads(client, planted)
                runs["agent_naming_another_workspace"] = figures_of(other)

            scoped = server.mint(READ_SCOPES, "--notes", elsewhere, "--label", "bench: scoped")["token"]
            with server.client(scoped) as client:
                runs["agent_scoped_to_another_note"] = figures_of(probe_reads(client, planted, agent_session(client)))

            revoked = server.mint(READ_SCOPES, "--label", "bench: revoked")
            run_fp("token", "revoke", "--data-dir", str(server.data_dir), revoked["id"])
            with server.client(revoked["token"]) as client:
                gone = probe_reads(client, planted)
                runs["revoked_agent"] = figures_of(gone)
            routes = len(routes_of(server.base_url))
        finally:
            stop(server.process)

    leaks = sum(len(run["leaks"]) for run in runs.values())
    figures = {
        "routes_in_openapi": routes, "read_routes_probed": len(READS), "runs": runs,
        "person_only_by_an_agent": person_only,
        "judged": {
            "leaks": leaks,
            "revoked_non_401": gone.attempts - gone.statuses[401],
            "other_workspace_reads_with_content": len(other.leaks),
            "person_only_allowed": sum(status < 400 for status in person_only.values()),
        },
    }
    path = write_result("security", figures, TARGETS)
    print(f"results in {path}")
    for name, run in runs.items():
        print(f"{name:34} {run['attempts']:4} attempts  {run['statuses']}  leaks {len(run['leaks'])}")
    print(f"person-only actions by an agent: {person_only}")
    print(f"judged: {figures['judged']}")


if __name__ == "__main__":
    main()
