"""The read tools that the end-to-end flow does not walk through: query, graph, changes,
history, memory and calendar — each answering from its service, through the outbound path,
with results that match the tool's output schema (``Agent`` checks every one)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from tests.mcp.conftest import McpServer, run

NOON = datetime(2031, 5, 6, 12, 0, tzinfo=timezone.utc)


def test_query_pages_rows_without_bodies(typed: McpServer) -> None:
    owner = typed.deployment.operator_principal()
    for count in (3, 12, 7):
        typed.deployment.notes.create(owner, title=f"Avocet x{count}", types=["Sighting"],
                                      properties={"Sighting.species": "avocet", "Sighting.count": count},
                                      markdown="A body the query never returns.\n")

    async def scenario() -> tuple[dict, dict]:
        async with typed.client(typed.tokens["reader"]) as agent:
            await agent.start()
            query = {"session": agent.session, "type": "Sighting", "limit": 2,
                     "filters": [{"property": "Sighting.species", "op": "eq", "value": "avocet"}],
                     "sort": [{"property": "Sighting.count", "direction": "desc"}]}
            first = await agent.ok("fastpad_query", **query)
            second = await agent.ok("fastpad_query", **query, cursor=first["next_cursor"])
            return first, second

    first, second = run(scenario)
    counts = [row["properties"]["Sighting.count"] for row in first["rows"] + second["rows"]]
    assert counts == [12, 7, 3] and "body" not in str(first)


def test_graph_walks_one_hop_with_evidence(mcp: McpServer) -> None:
    target = mcp.note("---\ntitle: Heron colony\n---\n\nTwelve nests this spring.\n")
    source = mcp.note("---\ntitle: Estuary walk\n---\n\nWe counted birds near the [[Heron colony]] at low tide.\n")

    async def scenario() -> dict:
        async with mcp.client(mcp.tokens["agent"]) as agent:
            await agent.start()
            return await agent.ok("fastpad_graph", session=agent.session, note_id=source.id, direction="out")

    edges = run(scenario)["edges"]
    assert [e["note_id"] for e in edges] == [target.id] and edges[0]["status"] == "asserted"
    assert edges[0]["evidence"]["block_id"] == source.blocks[0]["id"]
    assert "Heron colony" in edges[0]["evidence"]["text"]


def test_changes_follow_a_cursor(mcp: McpServer) -> None:
    async def scenario() -> tuple[dict, dict, str]:
        async with mcp.client(mcp.tokens["reader"]) as agent:
            await agent.start()
            head = await agent.ok("fastpad_changes", session=agent.session, limit=500)
            while head["has_more"]:
                head = await agent.ok("fastpad_changes", session=agent.session, cursor=head["next_cursor"], limit=500)
            note = mcp.note("---\ntitle: Fresh change\n---\n\nJust written.\n")
            after = await agent.ok("fastpad_changes", session=agent.session, cursor=head["next_cursor"])
            return head, after, note.id

    head, after, note_id = run(scenario)
    assert [(c["kind"], c["note_id"]) for c in after["changes"]] == [("create", note_id)]
    assert after["changes"][0]["actor"]["kind"] == "person" and after["next_cursor"] != head["next_cursor"]


def test_history_shows_one_block_with_its_author(mcp: McpServer) -> None:
    note = mcp.note("---\ntitle: Logbook\n---\n\nThe tide turned at four.\n")

    async def scenario() -> dict:
        async with mcp.client(mcp.tokens["reader"]) as agent:
            await agent.start()
            return await agent.ok("fastpad_history", session=agent.session, note_id=note.id,
                                  block_id=note.blocks[0]["id"])

    entry = run(scenario)["blocks"][0]
    assert entry["block_id"] == note.blocks[0]["id"] and entry["origin"] == "human_typed"
    assert entry["author"]["kind"] == "person" and "The tide turned at four." in entry["markdown"]
    assert "<fastpad-note boundary=" in entry["markdown"]


def test_memory_index_and_topic(mcp: McpServer) -> None:
    note = mcp.note("---\ntitle: Preferences\n---\n\nThe person prefers metric units.\n\nAnd short answers.\n")
    mcp.deployment.memory.designate(mcp.deployment.operator_principal(), note.id, name="preferences")

    async def scenario() -> tuple[dict, dict]:
        async with mcp.client(mcp.tokens["reader"]) as agent:
            await agent.start()
            index = await agent.ok("fastpad_memory", session=agent.session)
            topic = await agent.ok("fastpad_memory", session=agent.session, topic="Preferences")
            return index, topic

    index, topic = run(scenario)
    listed = {t["name"]: t for t in index["topics"]}
    assert listed["preferences"]["summary"] == "The person prefers metric units." and "notes" not in index
    assert topic["topic"] == "preferences" and "And short answers." in topic["notes"][0]["markdown"]


def test_calendar_events_and_busy_only_for_a_note_scoped_token(typed: McpServer) -> None:
    owner = typed.deployment.operator_principal()
    event = typed.deployment.notes.create(owner, title="Ringing session", types=["Event"], properties={
        "Event.start": NOON.isoformat(), "Event.end": (NOON + timedelta(hours=2)).isoformat()})
    scoped = typed.mint("calendar-scoped", "notes:read", note_ids=[event.id])
    window = {"start": (NOON - timedelta(days=1)).isoformat(), "end": (NOON + timedelta(days=1)).isoformat()}

    async def scenario() -> tuple[dict, dict]:
        async with typed.client(typed.tokens["reader"]) as whole, typed.client(scoped) as limited:
            await whole.start()
            await limited.start()
            return (await whole.ok("fastpad_calendar", session=whole.session, **window),
                    await limited.ok("fastpad_calendar", session=limited.session, **window))

    events, busy = run(scenario)
    assert [e["note_id"] for e in events["events"]] == [event.id] and events["busy_only"] is False
    assert busy["busy_only"] is True and "events" not in busy
    assert busy["busy"] == [{"start": NOON.isoformat(), "end": (NOON + timedelta(hours=2)).isoformat()}]
