"""Proposals and review over real HTTP (``fp serve`` on SQLite and PostgreSQL): the JSON
routes an agent and a person use, and the server-rendered pages driven like a browser
without JavaScript — form posts with CSRF — checking the note afterwards."""

from __future__ import annotations

import base64
import re
import uuid
from typing import Iterator

import httpx
import pytest
from loro import LoroDoc

from fastpad.notes import NoteDocument

from tests.mcp.wire import post

from .conftest import Server
from .helpers import assert_problem

SESSION = "x-fastpad-session"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


# ---------------------------------------------------------------------- helpers


@pytest.fixture(scope="session")
def browser(server: Server) -> Iterator[httpx.Client]:
    """The owner signed in through the /signin page (one sign-in per server: it is rate limited)."""
    with httpx.Client(base_url=server.base_url, timeout=10.0) as client:
        assert client.get("/agent-activity").headers["location"] == "/signin?next=/agent-activity"
        page = client.get("/signin", params={"next": "/agent-activity"})
        assert page.status_code == 200 and page.headers["x-frame-options"] == "DENY"
        wrong = client.post("/signin", data={"email": server.owner_email, "password": "not it",
                                             "csrf_token": csrf_of(page), "next": "/agent-activity"})
        assert wrong.status_code == 401 and "Wrong email or password" in wrong.text
        assert client.post("/signin", data={"email": server.owner_email, "password": server.owner_password,
                                            "csrf_token": "forged"}).status_code == 403
        signed_in = client.post("/signin", data={
            "email": server.owner_email, "password": server.owner_password, "csrf_token": csrf_of(page),
            "next": "/agent-activity",
        })
        assert signed_in.status_code == 303 and signed_in.headers["location"] == "/agent-activity"
        yield client
        page = client.get("/agent-activity")
        assert client.post("/signout", data={"csrf_token": csrf_of(page)}).headers["location"] == "/signin"
        assert client.get("/agent-activity").status_code == 303  # signed out: back to the sign-in page


def csrf_of(page: httpx.Response) -> str:
    match = _CSRF.search(page.text)
    assert match, page.text
    return match.group(1)


class HttpAgent:
    def __init__(self, server: Server, scopes: str, *extra: str) -> None:
        self.server = server
        self.token = server.mint(scopes, *extra)
        self.client = server.client(self.token["token"])
        self.session = self.client.post("/v1/agent-sessions").json()["session"]

    def read(self, note_id: str, floor: str | None = None) -> dict:
        params = {"floor": floor} if floor else {}
        response = self.client.get(f"/v1/notes/{note_id}/handles", headers={SESSION: self.session}, params=params)
        assert response.status_code == 200, response.text
        return response.json()

    def propose(self, note_id: str, ops: list[dict], frontier: str, **body) -> httpx.Response:
        payload = {"ops": ops, "expected_frontier": frontier, "idempotency_key": str(uuid.uuid4()), **body}
        return self.client.post(f"/v1/notes/{note_id}/proposals", json=payload, headers={SESSION: self.session})


def new_note(owner: httpx.Client, *texts: str) -> str:
    response = owner.post("/v1/notes", json={"title": "Trip", "blocks": [{"text": t} for t in texts]})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def note_blocks(owner: httpx.Client, note_id: str) -> list[tuple[str, str, str]]:
    return [(b["text"], b["origin"], b["review_state"]) for b in owner.get(f"/v1/notes/{note_id}").json()["blocks"]]


def person_types(owner: httpx.Client, note_id: str, block_index: int, text: str) -> None:
    """A person's editor changing one block: fetch the CRDT, edit, send the update."""
    updates = owner.get(f"/v1/notes/{note_id}/updates")
    doc = LoroDoc()
    doc.import_(updates.content)
    note = NoteDocument(doc)
    frontier = updates.headers["x-fastpad-frontier"]
    note.replace_text(note.blocks()[block_index].id, text)
    sent = owner.post(f"/v1/notes/{note_id}/ops", json={
        "ops": base64.b64encode(note.export_updates(frontier)).decode(), "expectedFrontier": frontier, "peerId": "ed",
    })
    assert sent.status_code == 200, sent.text


# ---------------------------------------------------------------------- JSON routes


def test_an_agent_proposes_over_http_and_cannot_accept_without_the_grant(server: Server, owner: httpx.Client) -> None:
    note = new_note(owner, "First.", "Second.")
    agent = HttpAgent(server, "notes:read,notes:propose")
    read = agent.read(note)
    assert [b["text"] for b in read["blocks"]] == ["First.", "Second."] and "{#" in read["markdown"]
    ops = [{"op": "replace_block", "handle": read["blocks"][0]["handle"], "text": "First, improved."}]
    body = {"ops": ops, "expected_frontier": read["frontier"], "idempotencyKey": "once"}
    created = agent.client.post(f"/v1/notes/{note}/proposals", json=body, headers={SESSION: agent.session})
    assert created.status_code == 201, created.text
    turn = created.json()
    assert turn["review_url"] == f"{server.base_url}/review/{turn['id']}" and turn["status"] == "pending"
    assert created.headers["location"] == f"/v1/turns/{turn['id']}"
    replay = agent.client.post(f"/v1/notes/{note}/proposals", json=body, headers={SESSION: agent.session})
    assert replay.status_code == 201 and replay.content == created.content and replay.headers["idempotent-replayed"]
    # The earlier spelling is the same key.
    earlier = {"ops": ops, "expected_frontier": read["frontier"], "idempotency_key": "once"}
    assert agent.client.post(f"/v1/notes/{note}/proposals", json=earlier,
                             headers={SESSION: agent.session}).content == created.content
    conflict = agent.client.post(f"/v1/notes/{note}/proposals", headers={SESSION: agent.session},
                                 json={**body, "ops": [{**ops[0], "text": "Other."}]})
    assert_problem(conflict, 409, "idempotency-conflict", server.base_url)

    refused = assert_problem(agent.client.post(f"/v1/turns/{turn['id']}/accept"), 403, "approve-not-permitted",
                             server.base_url)
    assert refused["review_url"] == turn["review_url"]
    assert_problem(agent.client.post(f"/v1/turns/{turn['id']}/revert"), 403, "policy-denied", server.base_url)
    assert note_blocks(owner, note)[0][0] == "First."
    mine = agent.client.get("/v1/turns", params={"status": "pending"}).json()["items"]
    assert [t["id"] for t in mine] == [turn["id"]]
    assert agent.client.get(f"/v1/turns/{turn['id']}/diff").json()["turn"]["diffs"][0]["hunks"]

    stale_or_foreign = HttpAgent(server, "notes:read,notes:propose")
    assert_problem(stale_or_foreign.propose(note, ops, read["frontier"]), 403, "out-of-scope", server.base_url)
    person_types(owner, note, 1, "Second, typed by a person.")
    assert_problem(agent.propose(note, ops, read["frontier"]), 409, "stale-frontier", server.base_url)
    dry = agent.propose(note, ops, read["frontier"], dry_run=True)
    assert_problem(dry, 409, "stale-frontier", server.base_url)
    fresh = agent.read(note)
    dry = agent.propose(note, [{**ops[0], "handle": fresh["blocks"][0]["handle"]}], fresh["frontier"], dry_run=True)
    assert dry.status_code == 200 and dry.json()["dry_run"] and dry.json()["id"] is None
    assert_problem(agent.client.get(f"/v1/notes/{note}/handles", headers={SESSION: "as1.nope"}), 422,
                   "validation-failed", server.base_url)


def test_an_agent_with_the_grant_accepts_its_own_turn_over_http(server: Server, owner: httpx.Client) -> None:
    note = new_note(owner, "First.", "Second.")
    agent = HttpAgent(server, "notes:read,notes:propose,turns:accept")
    read = agent.read(note)
    turn = agent.propose(note, [{"op": "insert_after", "handle": read["blocks"][1]["handle"], "text": "Third."}],
                         read["frontier"]).json()
    accepted = agent.client.post(f"/v1/turns/{turn['id']}/accept")
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["turn"]["authority"] == "grant"
    assert note_blocks(owner, note)[2] == ("Third.", "agent_written", "agent_accepted")


# ---------------------------------------------------------------------- the pages


def test_the_review_page_accepts_some_blocks_with_a_form_post(server: Server, owner: httpx.Client,
                                                             browser: httpx.Client) -> None:
    note = new_note(owner, "First.", "Second.")
    agent = HttpAgent(server, "notes:read,notes:propose")
    read = agent.read(note)
    turn = agent.propose(note, [
        {"op": "replace_block", "handle": read["blocks"][0]["handle"], "text": "First <b>improved</b>."},
        {"op": "insert_after", "handle": read["blocks"][1]["handle"], "text": "Third."},
    ], read["frontier"]).json()
    url = f"/review/{turn['id']}"
    page = browser.get(url)
    assert page.status_code == 200 and "What the agent read" in page.text and "What it wants" in page.text
    assert "<b>improved</b>" not in page.text and "&lt;b&gt;improved&lt;/b&gt;" in page.text  # agent text is text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    csrf = csrf_of(page)
    inserted = turn["diffs"][1]["block_id"]

    forged = browser.post(f"{url}/accept-some", data={"block_id": inserted, "csrf_token": "forged"})
    assert forged.status_code == 403
    elsewhere = browser.post(f"{url}/accept-some", data={"block_id": inserted, "csrf_token": csrf},
                             headers={"origin": "https://evil.example"})
    assert elsewhere.status_code == 403
    assert [b[0] for b in note_blocks(owner, note)] == ["First.", "Second."]

    done = browser.post(f"{url}/accept-some", data={"block_id": inserted, "csrf_token": csrf})
    assert done.status_code == 303 and done.headers["location"] == url
    assert note_blocks(owner, note) == [("First.", "human_typed", "human_accepted"),
                                        ("Second.", "human_typed", "human_accepted"),
                                        ("Third.", "agent_written", "human_accepted")]
    page = browser.get(url)
    assert "partially accepted" in page.text
    done = browser.post(f"{url}/reject", data={"csrf_token": csrf})
    assert done.status_code == 303
    assert owner.get(f"/v1/notes/{note}").json()["blocks"][0]["text"] == "First."
    assert browser.get(f"/v1/turns/{turn['id']}").json()["status"] == "partially_accepted"


def test_the_review_page_shows_the_merge_and_keeps_the_persons_words(server: Server, owner: httpx.Client,
                                                                     browser: httpx.Client) -> None:
    note = new_note(owner, "The launch is in May.", "Second.")
    agent = HttpAgent(server, "notes:read,notes:propose")
    read = agent.read(note)
    turn = agent.propose(note, [{"op": "replace_block", "handle": read["blocks"][0]["handle"],
                                 "text": "The launch is in May, in Lisbon."}], read["frontier"]).json()
    person_types(owner, note, 0, "The big launch is in May.")
    url = f"/review/{turn['id']}"
    page = browser.get(url)
    assert "Three-way merge" in page.text and "The big launch is in May, in Lisbon." in page.text
    block = turn["diffs"][0]["block_id"]
    refused = browser.post(f"{url}/accept", data={"csrf_token": csrf_of(page)})  # no choice made: nothing lands
    assert refused.status_code == 409 and "Three-way merge" in refused.text
    assert note_blocks(owner, note)[0][0] == "The big launch is in May."
    merged = browser.post(f"{url}/accept", data={"csrf_token": csrf_of(page), f"resolution.{block}": "suggestion"})
    assert merged.status_code == 303
    assert note_blocks(owner, note)[0] == ("The big launch is in May, in Lisbon.", "agent_written", "human_accepted")


def test_agent_activity_lists_an_agents_accept_for_review_and_revert(server: Server, owner: httpx.Client,
                                                                    browser: httpx.Client) -> None:
    note = new_note(owner, "First.", "Second.")
    agent = HttpAgent(server, "notes:read,notes:propose,turns:accept", "--label", "night shift")
    read = agent.read(note)
    reviewed_turn = agent.propose(note, [{"op": "replace_block", "handle": read["blocks"][0]["handle"],
                                          "text": "First, by the agent."}], read["frontier"]).json()
    assert agent.client.post(f"/v1/turns/{reviewed_turn['id']}/accept").status_code == 200
    # Its own agent-accepted text is below an agent's default floor: it reads it only by asking for less.
    assert [b["text"] for b in agent.read(note)["blocks"]] == ["Second."]
    read = agent.read(note, floor="all")
    reverted_turn = agent.propose(note, [{"op": "insert_after", "handle": read["blocks"][1]["handle"],
                                          "text": "Third, by the agent."}], read["frontier"]).json()
    assert agent.client.post(f"/v1/turns/{reverted_turn['id']}/accept").status_code == 200

    page = browser.get("/agent-activity")
    assert page.status_code == 200
    assert f"/review/{reviewed_turn['id']}" in page.text and f"/review/{reverted_turn['id']}" in page.text
    assert "night shift" in page.text and "accepted by the agent under turns:accept" in page.text
    csrf = csrf_of(page)

    assert browser.post(f"/agent-activity/{reviewed_turn['id']}/reviewed", data={"x": "no token"}).status_code == 403
    done = browser.post(f"/agent-activity/{reviewed_turn['id']}/reviewed", data={"csrf_token": csrf})
    assert done.status_code == 303 and done.headers["location"] == "/agent-activity"
    assert note_blocks(owner, note)[0] == ("First, by the agent.", "agent_written", "human_accepted")

    person_types(owner, note, 1, "Second, edited by the person afterwards.")
    done = browser.post(f"/review/{reverted_turn['id']}/revert", data={"csrf_token": csrf, "next": "/agent-activity"})
    assert done.status_code == 303 and done.headers["location"] == "/agent-activity"
    assert [b[0] for b in note_blocks(owner, note)] == ["First, by the agent.",
                                                        "Second, edited by the person afterwards."]
    page = browser.get("/agent-activity")
    assert reviewed_turn["id"] not in page.text and reverted_turn["id"] not in page.text
    # the audit of both accepts, under the agent and its token
    turns = browser.get("/v1/turns", params={"mine": "false"}).json()["items"]
    assert {t["id"]: t["status"] for t in turns}[reverted_turn["id"]] == "reverted"


def test_a_cited_source_becomes_a_link_and_its_retraction_reaches_the_accepted_block(
        server: Server, owner: httpx.Client, browser: httpx.Client) -> None:
    source = new_note(owner, "Revenue grew by a fifth in the second quarter, says the finance report.")
    target = new_note(owner, "Summary.")
    agent = HttpAgent(server, "notes:read,notes:propose")
    cited = agent.read(source)["blocks"][0]["id"]
    read = agent.read(target)
    copy = "Revenue grew by a fifth in the second quarter, says the finance report."
    copied = agent.propose(target, [{"op": "insert_after", "handle": read["blocks"][0]["handle"], "text": copy}],
                           read["frontier"])
    assert_problem(copied, 422, "cross-note-copy-denied", server.base_url)
    turn = agent.propose(target, [{"op": "insert_after", "handle": read["blocks"][0]["handle"],
                                   "text": "Q2 revenue was up about 20%.", "source_block_ids": [cited]}],
                         read["frontier"]).json()
    page = browser.get(f"/review/{turn['id']}")
    assert "Drew from:" in page.text and "says the finance report" in page.text
    assert browser.post(f"/review/{turn['id']}/accept", data={"csrf_token": csrf_of(page)}).status_code == 303
    accepted = browser.get(f"/v1/sources/{cited}/accepted").json()["accepted"]
    assert [(a["note_id"], a["turn_id"]) for a in accepted] == [(target, turn["id"])]
    assert_problem(agent.client.post(f"/v1/sources/{cited}/retract"), 403, "policy-denied", server.base_url)
    retracted = browser.post(f"/v1/sources/{cited}/retract", json={"reason": "wrong quarter"},
                             headers={"x-csrf-token": csrf_of(page)})
    assert retracted.status_code == 200, retracted.text
    assert [a["block_id"] for a in retracted.json()["accepted"]] == [turn["diffs"][0]["block_id"]]
    assert "retracted" in browser.get(f"/review/{turn['id']}").text


def test_a_turn_that_only_proposed_an_edge_is_accepted_and_reverted_from_its_page(
        server: Server, owner: httpx.Client, browser: httpx.Client) -> None:
    note, other = new_note(owner, "Plan."), new_note(owner, "Budget.")
    agent = HttpAgent(server, "notes:read,notes:propose")
    read = agent.read(note)
    turn = agent.propose(note, [{"op": "add_edge", "type": "related", "to_note_id": other}], read["frontier"]).json()
    url = f"/review/{turn['id']}"
    page = browser.get(url)
    assert "/revert" not in page.text  # nothing accepted yet
    assert browser.post(f"{url}/accept", data={"csrf_token": csrf_of(page), "op": "0"}).status_code == 303

    def related() -> list[str]:
        response = browser.get(f"/v1/notes/{note}/links")
        assert response.status_code == 200, response.text
        links = response.json()["outgoing"]
        return [edge["target"]["id"] for edge in links if edge["type"] == "related"]

    assert related() == [other]
    page = browser.get(url)
    assert f'action="{url}/revert"' in page.text  # an accepted op is enough to offer the revert
    assert browser.post(f"{url}/revert", data={"csrf_token": csrf_of(page)}).status_code == 303
    assert related() == []


def test_reverting_over_the_api_says_what_became_of_the_edges_it_took_back(
        server: Server, owner: httpx.Client, browser: httpx.Client) -> None:
    note, kept, dropped = new_note(owner, "Plan."), new_note(owner, "Budget."), new_note(owner, "Old idea.")
    agent = HttpAgent(server, "notes:read,notes:propose")
    read = agent.read(note)
    turn = agent.propose(note, [{"op": "add_edge", "type": "related", "to_note_id": target}
                                for target in (kept, dropped)], read["frontier"]).json()
    page = browser.get(f"/review/{turn['id']}")
    accepted = browser.post(f"/review/{turn['id']}/accept", data={"csrf_token": csrf_of(page), "op": ["0", "1"]})
    assert accepted.status_code == 303
    as_person = {"x-csrf-token": csrf_of(page)}  # the API, as the signed-in person
    edges = {edge["target"]["id"]: edge["id"] for edge in browser.get(f"/v1/notes/{note}/links").json()["outgoing"]}
    # A person makes one of the two edges theirs before the revert.
    assert browser.post(f"/v1/links/{edges[kept]}/promote", headers=as_person).status_code == 200

    reverted = browser.post(f"/v1/turns/{turn['id']}/revert", headers=as_person)
    assert reverted.status_code == 200, reverted.text
    assert reverted.json()["turn"]["status"] == "reverted"
    assert sorted(reverted.json()["undone"], key=lambda u: u["id"]) == sorted([
        {"kind": "link", "id": edges[kept], "outcome": "kept_confirmed"},
        {"kind": "link", "id": edges[dropped], "outcome": "removed"},
    ], key=lambda u: u["id"])
    assert [edge["target"]["id"] for edge in browser.get(f"/v1/notes/{note}/links").json()["outgoing"]] == [kept]


# ---------------------------------------------------------------------- a person's edits to agent text


def agent_reads(server: Server, note_id: str) -> dict:
    """``fastpad_fetch`` over MCP for an agent at its default floor (human): the note's entry."""
    token = server.mint("notes:read", "--label", "tests: reader agent")["token"]

    def call(name: str, **arguments) -> dict:
        response = post(f"{server.base_url}/mcp", token, "tools/call", {"name": name, "arguments": arguments})
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        assert not result.get("isError"), result
        return result["structuredContent"]

    session = call("fastpad_capabilities")["session"]
    return call("fastpad_fetch", session=session, note_ids=[note_id])["notes"][0]


def test_a_persons_typo_fix_leaves_auto_applied_text_the_agents_until_they_rewrite_it(
        server: Server, owner: httpx.Client, browser: httpx.Client) -> None:
    note = new_note(owner, "Launch notes, by the person.")
    agent = HttpAgent(server, "notes:read,notes:propose", "--auto-apply", "--label", "tests: auto-apply")
    read = agent.read(note)
    typo = "The launch moves to June; book the venue in Portto."
    turn = agent.propose(note, [{"op": "insert_after", "handle": read["blocks"][0]["handle"], "text": typo}],
                         read["frontier"]).json()
    assert turn["authority"] == "auto_apply"
    block = owner.get(f"/v1/notes/{note}").json()["blocks"][1]["id"]

    person_types(owner, note, 1, "The launch moves to June; book the venue in Porto.")  # the browser's write path
    assert note_blocks(owner, note)[1] == ("The launch moves to June; book the venue in Porto.", "agent_written",
                                           "unreviewed")
    author = owner.get(f"/v1/notes/{note}/blocks/{block}").json()["author"]
    assert author["kind"] == "person"  # the record that a person edited the agent's block
    seen = agent_reads(server, note)
    assert "venue" not in seen["markdown"] and seen["blocks_withheld"] == 1  # still not human text to an agent
    queue = owner.get("/v1/turns", params={"activity": "true"}).json()["items"]
    assert turn["id"] in [t["id"] for t in queue]
    page = browser.get("/agent-activity")
    assert f"/review/{turn['id']}" in page.text
    # Marking it reviewed takes it off the queue; auto-applied text stays unreviewed (spec › Agents).
    assert browser.post(f"/agent-activity/{turn['id']}/reviewed", data={"csrf_token": csrf_of(page)}).status_code == 303
    assert note_blocks(owner, note)[1][1:] == ("agent_written", "unreviewed")

    person_types(owner, note, 1, "We keep May and Lisbon, as the team agreed today.")  # every sentence replaced
    assert note_blocks(owner, note)[1][1:] == ("human_typed", "human_accepted")
    seen = agent_reads(server, note)
    assert "as the team agreed today" in seen["markdown"] and seen["blocks_withheld"] == 0


def test_marking_reviewed_ratifies_an_agents_accept_a_person_corrected_meanwhile(
        server: Server, owner: httpx.Client, browser: httpx.Client) -> None:
    note = new_note(owner, "First.")
    agent = HttpAgent(server, "notes:read,notes:propose,turns:accept", "--label", "tests: accepting agent")
    read = agent.read(note)
    turn = agent.propose(note, [{"op": "insert_after", "handle": read["blocks"][0]["handle"],
                                 "text": "Second, by the agnet."}], read["frontier"]).json()
    assert agent.client.post(f"/v1/turns/{turn['id']}/accept").status_code == 200
    person_types(owner, note, 1, "Second, by the agent.")
    assert note_blocks(owner, note)[1] == ("Second, by the agent.", "agent_written", "agent_accepted")
    assert agent_reads(server, note)["blocks_withheld"] == 1  # an agent's accept is not a person's

    page = browser.get("/agent-activity")
    assert browser.post(f"/agent-activity/{turn['id']}/reviewed", data={"csrf_token": csrf_of(page)}).status_code == 303
    assert note_blocks(owner, note)[1] == ("Second, by the agent.", "agent_written", "human_accepted")
    assert agent_reads(server, note)["blocks_withheld"] == 0
