"""An agent proposes a new note through ``fastpad_propose`` (``new_note``), over a real MCP
client on both backends: nothing exists until a person accepts it, then the note holds the
agent's text as ``agent_written``/``human_accepted``; under auto-apply it lands at once,
unreviewed; an agent's own grant lands it as ``agent_accepted``."""

from __future__ import annotations

import secrets

from fastpad.errors import NotFound
from tests.mcp.conftest import McpServer, run


def test_a_new_note_waits_for_a_person_and_lands_as_the_agents_accepted_words(mcp_server: McpServer) -> None:
    deployment, owner = mcp_server.deployment, mcp_server.deployment.operator_principal()
    word = "nn" + secrets.token_hex(4)
    note = {"title": f"Reading list {word}", "markdown": f"Books on {word}.\n\n- The first one\n",
            "types": [], "properties": {}}

    async def propose() -> tuple[dict, dict, dict, dict]:
        async with mcp_server.client(mcp_server.tokens["agent"]) as agent:
            await agent.start()
            dry = await agent.ok("fastpad_propose", session=agent.session, idempotency_key=word, new_note=note,
                                 dry_run=True)
            turn = await agent.ok("fastpad_propose", session=agent.session, idempotency_key=word, new_note=note)
            again = await agent.ok("fastpad_propose", session=agent.session, idempotency_key=word, new_note=note)
            masked = await agent.problem("fastpad_propose", "validation-failed", session=agent.session,
                                         idempotency_key=word + "m",
                                         new_note={"title": "x", "markdown": "key [redacted:aws-access-key:abc123]"})
            return dry, turn, again, masked

    dry, proposed, again, masked = run(propose)
    assert dry["turn"]["dry_run"] and dry["turn"]["turn_id"] is None
    turn = proposed["turn"]
    assert (turn["status"], turn["new_note"]["title"], again["turn"]["replayed"]) == ("pending", note["title"], True)
    assert again["turn"]["turn_id"] == turn["turn_id"]
    assert [d["after"] for d in proposed["diffs"]] == [f"Books on {word}.", "The first one"]
    assert masked["field_errors"][0]["field"] == "new_note.markdown"
    try:
        deployment.notes.get(owner, turn["note_id"])
        raise AssertionError("a proposed note exists before anyone accepted it")
    except NotFound:
        pass

    decision = deployment.review.accept(owner, turn["turn_id"])
    assert decision.turn.status == "accepted"
    view = deployment.notes.get(owner, turn["note_id"])
    assert view.title == note["title"]
    assert [(b["text"], b["origin"], b["review_state"]) for b in view.blocks] == [
        (f"Books on {word}.", "agent_written", "human_accepted"), ("The first one", "agent_written", "human_accepted")]

    async def read_back() -> tuple[dict, dict]:
        async with mcp_server.client(mcp_server.tokens["agent"]) as agent:
            await agent.start()
            status = await agent.ok("fastpad_turn", session=agent.session, action="status", turn_id=turn["turn_id"])
            return status, await agent.read(turn["note_id"])

    status, fetched = run(read_back)
    assert status["turn"]["status"] == "accepted" and f"Books on {word}." in fetched["markdown"]


def test_under_auto_apply_or_its_own_grant_a_new_note_lands_at_once(mcp_server: McpServer) -> None:
    deployment, owner = mcp_server.deployment, mcp_server.deployment.operator_principal()

    async def propose(token: str, key: str) -> dict:
        async with mcp_server.client(mcp_server.tokens[token]) as agent:
            await agent.start()
            proposed = await agent.ok("fastpad_propose", session=agent.session, idempotency_key=key,
                                      new_note={"title": f"By {token}", "markdown": f"Written by {token}.\n"})
            if token == "acceptor":
                accepted = await agent.ok("fastpad_turn", session=agent.session, action="accept",
                                          turn_id=proposed["turn"]["turn_id"])
                return accepted["turn"]
            return proposed["turn"]

    auto = run(lambda: propose("autoapply", "auto" + secrets.token_hex(4)))
    granted = run(lambda: propose("acceptor", "grant" + secrets.token_hex(4)))
    assert (auto["status"], auto["authority"], granted["status"], granted["authority"]) == (
        "accepted", "auto_apply", "accepted", "grant")
    for turn, state in ((auto, "unreviewed"), (granted, "agent_accepted")):
        [block] = deployment.notes.get(owner, turn["note_id"]).blocks
        assert (block["origin"], block["review_state"]) == ("agent_written", state)
    listed = {item.turn.id for item in deployment.review.activity(owner)}
    assert {auto["turn_id"], granted["turn_id"]} <= listed
