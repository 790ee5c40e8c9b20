"""The categories of attack, each tried over every route of the HTTP API and every MCP tool by
agent tokens against a real server (``World``), each returning its ``Tally``: what was tried, what
came back, and what of it is a fault (a leak, a server fault, or an answer other than the one the
route or tool must give: ``tests/security/probe.py`` :func:`~tests.security.probe.expected`).
Shared by the tests and ``bench/security.py``; the anchor-handle and session attacks are in
``tests/security/handles.py``."""

from __future__ import annotations

from dataclasses import replace

from tests.mcp.conftest import run
from tests.security.probe import (ELSEWHERE, NAMED_ELSEWHERE, OUTSIDE_SET, PERSON_ONLY, PLANTED, PUBLIC, READ, REVOKED,
                                  SESSION_HEADER, WORKSPACE_HEADER, WRITE, Keep, attack_routes, unsent)
from tests.security.handles import handle_attacks, session_attacks
from tests.security.tally import APPROVE_NOT_PERMITTED, OUT_OF_SCOPE, VALIDATION_FAILED, Expect, Tally
from tests.security.tools import attack_tools, attack_tools_posted, record_result
from tests.security.world import WITHHELD, Estate, World, client, furnish, mint, open_session, revoke


def routes_and_tools(world: World, tally: Tally, token: str, estate: Estate, withheld: dict[str, str],
                     only: Keep = lambda route: True, tools_estate: Estate | None = None) -> Tally:
    """Every route, then every tool (aimed at ``tools_estate`` when given), as ``token``."""
    with client(world.target, token) as agent:
        attack_routes(tally, agent, estate, open_session(world, token), world.decoy.id, withheld, only)

    async def tools() -> None:
        async with world.target.client(token) as agent:
            await attack_tools(tally, await agent.start(), tools_estate or estate, world.decoy.id, withheld, only)

    run(tools)
    return tally


def planted_material(world: World) -> Tally:
    """The broadest agent reads every route and tool around a secret (in text and in a typed property
    named like one), a live URL, a capture and unreviewed agent text; then writes through every route,
    and every tool, each on an estate of its own, so what one write changes hides nothing from another."""
    tally = Tally(PLANTED, world.target.backend)
    # Its own turn, which it may read: the diff holds the person's text it proposes to replace.
    readable = replace(world.home, turn=world.own_turn)
    routes_and_tools(world, tally, world.credentials.agent, readable, WITHHELD,
                     lambda route: route.reach in (PUBLIC, READ))
    deployment = world.target.deployment
    over_http, over_mcp = (furnish(deployment, deployment.operator_principal()) for _ in range(2))
    return routes_and_tools(world, tally, world.credentials.agent, over_http, WITHHELD,
                            lambda route: route.reach == WRITE, tools_estate=over_mcp)


def outside_the_note_set(world: World) -> Tally:
    """A token holding every scope for one note only, sent at the others — and linking its own note
    to one of them, by title and in a proposal."""
    withheld = {**WITHHELD, "a note outside the set": world.home.marker, **world.home.identifiers()}
    tally = routes_and_tools(world, Tally(OUTSIDE_SET, world.target.backend), world.credentials.scoped, world.home,
                             withheld)
    return links_from_its_note(world, tally, world.credentials.scoped, world.home, withheld,
                               by_title=OUT_OF_SCOPE, in_a_proposal=VALIDATION_FAILED)


def links_from_its_note(world: World, tally: Tally, token: str, estate: Estate, withheld: dict[str, str], *,
                        by_title: Expect, in_a_proposal: Expect) -> Tally:
    """Edges from the note the token reaches (the decoy) to the estate's vault note: by its title over
    ``POST /v1/links``, and as an ``add_edge`` op in a proposal over HTTP and MCP. A title is looked up
    only among the token's notes, so no answer may say which note holds it."""
    session = open_session(world, token)
    decoy, edge = world.decoy.id, [{"op": "add_edge", "type": "related", "to_note_id": estate.vault.id}]
    with client(world.target, token, **{SESSION_HEADER: session}) as agent:
        body = {"source_note_id": decoy, "type": "related", "target_title": estate.vault_title}
        answer = agent.post("/v1/links", json=body)
        tally.add_http("POST /v1/links", "POST /v1/links by the title of a note out of reach", answer.status_code,
                       answer.text, unsent(withheld, body), by_title)
        body = {"ops": edge, "expected_frontier": current_frontier(world, decoy),
                "idempotency_key": f"edge-{session[-12:]}"}
        answer = agent.post(f"/v1/notes/{decoy}/proposals", json=body)
        tally.add_http("POST /v1/notes/{note_id}/proposals", "add_edge to a note out of reach", answer.status_code,
                       answer.text, unsent(withheld, body), in_a_proposal)

    async def over_mcp() -> None:
        async with world.target.client(token) as mcp:
            agent = await mcp.start()
            arguments = {"session": agent.session, "note_id": decoy, "ops": edge,
                         "idempotency_key": f"edge-{agent.session[-12:]}",
                         "expected_frontier": current_frontier(world, decoy)}
            record_result(tally, "fastpad_propose", {"ops": edge}, await agent.call("fastpad_propose", **arguments),
                          unsent(withheld, arguments), in_a_proposal)

    run(over_mcp)
    return tally


def another_workspace(world: World) -> tuple[Tally, Tally]:
    """The broadest agent sent at another workspace's notes and things: by their ids, and naming the
    workspace in x-fastpad-workspace (which MCP does not read: a token's workspace is its own)."""
    withheld = {**WITHHELD, "another workspace's notes": world.elsewhere.marker, **world.elsewhere.identifiers()}
    agent = world.credentials.agent
    by_id = routes_and_tools(world, Tally(ELSEWHERE, world.target.backend), agent, world.elsewhere, withheld)
    # Its title is no title here: the edge waits for a note of that title in the agent's own workspace.
    links_from_its_note(world, by_id, agent, world.elsewhere, withheld, by_title=Expect(201),
                        in_a_proposal=VALIDATION_FAILED)
    named = Tally(NAMED_ELSEWHERE, world.target.backend)
    # Acting nowhere, it must not be answered from its own workspace either.
    nothing = {**withheld, "its own workspace's notes": world.home.marker, **world.home.identifiers()}
    with client(world.target, agent, **{WORKSPACE_HEADER: world.elsewhere.workspace_id}) as there:
        attack_routes(named, there, world.elsewhere, open_session(world, agent), world.decoy.id, nothing)
    return by_id, named


def person_only_actions(world: World) -> Tally:
    """The broadest agent (turns:accept included) on every route and tool only a person may use —
    and accepting its own proposal of an edge, which waits for a person on every path."""
    tally = routes_and_tools(world, Tally(PERSON_ONLY, world.target.backend), world.credentials.agent, world.home,
                             WITHHELD, lambda route: route.person_only is not None)
    token, edge = world.credentials.agent, [{"op": "add_edge", "type": "related", "to_note_id": world.decoy.id}]
    session = open_session(world, token)
    with client(world.target, token, **{SESSION_HEADER: session}) as agent:
        vault = world.home.vault
        proposed = agent.post(f"/v1/notes/{vault.id}/proposals", json={
            "ops": edge, "expected_frontier": current_frontier(world, vault.id),
            "idempotency_key": f"edge-{session[-12:]}"})
        assert proposed.status_code == 201, proposed.text
        accept = f"/v1/turns/{proposed.json()['id']}/accept"
        tally.add_http("POST /v1/turns/{turn_id}/accept", f"POST {accept} (its own edge)",
                       (answer := agent.post(accept)).status_code, answer.text, WITHHELD, APPROVE_NOT_PERMITTED)

    async def own_edge_over_mcp() -> None:
        async with world.target.client(token) as mcp:
            agent = await mcp.start()
            turn = await agent.ok("fastpad_propose", session=agent.session, note_id=world.home.vault.id, ops=edge,
                                  expected_frontier=current_frontier(world, world.home.vault.id),
                                  idempotency_key=f"edge-{agent.session[-12:]}")
            arguments = {"session": agent.session, "action": "accept", "turn_id": turn["turn"]["turn_id"]}
            record_result(tally, "fastpad_turn", {**arguments, "turn": "its own edge"},
                          await agent.call("fastpad_turn", **arguments), WITHHELD, APPROVE_NOT_PERMITTED)

    run(own_edge_over_mcp)
    return tally


def revoked_token(world: World) -> Tally:
    """A token that held every scope and an open session, revoked, on every route and tool."""
    token, key = mint(world.target)
    session = open_session(world, token)
    revoke(world.target, key)
    tally = Tally(REVOKED, world.target.backend)
    withheld = {**WITHHELD, "the workspace's notes": world.home.marker, **world.home.identifiers()}
    with client(world.target, token) as gone:
        attack_routes(tally, gone, world.home, session, world.decoy.id, withheld)
        attack_tools_posted(tally, gone, world.home, session, world.decoy.id, withheld)
    return tally


def current_frontier(world: World, note_id: str) -> str:
    deployment = world.target.deployment
    return deployment.notes.get(deployment.operator_principal(), note_id).frontier


def every_attack(world: World) -> list[Tally]:
    """Every category, in turn (``bench/security.py``; the tests take them one by one)."""
    return [planted_material(world), outside_the_note_set(world), *another_workspace(world),
            person_only_actions(world), revoked_token(world), handle_attacks(world), session_attacks(world)]
