"""MCP end to end: ``fastpad_search`` and ``fastpad_fetch`` over loopback HTTP against
``fp serve`` at 20,000 notes on SQLite, and throughput with 16 concurrent clients.
Target (issue 7): p50 under 20 ms for search.

    python bench/mcp.py [--notes 20000] [--blocks-per-note 6] [--samples 300] [--seconds 10]

The workspace is the search benchmark's (``bench/search_latency.build``: headings,
paragraphs of Vaswani abstracts, two ``[[links]]`` per note), written through
``NoteService.create`` before the server starts. Dense search is off
(``embeddings.provider: none``): embedding 20,000 notes would take longer than the
benchmark, and an embedding worker busy in the background would measure the worker;
``search_latency.json`` measures dense on its own.

Every call is one stateless 2026-07-28 JSON-RPC POST to ``/mcp`` carrying the bearer
token and the agent session — authentication, the session check, argument validation,
the rate limiter, the tool and the outbound path (redaction, link neutralisation,
fencing, token budget) are all inside the figure. Client-side round trips are the
figures; the server's own time (its Server-Timing header) is reported beside them, and
``rest_search_ms`` is the same search through ``POST /v1/search``, so the difference is
what the MCP surface adds over the search itself.
Queries are the search benchmark's short workload: what an agent's tool call holds.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402

from bench.common import percentiles, write_result  # noqa: E402
from bench.retrieval import DEFAULT_BEIR  # noqa: E402
from bench.search_latency import EXTRA_SHORT, build, texts  # noqa: E402
from bench.servers import initialised, server_ms, serving  # noqa: E402
from fastpad.deployment import CONFIG_NAME, open_deployment  # noqa: E402
from fastpad.search.query import parse_query  # noqa: E402

TARGET_SEARCH_P50_MS = 20.0
CLIENTS = 16
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


class Caller:
    """One MCP client: a keep-alive HTTP connection, the token, and the agent session."""

    def __init__(self, base_url: str, token: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=30, headers={
            "authorization": f"Bearer {token}", "content-type": "application/json",
            "accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28",
        })
        self.session = self.call("fastpad_capabilities", {})[0]["session"]

    def call(self, tool: str, arguments: dict) -> tuple[dict, float, float]:
        """(structured result, client ms, server ms)."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments, "_meta": META}}
        started = time.perf_counter()
        response = self.http.post("/mcp", content=json.dumps(body),
                                  headers={"mcp-method": "tools/call", "mcp-name": tool})
        elapsed = (time.perf_counter() - started) * 1000
        response.raise_for_status()
        result = response.json()["result"]
        if result.get("isError"):
            raise RuntimeError(f"{tool} failed: {result['structuredContent']}")
        return result["structuredContent"], elapsed, server_ms(response)

    def search(self, query: str) -> tuple[dict, float, float]:
        return self.call("fastpad_search", {"session": self.session, "query": query, "limit": 10})

    def fetch(self, note_id: str) -> tuple[dict, float, float]:
        return self.call("fastpad_fetch", {"session": self.session, "note_ids": [note_id]})

    def rest_search(self, query: str) -> tuple[dict, float, float]:
        """The same search through the HTTP API (``POST /v1/search``): what MCP adds is the difference."""
        started = time.perf_counter()
        response = self.http.post("/v1/search", json={"q": query, "limit": 10})
        elapsed = (time.perf_counter() - started) * 1000
        response.raise_for_status()
        return response.json(), elapsed, server_ms(response)


def latency(caller: Caller, requests: list, samples: int) -> dict:
    for request in requests:
        request(caller)  # every request once to warm the caches, as bench/search_latency.py does
    client, server = [], []
    for i in range(samples):
        _, client_ms, server_ms_ = requests[i % len(requests)](caller)
        client.append(client_ms)
        server.append(server_ms_)
    return {"client": percentiles(client), "server": percentiles(server)}


def throughput(base_url: str, token: str, requests: list, seconds: float) -> dict:
    """CLIENTS threads, each its own connection and session, calling for ``seconds``."""
    callers = [Caller(base_url, token) for _ in range(CLIENTS)]
    counts = [0] * CLIENTS
    samples: list[list[float]] = [[] for _ in range(CLIENTS)]
    start = threading.Barrier(CLIENTS + 1)
    deadline = 0.0

    def work(n: int) -> None:
        rng = random.Random(n)
        start.wait()
        while time.perf_counter() < deadline:
            samples[n].append(rng.choice(requests)(callers[n])[1])
            counts[n] += 1

    threads = [threading.Thread(target=work, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    deadline = time.perf_counter() + seconds
    began = time.perf_counter()
    start.wait()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - began
    return {"clients": CLIENTS, "seconds": round(took, 1), "calls": sum(counts),
            "calls_per_s": round(sum(counts) / took, 1), "latency_ms": percentiles([s for ss in samples for s in ss])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--blocks-per-note", type=int, default=6)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()

    paragraphs, long_queries, source = texts(DEFAULT_BEIR)
    queries = [" ".join(parse_query(q).terms[:3]).lower() for q in long_queries] + EXTRA_SHORT
    with initialised() as data_dir:
        config = data_dir / CONFIG_NAME
        config.write_text(json.dumps({**json.loads(config.read_text()), "embeddings": {"provider": "none"}}))
        deployment = open_deployment(data_dir)
        try:
            build_s = build(deployment, args.notes, args.blocks_per_note, paragraphs)
            with deployment.store.read(deployment.workspace_id) as tx:
                note_ids = [row.id for row in tx.list_notes(after_id=None, limit=args.notes, include_archived=False,
                                                            include_trashed=False, note_ids=None)]
                counts = tx.search_index.counts()
            token, _ = deployment.tokens.create(deployment.workspace_id, label="bench", rate_limit_per_minute=100_000,
                                                scopes="notes:read,notes:propose,search:read,graph:read")
        finally:
            deployment.close()
        rng = random.Random(5)
        fetched = rng.sample(note_ids, 200)
        searches = [lambda c, q=q: c.search(q) for q in queries]
        fetches = [lambda c, n=n: c.fetch(n) for n in fetched]
        with serving(data_dir) as server:
            caller = Caller(server.base_url, token)
            hits = sum(len(caller.search(q)[0]["hits"]) for q in queries) / len(queries)
            figures = {
                "backend": "sqlite", "notes": len(note_ids), "blocks": counts["blocks"], "text": source,
                "build_s": round(build_s, 1), "dense": "off (embeddings.provider none)",
                "queries": len(queries), "mean_hits_per_search": round(hits, 1), "limit": 10,
                "search_ms": latency(caller, searches, args.samples),
                "rest_search_ms": latency(caller, [lambda c, q=q: c.rest_search(q) for q in queries], args.samples),
                "fetch_ms": latency(caller, fetches, args.samples),
                "throughput_16_clients": {
                    "search": throughput(server.base_url, token, searches, args.seconds),
                    "fetch": throughput(server.base_url, token, fetches, args.seconds),
                    "mixed": throughput(server.base_url, token, searches + fetches, args.seconds),
                },
            }
    targets = {"search_p50_ms_under": TARGET_SEARCH_P50_MS,
               "met": figures["search_ms"]["client"]["p50_ms"] < TARGET_SEARCH_P50_MS}
    print(write_result("mcp", figures, targets).read_text())


if __name__ == "__main__":
    main()
