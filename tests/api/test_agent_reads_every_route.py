"""Every route of the OpenAPI document, classified; every read tried by an agent token, on both
backends, against a real server (tests/api/agent_probe.py): a planted secret and a live link
never leave in the clear, and text below the agent's trust floor never leaves at all. A route
added without a class fails the suite, so nobody adds a read that skips this check."""

from __future__ import annotations

import httpx
import pytest

from tests.api.agent_probe import OWN_OUTBOUND, PUBLIC, READS, WRITES, Planted, agent_session, plant, probe_reads, routes_of
from tests.api.conftest import Server


@pytest.fixture(scope="module")
def planted(owner: httpx.Client) -> Planted:
    return plant(owner)


def test_every_route_is_classified(server: Server) -> None:
    routes = routes_of(server.base_url)
    classified = PUBLIC | OWN_OUTBOUND | READS | WRITES
    assert routes - classified == set(), "classify the new route(s) in tests/api/agent_probe.py, and probe its reads"
    assert classified - routes == set(), "a classified route is gone from the OpenAPI document"


def test_no_read_gives_an_agent_a_secret_a_live_link_or_text_below_its_floor(server: Server, planted: Planted) -> None:
    token = server.mint("notes:read,search:read,graph:read,export", "--label", "every route")["token"]
    with server.client(token) as agent:
        tally = probe_reads(agent, planted, agent_session(agent))
    print(f"agent reads tried: {tally.attempts} over {len(READS)} routes; answers: {dict(tally.statuses)}")
    assert tally.leaks == []
    assert not any(status >= 500 for status in tally.statuses)
