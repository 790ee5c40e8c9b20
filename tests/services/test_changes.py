"""ChangeFeedService: what each change carries, paging, cursors, note sets and the long poll."""

from __future__ import annotations

import asyncio
import base64
import threading
import time

import pytest

from fastpad.errors import InsufficientScope, ValidationFailed
from fastpad.knowledge.changes import ChangeFeedService, decode_cursor, encode_cursor
from fastpad.notes import Block
from tests.helpers_store import agent_propose, edit_ops


@pytest.fixture
def feed(svc) -> ChangeFeedService:
    # A long database re-check: a prompt long-poll answer can only come from the commit signal.
    return ChangeFeedService(svc.store, recheck_s=30.0)


def agent(svc, ws, *, scopes=("notes:read",), note_ids=None, auto_apply=False, label="bot"):
    plaintext, _ = svc.tokens.create(ws.id, scopes=list(scopes), note_ids=note_ids, auto_apply=auto_apply,
                                     label=label)
    return svc.tokens.authenticate(plaintext)


def everything(feed, principal, limit=1000):
    return feed.changes(principal, None, limit).items


def test_each_change_says_what_changed_and_who_changed_it(svc, ws, feed) -> None:
    note = svc.notes.create(ws.owner, title="Plan", blocks=[Block(None, "paragraph", "one"),
                                                           Block(None, "paragraph", "two")])
    first, second = (b["id"] for b in note.blocks)
    ops, frontier = edit_ops(svc.store, ws.id, note.id, lambda d: d.replace_text(second, "deux"))
    svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id="1", expected_frontier=frontier)
    ops, frontier = edit_ops(svc.store, ws.id, note.id, lambda d: d.delete(first))
    svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id="1", expected_frontier=frontier)
    svc.notes.archive(ws.owner, note.id)
    svc.notes.trash(ws.owner, note.id)
    svc.notes.restore(ws.owner, note.id)

    items = everything(feed, ws.owner)
    assert [c.kind for c in items] == ["create", "ops", "ops", "archive", "trash", "restore"]
    assert {c.note_id for c in items} == {note.id}
    assert [c.block_ids for c in items] == [(first, second), (second,), (first,), (), (), ()]
    assert [c.blocks_touched for c in items] == [2, 1, 1, 0, 0, 0]
    assert {(c.actor_kind, c.actor_id, c.token_id) for c in items} == {("person", ws.owner_id, None)}
    assert all(c.at == svc.clock() for c in items)
    body = items[1].as_dict()
    assert body["actor"] == {"kind": "person", "id": ws.owner_id, "token_id": None}
    assert set(body) == {"cursor", "kind", "note_id", "subject_id", "block_ids", "blocks_touched", "actor", "at"}


def test_an_agent_write_is_attributed_to_the_agent_and_its_token(svc, ws, feed) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "hello")])
    bot = agent(svc, ws, scopes=("notes:read", "notes:propose"), auto_apply=True)
    block_id = note.blocks[0]["id"]
    turn = agent_propose(svc, bot, note.id, [{"op": "replace_block", "block": block_id, "text": "hello from a bot"}])
    agent_changes = [c for c in everything(feed, bot) if c.actor_kind == "agent"]
    assert agent_changes, "the auto-applied proposal is in the feed"
    assert {(c.actor_kind, c.actor_id, c.token_id) for c in agent_changes} == {
        ("agent", bot.principal_id, bot.token_id)}
    assert any(c.subject_id == turn.id for c in agent_changes)
    assert any(block_id in (c.block_ids or ()) for c in agent_changes), "the landing names the block it changed"


def test_a_big_write_lists_the_first_hundred_blocks_and_counts_them_all(svc, ws, feed) -> None:
    svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", f"line {i}") for i in range(150)])
    [change] = everything(feed, ws.owner)
    assert len(change.block_ids) == 100 and change.blocks_touched == 150


def test_pages_follow_next_cursor_without_gaps_or_repeats(svc, ws, feed) -> None:
    notes = [svc.notes.create(ws.owner, title=f"n{i}").id for i in range(7)]
    seen, cursor, pages = [], None, 0
    while True:
        page = feed.changes(ws.owner, cursor, 3)
        pages += 1
        seen += [c.note_id for c in page.items]
        cursor = page.next_cursor
        if not page.has_more:
            break
    assert seen == notes and pages == 3
    # At the head: an empty page that keeps the cursor where it is.
    again = feed.changes(ws.owner, cursor, 3)
    assert (again.items, again.next_cursor, again.has_more) == ([], cursor, False)
    # A later write is the next thing the same cursor returns.
    late = svc.notes.create(ws.owner, title="late").id
    assert [c.note_id for c in feed.changes(ws.owner, cursor).items] == [late]
    # Each item's own cursor resumes right after it.
    middle = everything(feed, ws.owner)[3]
    assert [c.note_id for c in feed.changes(ws.owner, middle.cursor).items] == notes[4:] + [late]


def test_an_empty_feed_still_hands_out_a_cursor(svc, ws, feed) -> None:
    page = feed.changes(ws.owner)
    assert page.items == [] and decode_cursor(page.next_cursor) == 0 and page.has_more is False


def test_a_note_scoped_token_reads_only_its_notes_and_its_cursor_skips_the_rest(svc, ws, feed) -> None:
    mine = svc.notes.create(ws.owner, title="mine")
    svc.notes.create(ws.owner, title="secret one")
    bot = agent(svc, ws, note_ids=[mine.id])
    svc.notes.create(ws.owner, title="secret two")
    svc.notes.archive(ws.owner, mine.id)
    svc.notes.create(ws.owner, title="secret three")

    page = feed.changes(bot, None, 1)
    assert [(c.kind, c.note_id) for c in page.items] == [("create", mine.id)] and page.has_more
    page = feed.changes(bot, page.next_cursor, 1)
    assert [(c.kind, c.note_id) for c in page.items] == [("archive", mine.id)]
    page = feed.changes(bot, page.next_cursor, 1)
    # Nothing else it may see, but the cursor moved past the invisible rows to the head.
    assert page.items == [] and page.has_more is False
    assert page.next_cursor == feed.changes(ws.owner, None, 1000).next_cursor
    # A token that can see nothing learns nothing, not even the head.
    blind = ws.owner.sees_nothing_in(ws.id)
    assert feed.changes(blind).next_cursor == encode_cursor(0)


def test_a_note_scoped_read_looks_at_a_bounded_window_and_says_there_is_more(svc, ws) -> None:
    feed = ChangeFeedService(svc.store, scan_window=3)
    first = svc.notes.create(ws.owner, title="first")
    for i in range(7):
        svc.notes.create(ws.owner, title=f"other {i}")
    last = svc.notes.create(ws.owner, title="last")
    bot = agent(svc, ws, note_ids=[first.id, last.id])
    pages = []
    cursor = None
    while True:
        page = feed.changes(bot, cursor, 100)
        pages.append([c.note_id for c in page.items])
        cursor = page.next_cursor
        if not page.has_more:
            break
    # Nine rows, three at a time: short pages (one empty) that never skip a visible change.
    assert pages == [[first.id], [], [last.id]]
    assert cursor == feed.changes(ws.owner, None, 100).next_cursor


def test_bad_input_is_a_clear_error(svc, ws, feed) -> None:
    svc.notes.create(ws.owner, title="x")
    for cursor in ("nope", encode_cursor(1)[:-1] + "!", base64.urlsafe_b64encode(b"n1:5").decode(),
                   base64.urlsafe_b64encode(b"c1:-1").decode(), "x" * 100):
        with pytest.raises(ValidationFailed) as bad:
            feed.changes(ws.owner, cursor)
        assert bad.value.field_errors[0].code == "malformed_cursor"
    with pytest.raises(ValidationFailed) as ahead:
        feed.changes(ws.owner, encode_cursor(2))
    assert ahead.value.field_errors[0].code == "cursor_ahead"
    for limit in (0, 1001, True, "5"):
        with pytest.raises(ValidationFailed):
            feed.changes(ws.owner, None, limit)
    with pytest.raises(ValidationFailed):
        asyncio.run(feed.long_poll(ws.owner, wait_ms=30_001))
    with pytest.raises(InsufficientScope):
        feed.changes(agent(svc, ws, scopes=("search:read",)))


def _write_soon(svc, ws, delay: float, **create) -> threading.Thread:
    def write() -> None:
        time.sleep(delay)
        svc.notes.create(ws.owner, **create)

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_a_long_poll_returns_as_soon_as_a_change_commits(svc, ws, feed) -> None:
    cursor = feed.changes(ws.owner).next_cursor
    writer = _write_soon(svc, ws, 0.2, title="arrives")
    started = time.monotonic()
    page = asyncio.run(feed.long_poll(ws.owner, cursor, wait_ms=20_000))
    elapsed = time.monotonic() - started
    writer.join()
    assert [c.kind for c in page.items] == ["create"]
    assert 0.15 < elapsed < 3.0  # woken by the commit, not by the 30 s re-check or the 20 s timeout


def test_a_long_poll_with_nothing_new_returns_empty_at_its_deadline(svc, ws, feed) -> None:
    svc.notes.create(ws.owner, title="old")
    cursor = feed.changes(ws.owner).next_cursor
    started = time.monotonic()
    page = asyncio.run(feed.long_poll(ws.owner, cursor, wait_ms=300))
    assert page.items == [] and page.next_cursor == cursor
    assert 0.25 < time.monotonic() - started < 3.0


def test_a_long_poll_ignores_changes_the_caller_cannot_see(svc, ws, feed) -> None:
    mine = svc.notes.create(ws.owner, title="mine")
    bot = agent(svc, ws, note_ids=[mine.id])
    cursor = feed.changes(bot).next_cursor
    writer = _write_soon(svc, ws, 0.1, title="someone else's")
    started = time.monotonic()
    page = asyncio.run(feed.long_poll(bot, cursor, wait_ms=800))
    writer.join()
    assert page.items == [] and time.monotonic() - started > 0.7
    assert decode_cursor(page.next_cursor) == decode_cursor(cursor) + 1  # moved past the invisible change


def test_the_feed_survives_reopening_the_database(make_store, fast_hasher) -> None:
    from tests.helpers_store import make_services

    store = make_store()
    url = make_store.last_url()
    svc = make_services(store, fast_hasher)
    ws = svc.workspace()
    first = svc.notes.create(ws.owner, title="before")
    cursor = ChangeFeedService(store).changes(ws.owner).next_cursor
    store.close()

    reopened = make_store(url=url)
    svc = make_services(reopened, fast_hasher)
    second = svc.notes.create(ws.owner, title="after")
    feed = ChangeFeedService(reopened)
    assert [c.note_id for c in feed.changes(ws.owner, cursor).items] == [second.id]
    assert [c.note_id for c in feed.changes(ws.owner).items] == [first.id, second.id]
