"""Every way a tool call fails: an ``isError`` result whose structured content is the RFC 9457
problem document (checked against the tool's output schema by ``Agent``), naming the next call.
Sessions: required, and bound to the credential that opened them."""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from fastpad.notes import new_id
from fastpad.security.handles import mint_handle
from fastpad.store import utcnow
from tests.mcp.conftest import McpServer, run

NOTE = "---\ntitle: {title}\n---\n\n# {title}\n\nThe first paragraph of {title}.\n\nThe second paragraph of {title}.\n"


def insert_after(handle: str, text: str) -> list[dict[str, Any]]:
    return [{"op": "insert_after", "handle": handle, "text": text}]


def test_the_session_is_required_and_bound_to_its_credential(mcp: McpServer) -> None:
    note = mcp.note(NOTE.format(title="Session binding"))

    async def scenario() -> None:
        async with mcp.client(mcp.tokens["agent"]) as agent, mcp.client(mcp.tokens["acceptor"]) as other:
            await agent.start()
            await other.start()
            missing = await agent.problem("fastpad_fetch", "validation-failed", note_ids=[note.id])
            assert missing["field_errors"][0]["field"] == "session"
            assert missing["next"].startswith("fastpad_capabilities")
            foreign = await agent.problem("fastpad_fetch", "validation-failed", session=other.session,
                                          note_ids=[note.id])
            assert foreign["field_errors"][0]["code"] == "invalid_session"
            forged = await agent.problem("fastpad_search", "validation-failed", session="as1.forged", query="x")
            assert forged["field_errors"][0]["field"] == "session"
            await agent.ok("fastpad_fetch", session=agent.session, note_ids=[note.id])

    run(scenario)


def test_not_found_and_validation_failed(mcp: McpServer) -> None:
    async def scenario() -> None:
        async with mcp.client(mcp.tokens["agent"]) as agent:
            await agent.start()
            gone = await agent.problem("fastpad_fetch", "not-found", session=agent.session, note_ids=[new_id()])
            assert gone["next"].startswith("fastpad_search")
            bad = await agent.problem("fastpad_search", "validation-failed", session=agent.session, query="x",
                                      limit=500, surprise=True)
            assert {fe["field"] for fe in bad["field_errors"]} == {"limit", "surprise"}
            ops = await agent.problem("fastpad_propose", "validation-failed", session=agent.session,
                                      note_id=new_id(), expected_frontier="fp1:x", idempotency_key="k",
                                      ops=[{"op": "explode"}])
            assert ops["field_errors"][0]["field"].startswith("ops[0]")
            bare = await agent.problem("fastpad_propose", "validation-failed", session=agent.session)
            assert [(fe["field"], fe["code"]) for fe in bare["field_errors"]] == [("idempotency_key", "required")]
            # An edit names its note, ops and frontier; a new note is proposed with new_note instead.
            keyed = await agent.problem("fastpad_propose", "validation-failed", session=agent.session,
                                        idempotency_key="k")
            missing = sorted((fe["field"], fe["code"]) for fe in keyed["field_errors"])
            assert missing == [(name, "required") for name in ("expected_frontier", "note_id", "ops")]
            both = await agent.problem("fastpad_propose", "validation-failed", session=agent.session,
                                       idempotency_key="k", note_id=new_id(), new_note={"title": "T"})
            assert [(fe["field"], fe["code"]) for fe in both["field_errors"]] == [("note_id", "exclusive")]
            extras = await agent.problem("fastpad_search", "validation-failed", session=agent.session, query="x",
                                         surprise=1, other=2)
            assert sorted(fe["field"] for fe in extras["field_errors"]) == ["other", "surprise"]

    run(scenario)


def test_stale_frontier_after_the_note_moved(mcp: McpServer) -> None:
    note = mcp.note(NOTE.format(title="Stale frontier"))

    async def scenario() -> None:
        async with mcp.client(mcp.tokens["acceptor"]) as agent:
            await agent.start()
            read = await agent.read(note.id)
            handle = read["handles"][note.blocks[1]["id"]]
            first = await agent.ok("fastpad_propose", session=agent.session, note_id=note.id, idempotency_key="s1",
                                   expected_frontier=read["frontier"], ops=insert_after(handle, "Landed first."))
            accepted = await agent.ok("fastpad_turn", session=agent.session, action="accept",
                                      turn_id=first["turn"]["turn_id"])
            assert accepted["turn"]["status"] == "accepted" and accepted["frontier"] != read["frontier"]
            stale = await agent.problem("fastpad_propose", "stale-frontier", session=agent.session, note_id=note.id,
                                        idempotency_key="s2", expected_frontier=read["frontier"],
                                        ops=insert_after(handle, "Computed against the old note."))
            assert stale["retryable"] is True and "with_handles" in stale["next"]

    run(scenario)


def test_handle_expired(mcp: McpServer) -> None:
    note = mcp.note(NOTE.format(title="Expired handle"))

    async def scenario() -> None:
        async with mcp.client(mcp.tokens["agent"]) as agent:
            await agent.start()
            read = await agent.read(note.id)
            old = mint_handle(mcp.deployment.secret, session_id=agent.session,
                              token_id=f"token:{mcp.token_ids['agent']}", note_id=note.id,
                              block_id=note.blocks[1]["id"], frontier=read["frontier"],
                              now=utcnow() - timedelta(minutes=6))  # read six minutes ago
            expired = await agent.problem("fastpad_propose", "handle-expired", session=agent.session,
                                          note_id=note.id, idempotency_key="e1", expected_frontier=read["frontier"],
                                          ops=insert_after(old, "Too late."))
            assert expired["next"].startswith("fastpad_fetch with with_handles")

    run(scenario)


def test_out_of_scope_handles_and_notes(mcp: McpServer) -> None:
    mine, theirs = mcp.note(NOTE.format(title="Scoped note")), mcp.note(NOTE.format(title="Outside the set"))
    scoped = mcp.mint("scoped", "notes:read,notes:propose", note_ids=[mine.id])

    async def scenario() -> None:
        async with mcp.client(mcp.tokens["agent"]) as agent, mcp.client(scoped) as limited:
            await agent.start()
            await limited.start()
            read = await agent.read(mine.id)
            borrowed = read["handles"][mine.blocks[1]["id"]]  # another credential's handle is inert here
            await limited.problem("fastpad_propose", "out-of-scope", session=limited.session, note_id=mine.id,
                                  idempotency_key="o1", expected_frontier=read["frontier"],
                                  ops=insert_after(borrowed, "Borrowed handle."))
            # A note outside the set is out-of-scope, and so is an id no note has: the answer comes
            # from the set alone, so it never says whether a note outside it exists.
            for outside in (theirs.id, new_id()):
                await limited.problem("fastpad_fetch", "out-of-scope", session=limited.session, note_ids=[outside])
            fetched = await limited.ok("fastpad_fetch", session=limited.session, note_ids=[mine.id, theirs.id])
            assert [n["note_id"] for n in fetched["notes"]] == [mine.id] and fetched["out_of_scope"] == [theirs.id]
            # Named inside a proposal, the same answer, field by field.
            frontier = (await limited.read(mine.id))["frontier"]
            for outside in (theirs.id, new_id()):
                refused = await limited.problem(
                    "fastpad_propose", "validation-failed", session=limited.session, note_id=mine.id,
                    idempotency_key=f"edge-{outside}", expected_frontier=frontier,
                    ops=[{"op": "add_edge", "type": "related", "to_note_id": outside}])
                assert [(fe["field"], fe["code"]) for fe in refused["field_errors"]] == [
                    ("ops[0].to_note_id", "out_of_scope")]
            capabilities = await limited.ok("fastpad_capabilities")
            assert capabilities["writable"] == "note_set" and capabilities["note_ids"] == [mine.id]

    run(scenario)


def test_insufficient_scope_over_stdio_is_a_result(mcp: McpServer, tmp_path: Path) -> None:
    async def scenario() -> dict[str, Any]:
        async with Client(mcp.stdio(mcp.tokens["searcher"], tmp_path), mode="legacy") as client:
            result = await client.call_tool("fastpad_propose", {})
            assert result.is_error
            return result.structured_content

    problem = run(scenario)
    assert problem["type"] == f"{mcp.base_url}/errors/insufficient-scope"
    assert problem["missing"] == ["notes:propose"] and problem["required"] == ["notes:read", "notes:propose",
                                                                                 "search:read"]


@pytest.mark.parametrize("read_with", ["fastpad_fetch", "fastpad_context"])
def test_cross_note_copy_denied(mcp: McpServer, read_with: str) -> None:
    """Both read surfaces feed the copy guard: text read from one note cannot be pasted into another."""
    word = "tarn" + secrets.token_hex(3)
    # Words of its own, so no text this credential read in another test matches it.
    sentence = " ".join(f"{word}{i}" for i in range(16))
    source = mcp.note(f"---\ntitle: Copy source {word}\n---\n\nThe migration of {sentence} ends this month.\n")
    target = mcp.note(NOTE.format(title=f"Copy target {word}"))

    async def scenario() -> None:
        async with mcp.client(mcp.tokens["agent"]) as agent:
            await agent.start()
            if read_with == "fastpad_fetch":
                await agent.ok("fastpad_fetch", session=agent.session, note_ids=[source.id])  # no handles needed
            else:
                bundle = await agent.ok("fastpad_context", session=agent.session, query=f"{word}3 {word}4 migration")
                assert source.id in [entry["note_id"] for entry in bundle["notes"]]
            read = await agent.read(target.id)
            copied = source.blocks[0]["text"]
            denied = await agent.problem("fastpad_propose", "cross-note-copy-denied", session=agent.session,
                                         note_id=target.id, idempotency_key=f"c-{read_with}",
                                         expected_frontier=read["frontier"],
                                         ops=insert_after(read["handles"][target.blocks[1]["id"]], copied))
            assert denied["source_note_ids"] == [source.id]
            assert "source_block_ids" in denied["next"]

    run(scenario)


def test_approve_not_permitted_names_the_review_url(mcp: McpServer) -> None:
    note = mcp.note(NOTE.format(title="Needs a person"))

    async def scenario() -> None:
        async with mcp.client(mcp.tokens["agent"]) as agent:
            await agent.start()
            read = await agent.read(note.id)
            proposed = await agent.ok("fastpad_propose", session=agent.session, note_id=note.id,
                                      idempotency_key="a1", expected_frontier=read["frontier"],
                                      ops=insert_after(read["handles"][note.blocks[2]["id"]], "Please accept me."))
            turn = proposed["turn"]
            refused = await agent.problem("fastpad_turn", "approve-not-permitted", session=agent.session,
                                          action="accept", turn_id=turn["turn_id"])
            assert refused["review_url"] == turn["review_url"] and turn["review_url"] in refused["next"]
            abandoned = await agent.ok("fastpad_turn", session=agent.session, action="abandon",
                                       turn_id=turn["turn_id"])
            assert abandoned["turn"]["status"] == "abandoned"
            mine = await agent.ok("fastpad_turn", session=agent.session, action="list")
            assert turn["turn_id"] in [t["turn_id"] for t in mine["turns"]]

    run(scenario)


def test_rate_limited_per_call_with_retry_after(mcp: McpServer) -> None:
    async def scenario() -> dict[str, Any]:
        async with mcp.client(mcp.tokens["limited"]) as agent:
            await agent.start()  # one call
            for _ in range(2):
                await agent.ok("fastpad_memory", session=agent.session)
            await agent.client.list_tools()  # listing is not a call
            return await agent.problem("fastpad_memory", "rate-limited", session=agent.session)

    problem = run(scenario)
    assert problem["retryable"] is True and problem["retry_after_ms"] > 0
    assert problem["next"] == "wait retry_after_ms, then call again"


def test_a_redaction_placeholder_never_overwrites_the_secret(mcp: McpServer) -> None:
    key = "AKIAZ7QX3M5V2PLK4WQE"
    note = mcp.note(f"---\ntitle: Deploy keys\n---\n\nThe deploy user is ci-bot with key {key} for now.\n")

    async def scenario() -> None:
        async with mcp.client(mcp.tokens["agent"]) as agent:
            await agent.start()
            read = await agent.read(note.id)
            assert key not in json.dumps(read) and "[redacted:aws-access-key:" in read["markdown"]
            shown = read["markdown"].split("for now.")[0].split("\n")[-1].split(" {#")[0]
            edited = shown.replace("The deploy user", "Our deploy user")  # an edit that keeps the placeholder
            refused = await agent.problem("fastpad_propose", "validation-failed", session=agent.session,
                                          note_id=note.id, idempotency_key="r1", expected_frontier=read["frontier"],
                                          dry_run=True, ops=[{"op": "replace_block", "text": edited + " for now.",
                                                              "handle": read["handles"][note.blocks[0]["id"]]}])
            assert refused["field_errors"][0] == {
                "field": "ops[0].text", "code": "redacted_placeholder",
                "message": "carries a redaction placeholder; leave the secret's block as it is and propose around it"}

    run(scenario)
    assert key in mcp.deployment.notes.markdown(mcp.deployment.operator_principal(), note.id)
