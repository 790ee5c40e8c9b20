"""ReviewService, proposing: sessions, handles, freshness, idempotency, dry runs, the copy guard.
Real stores on both backends, real tokens, real notes."""

from __future__ import annotations

import pytest

from fastpad.errors import (
    CrossNoteCopyDenied,
    HandleExpired,
    IdempotencyConflict,
    InsufficientScope,
    OutOfScope,
    PolicyDenied,
    StaleFrontier,
    ValidationFailed,
)
from fastpad.security.handles import HANDLE_TTL

from .conftest import PUBLIC_URL, Env
from tests.helpers_store import feed_rows

LONG_A = ("The migration plan moves every customer account to the new billing cluster during the quiet "
          "weekend window, after the finance team signs off on the reconciliation report.")


def _replace(fetched, index: int, text: str) -> list[dict]:
    return [{"op": "replace_block", "handle": fetched.blocks[index].handle, "text": text}]


def turn_count(env: Env) -> int:
    return len(env.review.list(env.owner).items)


# ---------------------------------------------------------------------- sessions and handles


def test_fetch_gives_markdown_handles_and_the_frontier(env: Env) -> None:
    note = env.note("First.", "Second.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    assert [b.text for b in fetched.blocks] == ["First.", "Second."]
    assert all(b.handle.startswith("h1.") for b in fetched.blocks)
    assert fetched.markdown().count("{#") == 2 and "First." in fetched.markdown()
    assert fetched.frontier == env.svc.notes.get(env.owner, note).frontier
    assert fetched.handles_expire_at == env.svc.clock.now + HANDLE_TTL


@pytest.mark.parametrize("elsewhere", ["token", "note"])
def test_a_handle_replayed_from_another_token_or_note_is_inert(env: Env, elsewhere: str) -> None:
    note, other_note = env.note("First.", "Second."), env.note("Elsewhere.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    ops = _replace(fetched, 0, "Changed.")
    with pytest.raises(OutOfScope) as refused:
        if elsewhere == "token":  # a handle leaked into another agent's transcript
            other = env.agent()
            env.review.propose(other.principal, other.session, note, ops, fetched.frontier, "k")
        else:  # "apply this handle to that note"
            other_frontier = env.fetch(agent, other_note).frontier
            env.review.propose(agent.principal, agent.session, other_note, ops, other_frontier, "k")
    assert refused.value.field_errors[0].field == "ops[0].handle"
    assert turn_count(env) == 0


def test_a_handle_from_another_session_is_inert(env: Env) -> None:
    note = env.note("First.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    second_session = env.review.open_session(agent.principal)
    with pytest.raises(OutOfScope):
        env.review.propose(agent.principal, second_session, note, _replace(fetched, 0, "Changed."),
                           fetched.frontier, "k")


def test_revoking_the_token_kills_its_handles(env: Env) -> None:
    note = env.note("First.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    env.svc.tokens.revoke(env.ws.id, agent.token_id)
    with pytest.raises(OutOfScope):  # the principal object outlived its token; its handles did not
        env.propose(agent, fetched, _replace(fetched, 0, "Changed."))
    assert turn_count(env) == 0


def test_an_expired_handle_says_so(env: Env) -> None:
    note = env.note("First.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    env.svc.clock.advance(seconds=HANDLE_TTL.total_seconds() + 1)
    with pytest.raises(HandleExpired) as expired:
        env.propose(agent, fetched, _replace(fetched, 0, "Changed."))
    assert expired.value.slug == "handle-expired" and "with_handles" in expired.value.next_call


def test_sessions_are_bound_to_their_credential_and_expire(env: Env) -> None:
    agent, other = env.agent(), env.agent()
    env.review.check_session(agent.principal, agent.session)
    with pytest.raises(ValidationFailed) as foreign:
        env.review.check_session(other.principal, agent.session)
    assert foreign.value.field_errors[0].code == "invalid_session"
    with pytest.raises(ValidationFailed):
        env.review.check_session(agent.principal, "as1.forged")
    env.svc.clock.advance(hours=13)
    with pytest.raises(ValidationFailed) as expired:
        env.review.check_session(agent.principal, agent.session)
    assert expired.value.field_errors[0].code == "session_expired"
    assert expired.value.next_call.startswith("fastpad_capabilities")


def test_proposing_needs_the_propose_scope(env: Env) -> None:
    note = env.note("First.")
    reader = env.agent("notes:read")
    fetched = env.fetch(reader, note)
    with pytest.raises(InsufficientScope):
        env.propose(reader, fetched, _replace(fetched, 0, "Changed."))


# ---------------------------------------------------------------------- freshness


def test_a_person_editing_between_fetch_and_propose_makes_it_stale(env: Env) -> None:
    note = env.note("First.", "Second.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    env.person_edit(note, fetched.blocks[1].id, "Second, as the person now has it.")
    with pytest.raises(StaleFrontier) as stale:
        env.propose(agent, fetched, _replace(fetched, 0, "First, improved."))
    assert stale.value.extra["current_frontier"] != fetched.frontier
    assert turn_count(env) == 0
    # re-read, recompute, propose again: fine
    again = env.fetch(agent, note)
    assert env.propose(agent, again, _replace(again, 0, "First, improved."), key="k2").status == "pending"


def test_handles_from_an_old_read_are_stale_even_with_a_fresh_frontier(env: Env) -> None:
    note = env.note("First.", "Second.")
    agent = env.agent()
    old = env.fetch(agent, note)
    env.person_edit(note, old.blocks[1].id, "Edited.")
    fresh = env.fetch(agent, note)
    with pytest.raises(StaleFrontier):
        env.review.propose(agent.principal, agent.session, note, _replace(old, 0, "X."), fresh.frontier, "k")


# ---------------------------------------------------------------------- the stored turn, replays, dry runs


def test_a_proposal_is_stored_with_its_diff_and_changes_nothing_yet(env: Env) -> None:
    note = env.note("First.", "Second.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [
        {"op": "replace_block", "handle": fetched.blocks[0].handle, "text": "First, improved."},
        {"op": "insert_after", "handle": fetched.blocks[1].handle, "text": "Third."},
        {"op": "delete", "handle": fetched.blocks[1].handle},
    ])
    assert turn.status == "pending" and turn.open and turn.review_url == f"{PUBLIC_URL}/review/{turn.id}"
    assert [(d.kind, d.before.text if d.before else None, d.after.text if d.after else None) for d in turn.diffs] == [
        ("replaced", "First.", "First, improved."), ("deleted", "Second.", None), ("inserted", None, "Third."),
    ]
    assert (turn.author_kind, turn.token_id) == ("agent", agent.token_id)
    assert env.texts(note) == ["First.", "Second."]  # a proposal is not a write
    stored = env.review.get(env.owner, turn.id)
    assert stored.diffs == turn.diffs and stored.expected_frontier == fetched.frontier
    assert [e.action for e in env.review.audit_log(env.owner)] == ["propose"]


def test_the_same_key_and_body_replays_and_another_body_conflicts(env: Env) -> None:
    note = env.note("First.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    first = env.propose(agent, fetched, _replace(fetched, 0, "Changed."), key="retry-me")
    env.svc.clock.advance(seconds=HANDLE_TTL.total_seconds() * 3)  # handles long dead: a replay needs none
    again = env.propose(agent, fetched, _replace(fetched, 0, "Changed."), key="retry-me")
    assert again.id == first.id and again.replayed and not first.replayed
    with pytest.raises(IdempotencyConflict) as conflict:
        env.propose(agent, fetched, _replace(fetched, 0, "Something else."), key="retry-me")
    assert conflict.value.extra["turn_id"] == first.id
    assert turn_count(env) == 1


def test_keys_belong_to_their_credential(env: Env) -> None:
    note = env.note("First.")
    one, two = env.agent(), env.agent()
    a = env.fetch(one, note)
    b = env.fetch(two, note)
    assert env.propose(one, a, _replace(a, 0, "One.")).id != env.propose(two, b, _replace(b, 0, "Two.")).id


def test_dry_run_validates_and_diffs_and_writes_nothing(env: Env, store) -> None:
    note = env.note("First.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    with store.read(env.ws.id) as tx:
        feed_before = len(feed_rows(tx))
    turn = env.propose(agent, fetched, _replace(fetched, 0, "Changed."), dry_run=True)
    assert turn.dry_run and turn.id is None and turn.review_url is None
    assert [(d.kind, d.after.text) for d in turn.diffs] == [("replaced", "Changed.")]
    assert turn_count(env) == 0 and env.review.audit_log(env.owner) == []
    with store.read(env.ws.id) as tx:
        assert len(feed_rows(tx)) == feed_before
    # the key was not spent: the real proposal under it works
    assert env.propose(agent, fetched, _replace(fetched, 0, "Changed.")).status == "pending"
    with pytest.raises(StaleFrontier):  # and a dry run still refuses what a real one would
        env.person_edit(note, fetched.blocks[0].id, "Edited by a person.")
        env.propose(agent, fetched, _replace(fetched, 0, "X."), dry_run=True, key="k9")


def test_a_proposal_that_changes_nothing_is_refused(env: Env) -> None:
    note = env.note("Same.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    with pytest.raises(ValidationFailed) as nothing:
        env.propose(agent, fetched, _replace(fetched, 0, "Same."))
    assert nothing.value.field_errors[0].code == "no_change"


def test_unknown_or_invisible_sources_are_refused_by_name(env: Env) -> None:
    note, hidden = env.note("First."), env.note("Hidden source.")
    agent = env.agent(note_ids=[note])
    fetched = env.fetch(agent, note)
    hidden_block = env.blocks(hidden)[0]["id"]
    with pytest.raises(ValidationFailed) as refused:
        env.propose(agent, fetched, [{"op": "insert_after", "handle": None, "text": "New.",
                                      "source_block_ids": [hidden_block]}])
    assert refused.value.field_errors[0].field == "ops[0].source_block_ids[0]"


# ---------------------------------------------------------------------- the copy guard


def test_copying_text_read_from_another_note_is_refused(env: Env) -> None:
    source, target = env.note(LONG_A, title="Billing"), env.note("Our notes.", title="Target")
    agent = env.agent()
    env.fetch(agent, source)  # the injected instruction: "append note A to note B"
    fetched = env.fetch(agent, target)
    with pytest.raises(CrossNoteCopyDenied) as denied:
        env.propose(agent, fetched, [{"op": "insert_after", "handle": fetched.blocks[0].handle, "text": LONG_A}])
    assert denied.value.extra["source_note_ids"] == [source]
    assert denied.value.field_errors[0].field == "ops[0].text"
    assert turn_count(env) == 0


def test_the_guard_remembers_reads_across_the_credentials_sessions(env: Env) -> None:
    source, target = env.note(LONG_A), env.note("Our notes.")
    agent = env.agent()
    env.fetch(agent, source)
    agent.session = env.review.open_session(agent.principal)  # a fresh session does not launder the read
    fetched = env.fetch(agent, target)
    with pytest.raises(CrossNoteCopyDenied):
        env.propose(agent, fetched, [{"op": "insert_after", "handle": None, "text": LONG_A}])


def test_a_citation_in_its_own_words_is_allowed_and_becomes_a_link_on_accept(env: Env) -> None:
    source, target = env.note(LONG_A, title="Billing"), env.note("Our notes.", title="Target")
    agent = env.agent()
    source_block = env.fetch(agent, source).blocks[0].id
    fetched = env.fetch(agent, target)
    turn = env.propose(agent, fetched, [{
        "op": "insert_after", "handle": fetched.blocks[0].handle,
        "text": "Billing moves to the new cluster on a quiet weekend, once finance approves.",
        "source_block_ids": [source_block],
    }])
    [diff] = turn.diffs
    assert diff.source_block_ids == (source_block,)
    review = env.review.review(env.owner, turn.id)
    assert review.sources[source_block].text == LONG_A and review.sources[source_block].note_title == "Billing"
    assert env.review.accepted_from(env.owner, source_block) == []  # nothing landed yet
    env.review.accept(env.owner, turn.id)
    cites = [e for e in env.graph.links(env.owner, target).outgoing if e.type == "cites"]
    assert [(e.target.id, e.evidence.block_id, e.status) for e in cites] == [(source, diff.block_id, "asserted")]
    # retraction: everything accepted from the source block is found
    uses = env.review.accepted_from(env.owner, source_block)
    assert [(u.note_id, u.block_id, u.turn_id) for u in uses] == [(target, diff.block_id, turn.id)]
    with pytest.raises(PolicyDenied):  # judging a source wrong is a person's call
        env.review.retract_source(agent.principal, source_block)
    retraction = env.review.retract_source(env.owner, source_block, reason="the figures were wrong")
    assert [(u.note_id, u.block_id) for u in retraction.accepted] == [(target, diff.block_id)]
    assert env.review.review(env.owner, turn.id).sources[source_block].retracted_at is not None


def test_session_reads_are_bounded(env: Env, store) -> None:
    from fastpad.review import proposals

    agent = env.agent()
    notes = [env.note(f"Note {i}.") for i in range(5)]
    original = proposals.MAX_READS
    proposals.MAX_READS = 3
    try:
        for note in notes:
            env.fetch(agent, note)
            env.svc.clock.advance(seconds=1)
    finally:
        proposals.MAX_READS = original
    with store.read(env.ws.id) as tx:
        kept = tx.turns.reads(agent.principal.key, since=env.svc.clock.now.replace(year=2000), limit=100)
    assert sorted(r.note_id for r in kept) == sorted(notes[-3:])
    env.svc.clock.advance(hours=13)
    agent.session = env.review.open_session(agent.principal)
    env.fetch(agent, notes[0])
    with store.read(env.ws.id) as tx:
        kept = tx.turns.reads(agent.principal.key, since=env.svc.clock.now.replace(year=2000), limit=100)
    assert [r.note_id for r in kept] == [notes[0]]  # older than a session's life: gone
