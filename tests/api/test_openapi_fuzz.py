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

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import hypothesis
import pytest
import requests

from fastpad.security.scopes import ALL_SCOPES

from tests.unavailable import unavailable

from .conftest import OWNER_EMAIL, Server, own_server

try:
    import schemathesis
    from schemathesis.specs.openapi.checks import positive_data_acceptance
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
# Every check schemathesis has (`--checks all`): no 5xx, answers in their declared schema, status and
# content type, Allow on a 405, refusing what the schema refuses and accepting what it admits.
CHECKS = {"enabled": True}
# GET /v1/changes (and a note's presence) may hold a request up to wait_ms (≤ 30 s) when nothing is
# new; a case keeps its long poll, bounded to this, so the run's time stays bounded.
LONG_POLL_MS = 200
LONG_POLLS = ("/v1/changes", "/v1/notes/{note_id}/presence")
# POST /v1/ask: "a deployment with no model provider configured refuses the route outright rather
# than pretending" (spec › Ask), with a 503 provider-not-configured; this deployment has none. The
# one 5xx allowed, and only there: the test checks it is that refusal.
UNCONFIGURED_ASK = {"include-name": "POST /v1/ask",
                    "checks": {"not_a_server_error": {"expected-statuses": ["2xx", "3xx", "4xx", "503"]}}}
# What the document states as a schema is what the server checks; what no JSON Schema can state —
# a rule across two fields, what the workspace holds, a value only the server mints — the server
# refuses with a 422 naming the field. A schema-valid request may get that 422 on these operations
# (each with its reason); everywhere else positive_data_acceptance holds as is.
_SEMANTIC = {
    "GET /v1/calendar": "end must come after start",
    "GET /v1/changes": "start=latest and a cursor are two starting points: one of them",
    "GET /v1/notes": "a cursor is one the server returned",
    "GET /v1/turns": "a cursor is one the server returned",
    "GET /v1/search": "a cursor or strategies list the server reads",
    "POST /v1/capture": "idempotencyKey in the body or the Idempotency-Key header",
    "POST /v1/notes/{note_id}/comments": "a reply is anchored where its thread is: threadId alone",
    "POST /v1/notes/{note_id}/presence": "state is base64 of a Loro EphemeralStore update holding the tab's key",
    "POST /v1/collections": "the query names types the workspace defines",
    "PATCH /v1/collections/{collection_id}": "a free-form query: text without U+0000 or lone surrogates, "
                                             "naming types the workspace defines",
    "POST /v1/query": "the query names types the workspace defines",
    "POST /v1/types": "extends names types the workspace defines",
    "POST /v1/notes/{note_id}/supersede": "a note cannot supersede itself",
    "PATCH /v1/notes/{note_id}/types": "something to change: add, remove or properties",
    "POST /v1/notes/{note_id}/ops": "ops is a Loro update the note can take",
    "POST /v1/notes/{note_id}/proposals": "ops name handles of the caller's session",
    "POST /v1/turns/{turn_id}/accept-some": "the blocks and ops named are the turn's",
    "POST /v1/turns/{turn_id}/reject-some": "the blocks and ops named are the turn's",
    "POST /v1/links": "a target by id or by title, and a source block of the source note",
    "POST /v1/memory": "a topic name that does not read as a note id",
    "POST /v1/tokens/delegate": "scopes within the caller's own",
    "GET /v1/notes/{note_id}/handles": "x-fastpad-session is a session this credential opened",
    "GET /v1/notes/{note_id}": "at is a version this note has been at",
    "GET /v1/notes/{note_id}/history": "a cursor is one the server returned",
    "POST /v1/notes/{note_id}/history:restore": "at is a version this note has been at, block_id a block it had then",
    # A free-form object: no text anywhere in a body holds U+0000 or a lone surrogate (api/shape.py).
    "POST /mcp": "free-form params: text without U+0000 or lone surrogates",
    "POST /v1/device/code": "a free-form JSON body: text without U+0000 or lone surrogates",
    "POST /v1/notes/types:bulk": "free-form items: text without U+0000 or lone surrogates",
    "POST /v1/imports/{import_id}/verify": "a free-form body: text without U+0000 or lone surrogates",
    "POST /v1/imports/{import_id}/unverify": "a free-form body: text without U+0000 or lone surrogates",
    "POST /v1/imports": "a free-form JSON body: text without U+0000 or lone surrogates; the Idempotency-Key "
                        "header (for a zip body) equals the body's idempotencyKey when both are sent",
    "POST /v1/notes/{note_id}/placeholders/reveal": "a free-form body: text without U+0000 or lone surrogates",
    "POST /v1/notes": "markdown or blocks, not both; the Idempotency-Key header (for a Markdown body) equals "
                      "the body's idempotencyKey when both are sent",
    "POST /v1/notes:batch": "each item: markdown or blocks, not both",
    "PATCH /v1/types/{name}": "extends names types the workspace defines",
    "POST /v1/device/token": "device_code is one the server issued (RFC 8628 answers 400)",
    "POST /v1/invitations:accept": "token is a link the server issued; the password does not hold the email",
    "POST /v1/signup": "sign-up is open here, the email has no account, the password does not hold it",
    "POST /v1/account/password": "current_password is yours; the new one does not hold your email",
}
SEMANTIC_REFUSALS = [{"include-name": name, "checks": {"positive_data_acceptance": {
    "expected-statuses": ["2xx", "3xx", "400", "401", "403", "404", "409", "422", "429"]}}} for name in _SEMANTIC]
# Where a schema-violating request is answered without a 4xx, by design: JSON-RPC answers its own
# errors (200 with an error object), and a Markdown body is any text.
_ANSWERED_IN_BAND = {"POST /mcp": "JSON-RPC reports an invalid message in a 200's error object",
                     "POST /v1/notes": "text/markdown takes any text, '{}' included"}
IN_BAND = [{"include-name": name, "checks": {"negative_data_rejection": {"enabled": False}}}
           for name in _ANSWERED_IN_BAND]
# GET /v1/notes/{note_id} routes every /v1/notes/… path too, so a 405 there also allows GET (which
# answers 422: 'types:bulk' is not a note id); the document lists only POST for that literal path.
SHARED_PATH = [{"include-name": "POST /v1/notes/types:bulk", "checks": {"allow_header_conformance": {"enabled": False},
                                                                        "unsupported_method": {"enabled": False}}}]
UNCONFIGURED = "provider-not-configured"


# What each backend's run sent and got, written to bench/results/fuzz.json after each backend's run.
COUNTS: dict[str, dict[str, Any]] = {}
FUZZ_RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results" / "fuzz.json"
STATEFUL_SCENARIOS = 30  # linked call sequences per backend, each of up to STATEFUL_STEPS calls
STATEFUL_STEPS = 6


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def fuzz_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with own_server(request, tmp_path_factory, "fuzz", limits=FUZZ_LIMITS) as server:
        COUNTS[request.param] = {"cases": 0, "stateful_calls": 0, "operations": set(), "statuses": Counter(),
                                 "failed": 0}
        yield server
    _write_counts()


def _count(backend: str, case: Any, status: int, *, stateful: bool = False) -> None:
    counts = COUNTS[backend]
    counts["stateful_calls" if stateful else "cases"] += 1
    counts["operations"].add(case.operation.label)
    # A 5xx by its code: the one allowed is POST /v1/ask's 503 (no model provider configured).
    counts["statuses"][str(status) if status >= 500 else f"{status // 100}xx"] += 1


def _write_counts() -> None:
    document = {
        "benchmark": "fuzz",
        "what": "schemathesis 4.32.5 over /openapi.json of a real fp serve, every check enabled (--checks all), "
                "examples + coverage + random cases per operation and linked (stateful) call sequences; written by "
                "tests/api/test_openapi_fuzz.py",
        "config": {"max_examples": MAX_EXAMPLES, "seed": SEED, "generation_mode": GENERATION_MODE,
                   "stateful": {"scenarios": STATEFUL_SCENARIOS, "max_steps": STATEFUL_STEPS},
                   "semantic_refusals": _SEMANTIC, "answered_in_band": _ANSWERED_IN_BAND},
        "backends": {backend: {"cases": c["cases"], "stateful_calls": c["stateful_calls"],
                               "operations": len(c["operations"]), "statuses": dict(sorted(c["statuses"].items())),
                               "failed_checks": c["failed"]}
                     for backend, c in COUNTS.items()},
    }
    FUZZ_RESULTS.parent.mkdir(parents=True, exist_ok=True)
    FUZZ_RESULTS.write_text(json.dumps(document, indent=2) + "\n")


@pytest.fixture(scope="module")
def api_schema(fuzz_server: Server) -> Any:
    token = fuzz_server.mint(",".join(ALL_SCOPES), "--person", OWNER_EMAIL, "--label", "tests: fuzz")["token"]
    with fuzz_server.client(token) as client:
        known = seed_workspace(client)
    config = schemathesis.Config.from_dict({
        "seed": SEED,
        # The document's own bearer scheme: schemathesis knows the credential is this one, so its
        # ignored_auth probes (none, then an invalid one) are what tell auth apart, not its guesses.
        "auth": {"openapi": {"bearer": {"bearer": token}}},
        "request-timeout": 10,
        # No example database: the seed alone decides the cases, so every run sends the same ones.
        "generation": {"max-examples": MAX_EXAMPLES, "mode": GENERATION_MODE[fuzz_server.backend], "database": "none"},
        "checks": CHECKS,
        "operations": [UNCONFIGURED_ASK, *SEMANTIC_REFUSALS, *IN_BAND, *SHARED_PATH],
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
def test_no_operation_answers_5xx_or_outside_its_declared_schema(case: Any, http: requests.Session,
                                                                 fuzz_server: Server) -> None:
    wait = case.query.get("wait_ms") if case.operation.path in LONG_POLLS and case.query else None
    if isinstance(wait, int) and wait > LONG_POLL_MS:
        case.query["wait_ms"] = LONG_POLL_MS
    backend = fuzz_server.backend
    response = case.call(session=http)
    _count(backend, case, response.status_code)
    try:
        case.validate_response(response)
    except Exception:
        COUNTS[backend]["failed"] += 1
        raise
    if response.status_code >= 500:
        assert response.json()["type"].endswith(f"/errors/{UNCONFIGURED}"), response.text


def test_linked_call_sequences_answer_no_5xx_and_within_their_schema(api_schema: Any, fuzz_server: Server,
                                                                      http: requests.Session) -> None:
    """The stateful phase: calls chained by the links schemathesis finds (an id a POST returned is the
    next GET's, PATCH's or DELETE's path parameter), every check on every answer."""
    backend = fuzz_server.backend
    machine = api_schema.as_state_machine()
    found: list[str] = []  # each failed step, as it happened (see below)

    class Sequences(machine):  # type: ignore[misc, valid-type]
        def call(self, case: Any, **kwargs: Any) -> Any:
            response = case.call(session=http, **kwargs)
            _count(backend, case, response.status_code, stateful=True)
            return response

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            # A step's parameters come from earlier answers through links, not from the schema (an
            # inferred link may carry a null into a path): whether the schema admits them is not
            # this phase's question. Every other check applies.
            try:
                case.validate_response(response, additional_checks=additional_checks,
                                       excluded_checks=[positive_data_acceptance])
            except Exception as exc:
                COUNTS[backend]["failed"] += 1
                found.append(f"{case.method} {response.request.url} → {response.status_code}: {exc}")
                raise

    # Generation only: the server's state moves on, so a replayed sequence (shrinking, the example
    # database) would not meet the state it first met. For the same reason each sequence is a run of
    # its own, seeded: within one run Hypothesis holds every sequence's draws to what an earlier one
    # with the same start drew, and a rule a different answer allows breaks that (it raises
    # FlakyStrategyDefinition, with nothing failed). Hypothesis replays a failing sequence once to
    # report it, and that replay meets another state too, so the failure each step met is kept and
    # the first one found is what the test says.
    one_sequence = hypothesis.settings(max_examples=1, stateful_step_count=STATEFUL_STEPS, deadline=None,
                                       database=None, phases=[hypothesis.Phase.generate])
    for scenario in range(STATEFUL_SCENARIOS):
        try:
            hypothesis.seed(SEED + scenario)(Sequences).run(settings=one_sequence)
        except Exception:
            if found:
                raise AssertionError(f"the first failing call of a linked sequence: {found[0]}") from None
            raise
    assert COUNTS[backend]["stateful_calls"] > STATEFUL_SCENARIOS, COUNTS[backend]
