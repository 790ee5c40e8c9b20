"""Every tool's largest result, measured as it arrives: the JSON-RPC response body of its
``tools/call``, read off the wire under the official Python SDK client and counted with the
project's o200k tokenizer, stays within the 25,000-token cap — text content and
``structuredContent`` together. Where the result had to be cut, it says so: a cursor, and
a one-line hint on how to continue or narrow.

Each case is built to overflow what one result can hold where the tool allows it: fetch of
20 long notes, context at its maximum budget (packed, not cut), search at its maximum page, query, graph and
changes at their maximum limit, a memory topic's long note, a year of events, a proposal of
100 long ops and its diff (propose takes no cursor: its hint names the call that pages the
rest), a note-set token holding 1,200 notes, and a block larger than any one result.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx2
import pytest

from fastpad.mcp.tools.limits import FETCH_MAX_NOTES, SEARCH_MAX_HITS
from fastpad.outbound import count_tokens
from fastpad.review.ops import MAX_OPS
from fastpad.search.service import MAX_QUERY_CHARS
from tests.mcp.conftest import Agent, McpServer, run

CAP = 25_000
WORDS = ("estuary heron tide reed marsh survey transect dawn count nest colony shore mudflat wader flock "
         "plover curlew godwit redshank dunlin knot avocet egret bittern harrier osprey kestrel falcon "
         "meadow hedge copse spinney ditch sluice embankment saltmarsh creek channel sandbar shingle spit "
         "observer bearing initials logbook weather wind drizzle frost thaw season spring autumn winter "
         "ringing mist net weight wing moult juvenile adult breeding passage migrant resident vagrant "
         "population decline recovery habitat grazing mowing flooding scrub clearance volunteer warden").split()


def prose(seed: str, words: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


@dataclass
class Wiretap(httpx2.AsyncBaseTransport):
    """Passes every request on, and keeps each ``tools/call`` response body exactly as it arrived."""

    inner: httpx2.AsyncBaseTransport = field(default_factory=httpx2.AsyncHTTPTransport)
    bodies: dict[str, str] = field(default_factory=dict)  # tool name -> its last response body

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        sent = json.loads(request.content or b"{}")
        if sent.get("method") == "tools/call":
            assert "content-encoding" not in response.headers
            self.bodies[sent["params"]["name"]] = (await response.aread()).decode("utf-8")
        return response


@dataclass
class Measured:
    tool: str
    tokens: int
    result: dict[str, Any]


async def measure(agent: Agent, tap: Wiretap, name: str, **arguments: Any) -> Measured:
    """One call through the SDK client (which checks the result against the output schema): the
    tokens of its response body as it came over the wire."""
    if name != "fastpad_capabilities":
        arguments = {"session": agent.session, **arguments}
    result = await agent.call(name, **arguments)
    assert not result.is_error, result.structured_content
    body = tap.bodies[name]
    message = json.loads(body)
    assert message["result"]["structuredContent"] == result.structured_content  # the body is this result
    return Measured(name, count_tokens(body), result.structured_content)


def assert_within_cap(measured: Measured, *, cut: bool) -> None:
    result = measured.result
    assert measured.tokens <= CAP, f"{measured.tool}: {measured.tokens} tokens on the wire"
    if cut:
        assert result["truncated"] is True and result["next_cursor"], measured.tool
        assert f'cursor="{result["next_cursor"]}"' in result["hint"] and "narrow" in result["hint"], result["hint"]
        # The cut used the budget: at most one unit short of the cap, not a token-shy fraction of it.
        assert measured.tokens > CAP * 0.8, f"{measured.tool}: cut at {measured.tokens} tokens"


def sizes(measured: list[Measured]) -> str:
    return ", ".join(f"{m.tool} {m.tokens:,}" for m in measured)


@pytest.fixture(scope="module")
def owner(typed: McpServer) -> Any:
    return typed.deployment.operator_principal()


def long_note(mcp: McpServer, title: str, term: str, paragraphs: int, words: int) -> Any:
    blocks = [f"# {title}"] + [f"{prose(f'{title}{i}', words)} The {term} entry {i}." for i in range(paragraphs)]
    return mcp.note(f"---\ntitle: {title}\n---\n\n" + "\n\n".join(blocks) + "\n")


def note_ids(mcp: McpServer, owner: Any, count: int) -> list[str]:
    """``count`` note ids of the workspace: those there already, topped up with small notes."""
    ids: list[str] = []
    cursor = None
    while len(ids) < count:
        page = mcp.deployment.notes.list(owner, cursor=cursor, limit=200)
        ids += [n.id for n in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    ids += [mcp.note(f"---\ntitle: Tally card {n}\n---\n\nA card.\n").id for n in range(count - len(ids))]
    return ids[:count]


def test_fetch_of_20_long_notes_context_at_its_budget_and_search_at_its_page(typed: McpServer) -> None:
    notes = [long_note(typed, f"Marsh survey volume {n}", "godwitqx", 60, 90) for n in range(FETCH_MAX_NOTES)]
    for n in range(8):  # the notes context retrieves: long paragraphs, so its anchors and neighbours overflow
        long_note(typed, f"Dunlin roost study {n}", "dunlinqx", 12, 450)
    for n in range(SEARCH_MAX_HITS + 10):  # more matching notes than one page, each with a long heading path
        heading = " ".join(prose(f"h{n}", 14).split()[:14])
        typed.note(f"---\ntitle: Sandpiperqx tally {n} {prose(f't{n}', 12)}\n---\n\n# {heading}\n\n## {heading}\n\n"
                   f"{prose(f'b{n}', 60)} sandpiperqx {' '.join(WORDS)}.\n")
    # Every vocabulary word is a query term, so each hit lists the many terms it matched.
    query = " ".join(["sandpiperqx", *WORDS])[:MAX_QUERY_CHARS]

    async def scenario() -> list[Measured]:
        tap = Wiretap()
        async with typed.client(typed.tokens["agent"], transport=tap) as agent:
            await agent.start()
            measured = [await measure(agent, tap, "fastpad_fetch", note_ids=[n.id for n in notes]),
                        await measure(agent, tap, "fastpad_context", query="dunlinqx entry", max_tokens=CAP),
                        await measure(agent, tap, "fastpad_search", query=query, limit=SEARCH_MAX_HITS)]
        # The 2025-11-25 transport writes the same result with raw UTF-8 where 2026-07-28 escapes it.
        async with typed.client(typed.tokens["agent"], mode="legacy", transport=tap) as legacy:
            await legacy.start()
            measured.append(await measure(legacy, tap, "fastpad_fetch", note_ids=[n.id for n in notes]))
        return measured

    fetched, context, search, legacy = measured = run(scenario)
    print(sizes(measured))
    for result in (fetched, search, legacy):
        assert_within_cap(result, cut=True)
    # Context packs its budget instead of being cut: each long paragraph comes as the excerpt of its
    # sentences that match, under its id, and the bundle still fills the result.
    assert_within_cap(context, cut=False)
    assert context.tokens > CAP * 0.8 and any(entry.get("excerpts") for entry in context.result["notes"])
    assert len(fetched.result["notes"]) < FETCH_MAX_NOTES or not fetched.result["notes"][-1]["complete"]
    assert context.result["notes"] and len(search.result["hits"]) < SEARCH_MAX_HITS


def test_query_graph_changes_and_calendar_at_their_largest_page(typed: McpServer, owner: Any) -> None:
    for n in range(200):
        typed.deployment.notes.create(owner, title=f"Plover count {n} {prose(f'p{n}', 10)}", types=["Sighting"],
                                      properties={"Sighting.species": prose(f's{n}', 40), "Sighting.count": n},
                                      markdown="A body the query never returns.\n")
    targets = [typed.note(f"---\ntitle: Roost site {n}\n---\n\nA roost.\n") for n in range(200)]
    hub = typed.note("---\ntitle: Roost register\n---\n\n" + "\n\n".join(
        f"{prose(f'r{n}', 30)} See [[Roost site {n}]] for {prose(f'q{n}', 30)}" for n in range(200)) + "\n")
    year = datetime(2037, 1, 1, tzinfo=timezone.utc)
    for n in range(400):
        start = year + timedelta(hours=20 * n)
        typed.deployment.notes.create(owner, title=f"Ringing session {n} {prose(f'e{n}', 8)}", types=["Event"],
                                      properties={"Event.start": start.isoformat(),
                                                  "Event.end": (start + timedelta(hours=2)).isoformat()})
    assert len(targets) == 200

    async def scenario() -> list[Measured]:
        tap = Wiretap()
        async with typed.client(typed.tokens["agent"], transport=tap) as agent:
            await agent.start()
            return [await measure(agent, tap, "fastpad_query", type="Sighting", limit=200),
                    await measure(agent, tap, "fastpad_graph", note_id=hub.id, direction="out", limit=200),
                    await measure(agent, tap, "fastpad_changes", limit=500),
                    await measure(agent, tap, "fastpad_calendar", start=year.isoformat(),
                                  end=(year + timedelta(days=366)).isoformat())]

    measured = run(scenario)
    print(sizes(measured))
    for result in measured:
        assert_within_cap(result, cut=True)
    changes = measured[2].result
    assert changes["has_more"] is True  # what the cut left of the page comes with the next call


def test_memory_turn_propose_history_and_capabilities_at_their_largest(typed: McpServer, owner: Any) -> None:
    journal = long_note(typed, "Warden's standing instructions", "wardenqx", 400, 90)
    typed.deployment.memory.designate(owner, journal.id, name="standing instructions")
    target = long_note(typed, "Hide maintenance", "hideqx", MAX_OPS, 20)
    giant = typed.note("---\ntitle: Transcribed field book\n---\n\n" + prose("giant", 14_000) + "\n")
    scoped = typed.mint("note-set", "notes:read", note_ids=note_ids(typed, owner, 1_200))

    async def scenario() -> list[Measured]:
        tap = Wiretap()
        async with typed.client(typed.tokens["agent"], transport=tap) as agent:
            await agent.start()
            handles, page = {}, {"next_cursor": None}
            while "notes" not in page or page.get("next_cursor"):  # 101 blocks with handles span several results
                cursor = {"cursor": page["next_cursor"]} if page.get("next_cursor") else {}
                page = await agent.ok("fastpad_fetch", session=agent.session, note_ids=[target.id], with_handles=True,
                                      **cursor)
                handles.update(page["notes"][0]["handles"])
            ops = [{"op": "replace_block", "handle": handles[block["id"]],
                    "text": prose(f"op{i}", 120)} for i, block in enumerate(target.blocks[1:MAX_OPS + 1])]
            proposed = await measure(agent, tap, "fastpad_propose", note_id=target.id, ops=ops, idempotency_key="big",
                                     expected_frontier=page["notes"][0]["frontier"])
            measured = [
                await measure(agent, tap, "fastpad_memory", topic="standing instructions"),
                proposed,
                await measure(agent, tap, "fastpad_turn", action="diff", turn_id=proposed.result["turn"]["turn_id"]),
                await measure(agent, tap, "fastpad_history", note_id=giant.id, block_id=giant.blocks[0]["id"]),
            ]
        async with typed.client(scoped, transport=tap) as limited:
            measured.append(await measure(limited, tap, "fastpad_capabilities"))
        return measured

    memory, propose, turn, history, capabilities = measured = run(scenario)
    print(sizes(measured))
    for result in (memory, turn, capabilities):
        assert_within_cap(result, cut=True)
    # fastpad_propose takes no cursor: its cut diff names the call that pages through the whole of it.
    assert propose.tokens <= CAP and propose.result["truncated"] is True and "next_cursor" not in propose.result
    assert re.fullmatch(r"Truncated: \d+ of 100 diffs shown; the whole diff: fastpad_turn with action diff and "
                        r"this turn_id, which pages\.", propose.result["hint"]), propose.result["hint"]
    assert propose.tokens > CAP * 0.8
    # One block larger than any result can hold is left out, and the hint names it.
    assert history.tokens <= CAP and history.result["blocks"] == []
    assert f"{giant.blocks[0]['id']} was left out: too large for any one result" in history.result["hint"]
