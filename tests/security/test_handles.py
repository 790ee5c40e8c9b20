"""Anchor handles presented made up, tampered, replayed (another session, another token, another
note, before a person's edit), expired, and minted for a revoked token — in every op kind that takes
one, over ``POST /v1/notes/{id}/proposals`` and ``fastpad_propose``; and sessions made up, borrowed
or expired on every route and tool that takes one. Each is refused with the spec's problem type
(``tests/security/handles.py``), and nothing is proposed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from tests.security.handles import HANDLE_OPS, PROPOSALS, handle_attacks, session_attacks
from tests.security.tally import HANDLE_EXPIRED, OUT_OF_SCOPE, STALE_FRONTIER, UNAUTHENTICATED, Tally
from tests.security.world import World

Judge = Callable[[Tally], None]


def test_no_forged_tampered_replayed_expired_or_revoked_handle_is_taken(world: World, judge: Judge) -> None:
    tally = handle_attacks(world)
    judge(tally)
    answers = Counter((a.surface, a.expected) for a in tally.attempts)
    per_surface = len(HANDLE_OPS)
    for surface in (PROPOSALS, "fastpad_propose"):
        assert answers[surface, OUT_OF_SCOPE] == 5 * per_surface  # made up, changed, three replays
        assert answers[surface, HANDLE_EXPIRED] == answers[surface, STALE_FRONTIER] == per_surface
        assert answers[surface, UNAUTHENTICATED] == per_surface


def test_no_forged_borrowed_or_expired_session_is_taken(world: World, judge: Judge) -> None:
    judge(session_attacks(world))
