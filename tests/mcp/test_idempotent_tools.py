"""Every MCP tool that writes takes ``idempotency_key``: a retry under it returns the first answer,
other arguments under it are ``idempotency-conflict`` — both backends, through the official SDK.
(The replayed turn says ``replayed: true``, as an HTTP replay carries ``Idempotent-Replayed``.)

The tools that write are read off ``tools/list`` (``readOnlyHint: false`` for a credential holding
every agent scope), and ``WRITES`` says how to make each of their writes; a writing tool missing
from it fails the test, so a new one is covered by construction.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from tests.mcp.conftest import Agent, McpServer, run

Arguments = dict[str, Any]


async def _pending_turn(agent: Agent, server: McpServer) -> str:
    note = server.note(f"---\ntitle: Keyed {secrets.token_hex(3)}\n---\n\nFirst.\n")
    read = await agent.read(note.id)
    proposed = await agent.ok("fastpad_propose", session=agent.session, note_id=note.id,
                              expected_frontier=read["frontier"], idempotency_key=secrets.token_hex(8),
                              ops=[{"op": "replace_block", "handle": list(read["handles"].values())[0],
                                    "text": "First, improved."}])
    return proposed["turn"]["turn_id"]


async def _proposal(agent: Agent, server: McpServer) -> tuple[Arguments, Arguments]:
    note = server.note(f"---\ntitle: Proposed {secrets.token_hex(3)}\n---\n\nBefore.\n")
    read = await agent.read(note.id)
    op = {"op": "replace_block", "handle": list(read["handles"].values())[0], "text": "After."}
    first = {"session": agent.session, "note_id": note.id, "expected_frontier": read["frontier"], "ops": [op]}
    return first, {**first, "ops": [{**op, "text": "Otherwise."}]}


def _turn_action(action: str) -> Callable[[Agent, McpServer], Awaitable[tuple[Arguments, Arguments]]]:
    async def build(agent: Agent, server: McpServer) -> tuple[Arguments, Arguments]:
        first = {"session": agent.session, "action": action, "turn_id": await _pending_turn(agent, server)}
        return first, {**first, "turn_id": await _pending_turn(agent, server)}
    return build


# tool -> each write it makes: (the call's arguments, other arguments to send under the same key).
WRITES: dict[str, list[Callable[[Agent, McpServer], Awaitable[tuple[Arguments, Arguments]]]]] = {
    "fastpad_propose": [_proposal],
    "fastpad_turn": [_turn_action("abandon"), _turn_action("accept")],
}


def test_every_writing_tool_replays_under_its_key_and_refuses_other_arguments(mcp_server: McpServer) -> None:
    token = mcp_server.mint(f"keyed-{secrets.token_hex(3)}", "notes:read,notes:propose,turns:accept,search:read,"
                                                             "graph:read")

    async def scenario() -> tuple[list[str], list[str]]:
        async with mcp_server.client(token) as agent:
            await agent.start()
            listed = (await agent.client.list_tools()).tools
            writing = sorted(t.name for t in listed if t.annotations and t.annotations.read_only_hint is False)
            problems = [f"{name}: writes, and WRITES has no example of it" for name in writing if name not in WRITES]
            for name in writing:
                schema = next(t.input_schema for t in listed if t.name == name)
                if "idempotency_key" not in schema["properties"]:
                    problems.append(f"{name}: takes no idempotency_key")
                for build in WRITES.get(name, []):
                    first_args, other_args = await build(agent, mcp_server)
                    key = secrets.token_hex(8)
                    first = await agent.ok(name, **first_args, idempotency_key=key)
                    replay = await agent.ok(name, **first_args, idempotency_key=key)
                    marked = replay["turn"].pop("replayed", None)  # the turn says it is a replay
                    if replay != first or marked is not True:
                        problems.append(f"{name} {first_args.get('action', '')}: the replay answered {replay}, "
                                        f"not {first}")
                    await agent.problem(name, "idempotency-conflict", **other_args, idempotency_key=key)
            return writing, problems

    writing, problems = run(scenario)
    assert writing == ["fastpad_propose", "fastpad_turn"]
    assert not problems, "\n".join(problems)
