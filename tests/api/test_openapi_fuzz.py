"""Schemathesis against ``/openapi.json`` of a real ``fp serve``, with a broad person token.

Every operation the document lists gets the cases schemathesis derives from it
(its examples, a coverage pass of boundary and malformed values, then bounded
random fuzzing), on SQLite and on PostgreSQL. Each answer must not be a 5xx
and must match the schema its status and media type are declared with.

The server is this module's own (the cases create, rename and trash whatever
they reach, and sign-in attempts count against the per-address limit), seeded
with one of each thing the paths name, so a path parameter is sometimes a real
id and the handler behind the 404 is reached too.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import requests

from fastpad.security.scopes import ALL_SCOPES

from tests.unavailable import unavailable

from .conftest import OWNER_EMAIL, Server, start_server, stop

try:
    import schemathesis
except ImportError as exc:  # a dev dependency (make install-dev)
    unavailable(f"schemathesis is not installed ({exc}); run make install-dev", module=True)

MAX_EXAMPLES = 5  # random cases per operation, after its examples and its coverage cases
SEED = 20260515  # the same cases every run, so a failure reproduces; change it to explore others
# What each backend's run sends. A request the schema refuses is refused by the API layer (FastAPI's
# validation, the shape check, the routes' own parsing) before any service or store sees it, and that
# layer is the same code on both backends, so SQLite's run sends those once. What the schema admits
# reaches the store, where the backends differ (PostgreSQL refuses U+0000; its types are not SQLite's),
# so PostgreSQL's run sends every case the schema admits again. Both runs make both checks on every
# operation; splitting the modes keeps the two runs well inside two minutes on two cores.
GENERATION_MODE = {"sqlite": "all", "postgres": "positive"}
# The person's 1,200 requests a minute, per second here: the run sends thousands, and answers that
# are all 429 would test nothing behind the limiter (which still answers some of them).
FUZZ_LIMITS = {"rate_window_s": 1.0}
# The acceptance of issue 15: zero 5xx responses, zero response-schema violations.
CHECKS = {"enabled": False, "not_a_server_error": {"enabled": True}, "response_schema_conformance": {"enabled": True}}
# GET /v1/changes may hold a request up to wait_ms (≤ 30 s) when nothing is new; a case keeps its
# long poll, bounded to this, so the run's time stays bounded.
LONG_POLL_MS = 200
# POST /v1/ask: "a deployment with no model provider configured refuses the route outright rather
# than pretending" (spec › Ask), with a 503 provider-not-configured; this deployment has none. The
# one 5xx allowed, and only there: the test checks it is that refusal.
UNCONFIGURED_ASK = {"include-name": "POST /v1/ask",
                    "checks": {"not_a_server_error": {"expected-statuses": ["2xx", "3xx", "4xx", "503"]}}}
UNCONFIGURED = "provider-not-configured"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def fuzz_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp(f"fuzz-{request.param}")
    database_url = request.getfixturevalue("pg_cluster").blank_database() if request.param == "postgres" else None
    server = start_server(tmp, request.param, database_url, limits=FUZZ_LIMITS)
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def api_schema(fuzz_server: Server) -> Any:
    token = fuzz_server.mint(",".join(ALL_SCOPES), "--person", OWNER_EMAIL, "--label", "tests: fuzz")["token"]
    with fuzz_server.client(token) as client:
        known = seed_workspace(client)
    config = schemathesis.Config.from_dict({
        "seed": SEED,
        "headers": {"Authorization": f"Bearer {token}"},
        "request-timeout": 10,
        "generation": {"max-examples": MAX_EXAMPLES, "mode": GENERATION_MODE[fuzz_server.backend]},
        "checks": CHECKS,
        "operations": [UNCONFIGURED_ASK],
        "dictionaries": {name: {"values": values} for name, values in known.items()},
        # A real id half the time; the other half stays generated (malformed ids, unknown ones).
        "parameters": {f"path.{name}": {"dictionary": name, "probability": 0.5} for name in known},
    })
    return schemathesis.openapi.from_url(f"{fuzz_server.base_url}/openapi.json", config=config)


def seed_workspace(client: httpx.Client) -> dict[str, list[str]]:
    """One of each thing a path names, made through the API: {path parameter: [values]}."""
    def made(response: httpx.Response) -> dict:
        assert response.status_code in (200, 201), response.text
        return response.json()

    note = made(client.post("/v1/notes", json={"title": "Fuzz target", "blocks": [
        {"text": "A first paragraph."}, {"type": "heading", "text": "A heading", "attrs": {"level": 2}},
        {"text": "Links to [[Fuzz neighbour]]."}]}))
    neighbour = made(client.post("/v1/notes", json={"title": "Fuzz neighbour", "markdown": "- an item\n"}))
    link = made(client.post("/v1/links", json={"source_note_id": note["id"], "type": "cites",
                                                "target_note_id": neighbour["id"]}))
    kind = made(client.post("/v1/types", json={"name": "FuzzKind", "properties": [{"name": "status", "kind": "text"}]}))
    collection = made(client.post("/v1/collections", json={"name": "Fuzz view", "query": {"type": "FuzzKind"}}))
    topic = made(client.post("/v1/memory", json={"note_id": neighbour["id"], "name": "fuzz topic"}))
    session = made(client.post("/v1/agent-sessions"))["session"]
    handles = made(client.get(f"/v1/notes/{note['id']}/handles", headers={"x-fastpad-session": session}))
    turn = made(client.post(f"/v1/notes/{note['id']}/proposals", headers={"x-fastpad-session": session}, json={
        "ops": [{"op": "insert_after", "handle": handles["blocks"][0]["handle"], "text": "A proposed paragraph."}],
        "expected_frontier": handles["frontier"], "idempotency_key": str(uuid.uuid4())}))
    return {
        "note_id": [note["id"], neighbour["id"]],
        "block_id": [block["id"] for block in note["blocks"]],
        "link_id": [link["id"]],
        "name": [kind["name"]],
        "collection_id": [collection["id"]],
        "topic": [topic["name"]],
        "turn_id": [turn["id"]],
    }


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    """One keep-alive connection for the run; no proxy settings from the environment for a loopback server."""
    with requests.Session() as session:
        session.trust_env = False
        yield session


@pytest.fixture(autouse=True)
def legacy_node_id_for_schemathesis(request: pytest.FixtureRequest) -> None:
    # schemathesis 4.32.5's from_fixture relabels the test node per operation through
    # ``Node._nodeid``, which pytest 9.2 replaced with ``Node._id``: give it the attribute it
    # reads and writes (pytest no longer looks at it; the subtests carry each operation's label).
    request.node._nodeid = request.node.nodeid


@schema.parametrize()
def test_no_operation_answers_5xx_or_outside_its_declared_schema(case: Any, http: requests.Session) -> None:
    wait = case.query.get("wait_ms") if case.operation.path == "/v1/changes" and case.query else None
    if isinstance(wait, int) and wait > LONG_POLL_MS:
        case.query["wait_ms"] = LONG_POLL_MS
    response = case.call_and_validate(session=http)
    if response.status_code >= 500:
        assert response.json()["type"].endswith(f"/errors/{UNCONFIGURED}"), response.text
