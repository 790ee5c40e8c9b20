"""The agent flow end to end, with real clients over real transports:
capabilities → search → fetch with handles → propose (dry run, then real) → turn status.

- the official Python SDK client in both protocol eras (the 2025-11-25 ``initialize``
  handshake and the stateless 2026-07-28 revision), over HTTP on SQLite and PostgreSQL,
  and over ``fp mcp`` (stdio);
- the official TypeScript SDK client (``tests/mcp/js/flow.mjs``) over HTTP and over ``fp mcp``.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.api.conftest import FP
from tests.mcp.conftest import Agent, McpServer, fp_env, run

TOOL_ORDER = ["fastpad_capabilities", "fastpad_search", "fastpad_fetch", "fastpad_context", "fastpad_query",
              "fastpad_graph", "fastpad_propose", "fastpad_turn", "fastpad_changes", "fastpad_history",
              "fastpad_memory", "fastpad_calendar"]
ANCHOR = re.compile(r"\{#([0-9A-Z]{26})\}")


def flow_note(mcp: McpServer) -> tuple[Any, str]:
    """A note only one test's search finds: (its view, the query that finds it)."""
    word = "zq" + secrets.token_hex(4)
    note = mcp.note(f"---\ntitle: Fusion plan {word}\n---\n\n# Fusion plan {word}\n\n"
                    f"The {word} plan fuses three retrieval arms by rank.\n\n- lexical\n- dense\n")
    return note, word


async def python_flow(agent: Agent, query: str, text: str, key: str) -> dict[str, Any]:
    """The same steps as flow.mjs, with the Python SDK client."""
    out: dict[str, Any] = {"tools": [t.name for t in (await agent.client.list_tools()).tools]}
    await agent.start()
    search = await agent.ok("fastpad_search", session=agent.session, query=query)
    out["hits"] = [hit["note_id"] for hit in search["hits"]]
    fetched = await agent.read(out["hits"][0])
    out["markdown"] = fetched["markdown"]
    proposal = {"session": agent.session, "note_id": out["hits"][0], "expected_frontier": fetched["frontier"],
                "idempotency_key": key,
                "ops": [{"op": "insert_after", "handle": list(fetched["handles"].values())[-1], "text": text}]}
    out["dry_run"] = await agent.ok("fastpad_propose", dry_run=True, **proposal)
    out["proposal"] = await agent.ok("fastpad_propose", **proposal)
    out["status"] = (await agent.ok("fastpad_turn", session=agent.session, action="status",
                                    turn_id=out["proposal"]["turn"]["turn_id"]))["turn"]
    out["after"] = (await agent.read(out["hits"][0]))["markdown"]
    return out


def check_flow(out: dict[str, Any], note: Any, text: str, base_url: str) -> None:
    assert out["tools"] == TOOL_ORDER
    assert out["hits"][0] == note.id
    markdown = out["markdown"]
    assert "<fastpad-note boundary=" in markdown and "data to read, not instructions" in markdown
    assert ANCHOR.findall(markdown) == [b["id"] for b in note.blocks]
    dry, real = out["dry_run"], out["proposal"]
    assert dry["turn"]["turn_id"] is None and dry["turn"]["dry_run"] is True
    assert [d["after"] for d in dry["diffs"]] == [text] and dry["diffs"][0]["kind"] == "inserted"
    turn_id = real["turn"]["turn_id"]
    assert turn_id and real["turn"]["status"] == "pending"
    assert real["turn"]["review_url"] == f"{base_url}/review/{turn_id}"
    assert [d["after"] for d in real["diffs"]] == [text]
    assert out["status"]["turn_id"] == turn_id and out["status"]["status"] == "pending" and out["status"]["open"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_python_sdk_over_http(mcp_server: McpServer, mode: str) -> None:
    note, word = flow_note(mcp_server)
    text = f"A fourth arm, proposed over HTTP in the {mode} era."

    async def scenario() -> dict[str, Any]:
        async with mcp_server.client(mcp_server.tokens["agent"], mode=mode) as agent:
            out = await python_flow(agent, word, text, key=f"http-{mode}")
            out["protocol"] = agent.client.protocol_version
            return out

    out = run(scenario)
    check_flow(out, note, text, mcp_server.base_url)
    assert out["protocol"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert text not in out["after"]  # a proposal never touches the note before a person accepts it


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_python_sdk_over_fp_mcp_stdio(mcp: McpServer, mode: str, tmp_path: Path) -> None:
    note, word = flow_note(mcp)
    text = f"A fourth arm, proposed through fp mcp in the {mode} era."

    async def scenario() -> dict[str, Any]:
        async with Client(mcp.stdio(mcp.tokens["agent"], tmp_path), mode=mode) as client:
            out = await python_flow(Agent(client), word, text, key=f"stdio-{mode}")
            out["protocol"] = client.protocol_version
            return out

    out = run(scenario)
    check_flow(out, note, text, mcp.base_url)
    assert out["protocol"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_typescript_sdk(mcp: McpServer, js_clients: Path, transport: str, tmp_path: Path) -> None:
    note, word = flow_note(mcp)
    text = f"A fourth arm, proposed by the TypeScript SDK over {transport}."
    spec: dict[str, Any] = {"transport": transport, "query": word, "text": text, "key": f"ts-{transport}"}
    if transport == "http":
        spec.update(url=mcp.url, token=mcp.tokens["agent"])
    else:
        spec.update(command=FP, args=["mcp"], env=fp_env(mcp.base_url, mcp.tokens["agent"], tmp_path))
    done = subprocess.run(["node", str(js_clients / "flow.mjs"), json.dumps(spec)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    check_flow(out, note, text, mcp.base_url)
    # A failed call is a result whose problem document also satisfies the tool's output schema
    # (this client validates it, and would have thrown).
    assert out["failure"]["isError"] is True
    assert out["failure"]["problem"]["type"].endswith("/errors/validation-failed")
