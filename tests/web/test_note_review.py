"""Review where you read, clicked in a real browser: an agent proposes over MCP (the official
Python SDK), the inbox count rises, and the person accepts one suggestion and rejects another on
the note itself; a proposal over a block the person changed meanwhile offers the three
versions and keeps theirs; an auto-applied block carries a margin mark until the person marks
it reviewed (fastpad_history then says so); Agent activity reverts a turn."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio
import httpx
from playwright.sync_api import expect

from tests.api.conftest import Server
from tests.mcp.conftest import Agent, sdk_agent
from tests.web.conftest import screenshot
from tests.web.helpers import block_texts, create_note, server_blocks, wait_saved
from tests.web.test_inbox import inbox_count

T = TypeVar("T")


def as_agent(server: Server, token: str, scenario: Callable[[Agent], Awaitable[T]]) -> T:
    """``scenario`` run by an MCP SDK client holding ``token``, in a thread of its own: this
    thread's event loop is Playwright's."""
    async def main() -> T:
        async with sdk_agent(f"{server.base_url}/mcp", token) as agent:
            return await scenario(await agent.start())

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, main).result()


def propose(server: Server, token: str, note_id: str, ops: Callable[[dict[str, str]], list[dict]]) -> dict:
    """The agent reads the note with handles and proposes ``ops(handles by block id)``: the turn."""
    async def scenario(agent: Agent) -> dict:
        entry = await agent.read(note_id)
        proposal = await agent.ok("fastpad_propose", session=agent.session, note_id=note_id,
                                  expected_frontier=entry["frontier"], idempotency_key=str(uuid.uuid4()),
                                  ops=ops(entry["handles"]))
        return proposal["turn"]

    return as_agent(server, token, scenario)


def agent_token(server: Server, label: str, *extra: str) -> str:
    return server.mint("notes:read,notes:propose", "--label", label, *extra)["token"]


def open_note_page(device: Any, server: Server, note_id: str) -> Any:
    page = device().new_page()
    page.goto(f"{server.base_url}/notes/{note_id}")
    page.wait_for_selector(".editor .block")
    return page


def test_one_suggestion_accepted_and_another_rejected_on_the_note(device: Any, web_server: Server,
                                                                 api: httpx.Client) -> None:
    note_id = create_note(api, "Agenda.\n\nBudget.\n", title="Planning day")
    first, second = [block["id"] for block in server_blocks(api, note_id)]
    page = open_note_page(device, web_server, note_id)
    before = inbox_count(page)

    token = agent_token(web_server, "Planning agent")
    turn = propose(web_server, token, note_id, lambda handles: [
        {"op": "insert_after", "handle": handles[first], "text": "Coffee at nine."},
        {"op": "insert_after", "handle": handles[second], "text": "Nothing over budget."},
    ])
    page.wait_for_function(f"() => Number(document.querySelector(\"a[href='/inbox'] .count\")?.textContent) > {before}")
    cards = page.locator(f".suggestion[data-turn='{turn['turn_id']}']")
    expect(cards).to_have_count(2)
    summary = page.locator(f".proposal-here[data-turn='{turn['turn_id']}']")
    expect(summary).to_contain_text("Planning agent proposes 2 changes to this note")
    # Each card sits on the block it goes after.
    expect(page.locator(f".block[data-id='{first}'] .suggestion")).to_contain_text("Coffee at nine.")
    expect(page.locator(f".block[data-id='{second}'] .suggestion")).to_contain_text("Nothing over budget.")
    screenshot(page, "inline-suggestion")

    cards.filter(has_text="Coffee at nine.").get_by_role("button", name="Accept", exact=True).click()
    expect(cards).to_have_count(1)
    page.wait_for_function("() => [...document.querySelectorAll('.editor .block .text')].some(e => e.textContent === 'Coffee at nine.')")
    cards.filter(has_text="Nothing over budget.").get_by_role("button", name="Reject", exact=True).click()
    expect(cards).to_have_count(0)
    expect(summary).to_have_count(0)

    async def status(agent: Agent) -> dict:
        return (await agent.ok("fastpad_turn", session=agent.session, action="status", turn_id=turn["turn_id"]))["turn"]

    decided = as_agent(web_server, token, status)  # an agent sees the turns it opened
    assert decided["status"] == "partially_accepted"
    expected = ["Agenda.", "Coffee at nine.", "Budget."]
    assert [block["text"] for block in server_blocks(api, note_id)] == expected
    assert block_texts(page) == expected


def test_a_proposal_over_a_block_the_person_changed_offers_three_versions_and_keeps_theirs(
        device: Any, web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "The meeting is on Monday.\n", title="Meeting")
    (block,) = [b["id"] for b in server_blocks(api, note_id)]
    turn = propose(web_server, agent_token(web_server, "Calendar agent"), note_id, lambda handles: [
        {"op": "replace_block", "handle": handles[block], "text": "The meeting is on Wednesday."}])
    page = open_note_page(device, web_server, note_id)
    card = page.locator(f".suggestion[data-turn='{turn['turn_id']}']")
    expect(card.locator("ins")).to_have_text("Wednesday")

    # The person rewrites the same word before deciding: accept can no longer apply it blindly.
    text = page.locator(f".block[data-id='{block}'] .text")
    text.click()
    page.keyboard.press("End")
    for _ in "Monday.":
        page.keyboard.press("Backspace")
    page.keyboard.type("Tuesday.")
    wait_saved(page)
    merge = card.locator(".merge")
    expect(merge).to_be_visible()
    expect(merge.locator(".mine")).to_have_text("The meeting is on Tuesday.")
    expect(merge.locator(".theirs")).to_have_text("The meeting is on Wednesday.")
    screenshot(page, "three-way-merge")

    card.get_by_role("button", name="Keep mine").click()
    expect(card).to_have_count(0)
    assert [b["text"] for b in server_blocks(api, note_id)] == ["The meeting is on Tuesday."]
    assert block_texts(page) == ["The meeting is on Tuesday."]
    assert not api.get(f"/v1/turns/{turn['turn_id']}").json()["open"]


def test_an_auto_applied_block_is_marked_until_the_person_marks_it_reviewed(
        device: Any, web_server: Server, api: httpx.Client) -> None:
    note_id = create_note(api, "Written by me.\n", title="Marked")
    (mine,) = [b["id"] for b in server_blocks(api, note_id)]
    token = agent_token(web_server, "Eager agent", "--auto-apply")
    turn = propose(web_server, token, note_id, lambda handles: [
        {"op": "insert_after", "handle": handles[mine], "text": "Written by the agent, unread."}])
    (landed,) = turn["landed_block_ids"]
    page = open_note_page(device, web_server, note_id)

    mark = page.locator(f".block[data-id='{landed}'] .margin-mark")
    expect(mark).to_have_count(1)
    assert "Eager agent" in mark.get_attribute("title") and "not reviewed" in mark.get_attribute("title")
    expect(page.locator(f".block[data-id='{mine}'] .margin-mark")).to_have_count(0)
    expect(page.locator(".unreviewed-here")).to_contain_text("1 block here was written by an agent")
    screenshot(page, "provenance-mark")

    mark.click()
    expect(mark).to_have_count(0)
    expect(page.locator(".unreviewed-here")).to_have_count(0)

    async def history(agent: Agent) -> dict:
        return (await agent.ok("fastpad_history", session=agent.session, note_id=note_id, block_id=landed))["blocks"][0]

    state = as_agent(web_server, token, history)
    assert (state["origin"], state["review_state"]) == ("agent_written", "human_accepted"), state


def test_agent_activity_reverts_an_auto_applied_turn(device: Any, web_server: Server,
                                                     api: httpx.Client) -> None:
    note_id = create_note(api, "Keep this.\n", title="Reverted")
    (mine,) = [b["id"] for b in server_blocks(api, note_id)]
    turn = propose(web_server, agent_token(web_server, "Hasty agent", "--auto-apply"), note_id, lambda handles: [
        {"op": "insert_after", "handle": handles[mine], "text": "Take this back."}])
    page = device().new_page()
    page.goto(f"{web_server.base_url}/agent-activity")
    row = page.locator("tr", has=page.locator(f'a[href="/review/{turn["turn_id"]}"]').first)
    row.get_by_role("button", name="Revert").click()
    page.wait_for_url("**/agent-activity**")
    expect(page.locator(f'a[href="/review/{turn["turn_id"]}"]')).to_have_count(0)
    assert [b["text"] for b in server_blocks(api, note_id)] == ["Keep this."]
    assert api.get(f"/v1/turns/{turn['turn_id']}").json()["status"] == "reverted"


def test_a_placeholder_copied_into_a_note_is_expanded_in_place_by_its_owner(device: Any, web_server: Server,
                                                                            api: httpx.Client) -> None:
    secret = "AKIA" + "ZXCVBNMASDFGHJKL"
    note_id = create_note(api, f"The deploy key is {secret} for now.\n", title="Keys")

    async def read(agent: Agent) -> str:
        return (await agent.read(note_id))["markdown"]

    shown = as_agent(web_server, agent_token(web_server, "Tidy agent"), read)
    assert secret not in shown
    start = shown.index("[redacted:")
    placeholder = shown[start:shown.index("]", start) + 1]
    # The person pastes the agent's answer, placeholder and all, into the note.
    page = open_note_page(device, web_server, note_id)
    page.locator(".editor .block .text").first.click()
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.type(f"The agent says: rotate {placeholder} before Friday.")
    wait_saved(page)
    page.reload()
    reveal = page.locator(".editor .block .reveal")
    before = api.get("/v1/changes", params={"start": "latest"}).json()["next_cursor"]
    reveal.get_by_role("button", name="Show the secret").click()
    expect(reveal.locator(".revealed")).to_have_text(secret)
    screenshot(page, "placeholder-revealed")
    reveal.get_by_role("button", name="Hide it").click()
    expect(reveal.locator(".revealed")).to_have_count(0)
    after = api.get("/v1/changes", params={"cursor": before}).json()["items"]
    kinds = [c["kind"] for c in after if c["note_id"] == note_id]
    assert kinds.count("secret_revealed") == 1  # the one expansion, logged


def test_a_proposed_link_is_decided_on_the_note(device: Any, web_server: Server,
                                               api: httpx.Client) -> None:
    target = create_note(api, "Where the money goes.\n", title="Budget sheet")
    note_id = create_note(api, "Spend less.\n", title="Savings plan")
    token = agent_token(web_server, "Linking agent")
    turn = propose(web_server, token, note_id, lambda handles: [
        {"op": "add_edge", "type": "related", "to_note_id": target}])
    page = open_note_page(device, web_server, note_id)
    proposed = page.locator(f".proposal-here[data-turn='{turn['turn_id']}'] .proposed-ops li")
    expect(proposed).to_contain_text("Link this note (related) to “Budget sheet”")
    proposed.get_by_role("button", name="Accept").click()
    expect(page.locator(f".proposal-here[data-turn='{turn['turn_id']}']")).to_have_count(0)
    # The target's page shows the backlink (the owner's terminal token here has no graph:read).
    target_page = open_note_page(device, web_server, target)
    expect(target_page.locator(".backlink")).to_contain_text("Savings plan")
    with web_server.client(web_server.mint("notes:read,graph:read", "--label", "tests: graph reader")["token"]) as reader:
        backlinks = reader.get(f"/v1/notes/{target}/links").json()["backlinks"]
    assert [(edge["source"]["id"], edge["type"]) for edge in backlinks] == [(note_id, "related")]
