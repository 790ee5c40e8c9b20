"""Anchor handles and agent sessions attacked where they are taken: ``POST /v1/notes/{id}/proposals``
and ``fastpad_propose`` (every op kind that addresses a block by handle), and every route and tool
that takes a session.

What a handle binds (``fastpad/security/handles.py``, spec: MCP › Anchor handles): the session,
the token and the note it was read for, its block, the note's state when read, five minutes. So:

- made up, one character changed, read by another session of the same token, by another token,
  or for another note: inert — ``out-of-scope``, the same answer for each, so it is no oracle;
- the caller's own, past its five minutes: ``handle-expired``;
- read before a person edited the note: ``stale-frontier``, even with the note's new frontier;
- minted for a token since revoked: the token no longer authenticates — ``unauthenticated``.

A session (``fastpad/security/agent_sessions.py``) binds the workspace and the credential: made up,
another credential's, or expired, it is ``validation-failed``.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fastpad.security.agent_sessions import SESSION_TTL, mint_session
from fastpad.security.handles import HANDLE_TTL, mint_handle
from fastpad.store import utcnow
from tests.helpers_store import edit_ops
from tests.mcp.conftest import run
from tests.security.probe import ROUTES, SESSION_HEADER, Aim
from tests.security.tally import (HANDLE_EXPIRED, OUT_OF_SCOPE, STALE_FRONTIER, UNAUTHENTICATED, VALIDATION_FAILED,
                                  Expect, Tally)
from tests.security.tools import post_tool_call, record_result, tool_calls
from tests.security.world import WITHHELD, Note, World, client, mint, note_of, open_session, revoke

HANDLES = "a forged, tampered, replayed, expired or revoked handle"
SESSIONS = "a forged, borrowed or expired session"
PROPOSALS = "POST /v1/notes/{note_id}/proposals"

# Per op kind that addresses a block by handle: the op, for a handle and a note the caller may link to.
HANDLE_OPS: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "insert_after": lambda handle, other: {"op": "insert_after", "handle": handle, "text": "After it."},
    "insert_before": lambda handle, other: {"op": "insert_before", "handle": handle, "text": "Before it."},
    "replace_block": lambda handle, other: {"op": "replace_block", "handle": handle, "text": "Instead of it."},
    "delete": lambda handle, other: {"op": "delete", "handle": handle},
    "add_edge": lambda handle, other: {"op": "add_edge", "type": "related", "to_note_id": other, "handle": handle},
    "add_event": lambda handle, other: {"op": "add_event", "title": "Offsite", "start": "2026-06-01T10:00:00Z",
                                        "end": "2026-06-01T11:00:00Z", "handle": handle},
}
OPS_WITHOUT_HANDLES = frozenset({"move_event"})  # names its event, not a block


@dataclass(frozen=True)
class Presented:
    """A handle as an attacker presents it: which, by whom, on what frontier, and the answer it must get."""

    kind: str
    handle: str
    token: str
    session: str
    frontier: str
    expect: Expect


@dataclass(frozen=True)
class Caller:
    token: str
    key: str
    session: str


def _caller(world: World) -> Caller:
    token, key = mint(world.target)
    return Caller(token, key, open_session(world, token))


def _read_handles(world: World, caller: Caller, note: Note) -> tuple[dict[str, str], str]:
    """The note read with handles over HTTP: (handle by block id, frontier)."""
    with client(world.target, caller.token, **{SESSION_HEADER: caller.session}) as agent:
        read = agent.get(f"/v1/notes/{note.id}/handles")
    assert read.status_code == 200, read.text
    return {b["id"]: b["handle"] for b in read.json()["blocks"]}, read.json()["frontier"]


def _tampered(handle: str) -> str:
    middle = len(handle) // 2
    return handle[:middle] + ("A" if handle[middle] != "A" else "B") + handle[middle + 1:]


def _forged() -> str:
    return "h1." + base64.urlsafe_b64encode(secrets.token_bytes(52)).rstrip(b"=").decode()


def handle_attacks(world: World) -> Tally:
    """Every way a handle can be not the caller's to use, in every op kind, on both surfaces."""
    deployment = world.target.deployment
    owner = deployment.operator_principal()
    note = note_of(deployment.notes.create(owner, markdown="# Handles\n\nThe first block.\n\nThe second block.\n"))
    other_note = note_of(deployment.notes.create(owner, markdown="# Another note\n\nIts only block.\n"))
    agent, stranger, doomed = _caller(world), _caller(world), _caller(world)
    second_session = open_session(world, agent.token)
    block = note.blocks[1]
    own, frontier = _read_handles(world, agent, note)
    mine = own[block]

    def presenting(kind: str, handle: str, expect: Expect = OUT_OF_SCOPE, by: Caller = agent) -> Presented:
        return Presented(kind, handle, by.token, by.session, frontier, expect)

    presented = [
        presenting("made up", _forged()),
        presenting("one character changed", _tampered(mine)),
        presenting("read by another session of the token",
                   _read_handles(world, Caller(agent.token, agent.key, second_session), note)[0][block]),
        presenting("read by another token", _read_handles(world, stranger, note)[0][block]),
        presenting("read for another note", next(iter(_read_handles(world, agent, other_note)[0].values()))),
        presenting("its own, past five minutes", mint_handle(
            deployment.secret, session_id=agent.session, token_id=agent.key, note_id=note.id, block_id=block,
            frontier=frontier, now=utcnow() - HANDLE_TTL - timedelta(seconds=1)), HANDLE_EXPIRED),
        presenting("minted for a token since revoked", _read_handles(world, doomed, note)[0][block], UNAUTHENTICATED,
                   by=doomed),
    ]
    revoke(world.target, doomed.key)
    tally = Tally(HANDLES, world.target.backend)
    _present(world, tally, note, other_note.id, presented)

    # A person edits the note: the handle read before it is stale, whatever frontier comes with it.
    ops, base = edit_ops(deployment.store, deployment.workspace_id, note.id,
                         lambda doc: doc.replace_text(note.blocks[2], "The second block, as a person has it now."))
    edited = deployment.notes.apply_ops(owner, note.id, ops=ops, peer_id="editor", expected_frontier=base)
    _present(world, tally, note, other_note.id, [
        Presented("read before a person's edit", mine, agent.token, agent.session, edited.frontier, STALE_FRONTIER)])
    proposed = deployment.review.list(deployment.tokens.authenticate(agent.token)).items
    assert proposed == [], f"a refused handle still made {len(proposed)} proposal(s)"
    return tally


def _proposal(note: Note, other: str, presented: Presented, kind: str) -> dict[str, Any]:
    return {"ops": [HANDLE_OPS[kind](presented.handle, other)], "expected_frontier": presented.frontier,
            "idempotency_key": f"handle-{secrets.token_hex(6)}"}


def _present(world: World, tally: Tally, note: Note, other: str, presented: list[Presented]) -> None:
    """Each handle in each op kind, over HTTP and over MCP, one client per token presenting."""
    by_token: dict[str, list[Presented]] = {}
    for each in presented:
        by_token.setdefault(each.token, []).append(each)

    def proposals(each: Presented) -> list[tuple[str, dict[str, Any]]]:
        return [(f"{kind}: {each.kind}", {"session": each.session, "note_id": note.id,
                                          **_proposal(note, other, each, kind)}) for kind in HANDLE_OPS]

    for token, group in by_token.items():
        with client(world.target, token) as http:
            for each in group:
                for sent, arguments in proposals(each):
                    body = {k: v for k, v in arguments.items() if k not in ("session", "note_id")}
                    answer = http.post(f"/v1/notes/{note.id}/proposals", json=body,
                                       headers={SESSION_HEADER: each.session})
                    tally.add_http(PROPOSALS, sent, answer.status_code, answer.text, WITHHELD, each.expect)
                    if each.expect == UNAUTHENTICATED:  # no MCP client starts on a revoked token: post the call
                        answer = post_tool_call(http, "fastpad_propose", arguments)
                        tally.add_http("fastpad_propose", sent, answer.status_code, answer.text, WITHHELD,
                                       each.expect)

    async def over_mcp() -> None:
        for token, group in by_token.items():
            if any(each.expect == UNAUTHENTICATED for each in group):
                continue  # posted above
            async with world.target.client(token) as mcp:
                agent = await mcp.start()
                for each in group:
                    for sent, arguments in proposals(each):
                        record_result(tally, "fastpad_propose", {"attack": sent},
                                      await agent.call("fastpad_propose", **arguments), WITHHELD, each.expect)

    run(over_mcp)


def session_attacks(world: World) -> Tally:
    """Every route and tool that takes a session, given one made up, another token's, or one expired."""
    agent, stranger = _caller(world), _caller(world)
    home = world.home
    sessions = {
        "made up": "as1." + base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode(),
        "another token's": stranger.session,
        "its own, expired": mint_session(
            world.target.deployment.secret, workspace_id=world.target.deployment.workspace_id, credential=agent.key,
            now=utcnow() - SESSION_TTL - timedelta(seconds=1)).session_id,
    }
    tally = Tally(SESSIONS, world.target.backend)
    with client(world.target, agent.token) as there:
        for kind, session in sessions.items():
            for route in ("GET /v1/notes/{note_id}/handles", PROPOSALS):
                for call in ROUTES[route].request(Aim(home, home.vault, session, world.decoy.id)):
                    answer = there.request(call.method, call.path, json=call.json, headers=call.headers)
                    tally.add_http(route, kind, answer.status_code, answer.text, WITHHELD, VALIDATION_FAILED)

    async def over_mcp() -> None:
        async with world.target.client(agent.token) as mcp:
            caller = await mcp.start()
            for name, arguments, _ in tool_calls(SESSIONS, home, agent.session, world.decoy.id):
                if "session" not in arguments:
                    continue  # fastpad_capabilities: it is where sessions come from
                for kind, session in sessions.items():
                    record_result(tally, name, {**arguments, "session": kind},
                                  await caller.call(name, **{**arguments, "session": session}), WITHHELD,
                                  VALIDATION_FAILED)

    run(over_mcp)
    return tally
