"""Every route of the OpenAPI document is classified (``tests/security/probe.py``), so a route added
without saying what it reaches and what an agent must be answered fails here; and no route or tool
gives the broadest agent token a planted secret (in text or a typed property named like one), a live
URL, or text below its trust floor — reading every route and tool, then writing through each."""

from __future__ import annotations

from collections.abc import Callable

from tests.mcp.conftest import McpServer
from tests.security.attacks import planted_material
from tests.security.probe import OWN_OUTBOUND, READ, ROUTES, routes_of
from tests.security.tally import ANSWERS, Tally
from tests.security.tools import TOOLS
from tests.security.world import World


def test_every_route_is_classified(target: McpServer) -> None:
    routes = routes_of(target.base_url)
    assert routes - set(ROUTES) == set(), "classify the new route(s) in tests/security/probe.py ROUTES"
    assert set(ROUTES) - routes == set(), "a classified route is gone from the OpenAPI document"
    unsent = {name for name, route in ROUTES.items() if route.request is None and route.reach != OWN_OUTBOUND}
    assert unsent == set(), "say what an agent sends to each route"


def test_no_route_or_tool_gives_an_agent_planted_material(world: World, judge: Callable[[Tally], None]) -> None:
    tally = planted_material(world)
    judge(tally)
    attacked = {name for name, route in ROUTES.items() if route.request is not None}
    assert {a.surface for a in tally.attempts} == attacked | set(TOOLS)
    # A refusal leaks nothing: the reads must have answered for "nothing leaked" to mean something.
    answered = {a.surface for a in tally.attempts if 200 <= a.status < 300}
    reads = {name for name, route in ROUTES.items()
             if route.reach == READ and route.person_only is None and route.answer is ANSWERS}
    assert reads - answered == {"GET /v1/attachments/{attachment_id}"}  # no import of the estate stored one
    assert set(TOOLS) - answered == set()
