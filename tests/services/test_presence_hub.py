"""The in-process presence hub on its own clock: a follower waits until its room changes (a post,
a leave, an expiry), not a moment longer, and never spins on a room nobody is in; a room that
empties keeps nothing behind, so rooms do not pile up for every note ever opened."""

from __future__ import annotations

import asyncio

from fastpad.knowledge.presence import InProcessPresenceHub, PresenceEntry

ROOM = ("workspace", "note")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def entry(tab: str, expires_at: float, person: str = "ada") -> PresenceEntry:
    return PresenceEntry(tab, person, person.title(), b"state", expires_at)


def test_a_follower_of_an_empty_room_waits_for_the_first_post() -> None:
    hub = InProcessPresenceHub()

    async def scenario() -> tuple[str, tuple[PresenceEntry, ...]]:
        empty, entries, _ = hub.snapshot(ROOM)
        assert entries == () and hub.snapshot(ROOM)[0] == empty  # asking again changes nothing
        follower = asyncio.create_task(hub.wait(ROOM, empty, timeout=30))
        await asyncio.sleep(0)  # the follower is waiting now
        assert not follower.done()
        hub.put(ROOM, entry("tab-0001", expires_at=10**9))
        await asyncio.wait_for(follower, 5)
        generation, entries, _ = hub.snapshot(ROOM)
        return generation, entries

    generation, entries = asyncio.run(scenario())
    assert [e.tab for e in entries] == ["tab-0001"] and generation != hub.snapshot(("w", "other"))[0]


def test_expiry_and_leave_change_the_room_and_an_emptied_room_keeps_nothing() -> None:
    clock = Clock()
    hub = InProcessPresenceHub(clock)
    hub.put(ROOM, entry("tab-0001", expires_at=clock.now + 30))
    hub.put(ROOM, entry("tab-0002", expires_at=clock.now + 60, person="bea"))
    both, entries, next_expiry = hub.snapshot(ROOM)
    assert len(entries) == 2 and next_expiry == 30
    hub.leave(ROOM, "tab-0002", "ada", until=clock.now + 30)  # not Ada's tab: nothing happens
    assert hub.snapshot(ROOM)[0] == both
    clock.now += 31
    one, entries, _ = hub.snapshot(ROOM)
    assert [e.tab for e in entries] == ["tab-0002"] and one != both
    hub.leave(ROOM, "tab-0002", "bea", until=clock.now + 30)
    empty, entries, next_expiry = hub.snapshot(ROOM)
    assert entries == () and next_expiry is None and empty != one
    assert hub._rooms == {} and hub._generation == {} and hub._waiters == {}


def test_a_post_that_arrives_after_its_tabs_leave_does_not_bring_the_tab_back() -> None:
    clock = Clock()
    hub = InProcessPresenceHub(clock)
    hub.put(ROOM, entry("tab-0001", expires_at=clock.now + 30))
    hub.leave(ROOM, "tab-0001", "ada", until=clock.now + 30)
    hub.put(ROOM, entry("tab-0001", expires_at=clock.now + 30))  # sent before the leave, overtaken by it
    assert hub.snapshot(ROOM)[1] == ()
    clock.now += 31  # the tombstone is gone with the ttl: the id is anyone's again
    hub.put(ROOM, entry("tab-0001", expires_at=clock.now + 30))
    assert [e.tab for e in hub.snapshot(ROOM)[1]] == ["tab-0001"] and hub._left == {}
