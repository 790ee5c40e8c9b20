"""Every MCP tool, and how an agent calls each when it attacks: the arguments, aimed at an estate,
classified like the HTTP routes (``tests/security/probe.py``: what a call names decides what a
token outside its reach must be answered). Calls go through the official SDK client against the
real server, each result checked against the tool's declared output schema; a revoked token never
gets a session, so its calls are sent as plain JSON-RPC posts."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from tests.mcp.conftest import Agent, McpServer
from tests.security.probe import (LOOKED_UP_FIRST, NO_SUCH_TYPE, NOTE, READ, THING, WINDOW, WRITE, Aim, Keep, Route,
                                  aims, expected, unsent)
from tests.security.tally import APPROVE_NOT_PERMITTED, Expect, Tally, problem_slug
from tests.security.world import Estate


def _each(*arguments: dict[str, Any]) -> Callable[[Aim], list[dict[str, Any]]]:
    """Calls with the aim's session added to each set of arguments."""
    return lambda aim: [{"session": aim.session, **{k: v(aim) if callable(v) else v for k, v in args.items()}}
                        for args in arguments]


TOOLS: dict[str, tuple[Route, ...]] = {
    "fastpad_capabilities": (Route(READ, request=lambda aim: [{}]),),
    "fastpad_search": (Route(READ, request=_each({"query": lambda aim: aim.estate.term})),),
    "fastpad_fetch": (Route(READ, NOTE, _each({"note_ids": lambda aim: [aim.note.id]},
                                              {"note_ids": lambda aim: [aim.note.id], "mode": "digest"},
                                              {"note_ids": lambda aim: [aim.note.id], "with_handles": True})),),
    "fastpad_context": (Route(READ, request=_each({"query": lambda aim: aim.estate.term})),),
    "fastpad_query": (Route(READ, request=_each({"type": lambda aim: aim.estate.kind}), exceptions=NO_SUCH_TYPE),),
    "fastpad_graph": (Route(READ, NOTE, _each({"note_id": lambda aim: aim.note.id, "direction": "both"})),),
    "fastpad_propose": (Route(WRITE, NOTE, _each({
        # No handle needed to insert at the start: the handle attacks are tests/security/handles.py's.
        "note_id": lambda aim: aim.note.id, "ops": [{"op": "insert_after", "handle": None, "text": "An agent's line."}],
        "expected_frontier": lambda aim: aim.note.frontier,
        "idempotency_key": lambda aim: f"probe-{aim.session[-12:]}-{aim.note.id}"})),),
    "fastpad_turn": (
        Route(READ, request=_each({"action": "list"})),
        Route(READ, THING, _each({"action": "status", "turn_id": lambda aim: aim.estate.turn},
                                 {"action": "diff", "turn_id": lambda aim: aim.estate.turn})),
        Route(WRITE, THING, _each({"action": "abandon", "turn_id": lambda aim: aim.estate.turn})),
        Route(WRITE, THING, _each({"action": "accept", "turn_id": lambda aim: aim.estate.turn}),
              person_only=APPROVE_NOT_PERMITTED, exceptions=LOOKED_UP_FIRST),
    ),
    "fastpad_changes": (Route(READ, request=_each({"limit": 200})),),
    "fastpad_history": (Route(READ, NOTE, _each({"note_id": lambda aim: aim.note.id,
                                                 "block_id": lambda aim: aim.note.blocks[-1]})),),
    "fastpad_memory": (Route(READ, request=_each({})),
                       Route(READ, THING, _each({"topic": lambda aim: aim.estate.topic}))),
    "fastpad_calendar": (Route(READ, request=_each(WINDOW)),),
}


async def listed_tools(target: McpServer, token: str) -> set[str]:
    async with target.client(token) as agent:
        return {tool.name for tool in (await agent.client.list_tools()).tools}


def sent_of(name: str, arguments: dict[str, Any]) -> str:
    shown = {k: v for k, v in arguments.items() if k not in ("idempotency_key", "expected_frontier")
             and not (k == "session" and str(v).startswith("as1."))}  # the caller's own session says nothing
    return f"{name} {json.dumps(shown, sort_keys=True)}"


def tool_calls(category: str, estate: Estate, session: str, reachable: str,
               only: Keep = lambda route: True) -> Iterator[tuple[str, dict[str, Any], Expect | None]]:
    """Every call of every tool ``only`` keeps, aimed at ``estate``: (tool, arguments, the answer it must get)."""
    for name, routes in sorted(TOOLS.items()):
        for route in routes:
            if only(route):
                want = expected(route, category)
                for aim in aims(route, category, estate, session, reachable):
                    for arguments in route.request(aim):
                        yield name, arguments, want


async def attack_tools(tally: Tally, agent: Agent, estate: Estate, reachable: str, withheld: dict[str, str],
                       only: Keep = lambda route: True) -> None:
    """Call every tool ``only`` keeps, aimed at ``estate``, as ``agent`` (started); record each result."""
    for name, arguments, want in tool_calls(tally.category, estate, agent.session, reachable, only):
        record_result(tally, name, arguments, await agent.call(name, **arguments), unsent(withheld, arguments), want)


def record_result(tally: Tally, name: str, arguments: dict[str, Any], result: Any, withheld: dict[str, str],
                  want: Expect | None) -> None:
    content = result.structured_content or {}
    text = json.dumps(content) + "".join(getattr(part, "text", "") for part in result.content)
    status, slug = (content.get("status", 500), problem_slug(content)) if result.is_error else (200, None)
    tally.add(name, sent_of(name, arguments), status, slug, [], text, withheld, want)


def post_tool_call(http: httpx.Client, name: str, arguments: dict[str, Any]) -> httpx.Response:
    """A ``tools/call`` as a plain JSON-RPC post, with ``http``'s credential."""
    return http.post("/mcp", headers={"accept": "application/json, text/event-stream"},
                     json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}})


def attack_tools_posted(tally: Tally, http: httpx.Client, estate: Estate, session: str, reachable: str,
                        withheld: dict[str, str]) -> None:
    """Every tool call, posted as plain JSON-RPC (for a credential the SDK client cannot start with)."""
    for name, arguments, want in tool_calls(tally.category, estate, session, reachable):
        response = post_tool_call(http, name, arguments)
        tally.add_http(name, sent_of(name, arguments), response.status_code, response.text,
                       unsent(withheld, arguments), want)
