"""What an agent token reaches, tried on every route and tool: a note outside its note set, another
workspace's notes and things (by id, and naming the workspace), a person-only action, and the token
once revoked. Each attempt must get the exact answer its class says (``probe.expected``: status and
problem type) and carry none of what it was after."""

from __future__ import annotations

from collections.abc import Callable

from tests.security.attacks import another_workspace, outside_the_note_set, person_only_actions, revoked_token
from tests.security.probe import NOTE, PUBLIC, ROUTES
from tests.security.tally import NOT_FOUND, UNAUTHENTICATED, Tally
from tests.security.world import World

Judge = Callable[[Tally], None]


def test_a_note_outside_the_set_is_out_of_scope_everywhere(world: World, judge: Judge) -> None:
    judge(outside_the_note_set(world))


def test_another_workspace_gives_nothing_by_id_or_by_name(world: World, judge: Judge) -> None:
    by_id, named = another_workspace(world)
    judge(by_id)
    judge(named)
    # Naming the workspace acts nowhere: every note there is not-found, even to a route only a person may use.
    assert all(a.slug == NOT_FOUND.slug for a in named.attempts if ROUTES[a.surface].names == NOTE)


def test_person_only_actions_are_refused_to_every_agent(world: World, judge: Judge) -> None:
    tally = person_only_actions(world)
    judge(tally)
    assert {a.surface for a in tally.attempts} >= {name for name, route in ROUTES.items() if route.person_only}
    assert all(a.refused for a in tally.attempts)


def test_a_revoked_token_gets_nothing_anywhere(world: World, judge: Judge) -> None:
    tally = revoked_token(world)
    judge(tally)
    authenticated = [a for a in tally.attempts if a.surface not in ROUTES or ROUTES[a.surface].reach != PUBLIC]
    assert authenticated and all(a.slug == UNAUTHENTICATED.slug for a in authenticated)
