"""ReviewService, deciding: accept (all, some, merged), reject, abandon, revert, grants,
auto-apply, Agent activity and the audit log. Real stores on both backends."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fastpad.errors import ApprovalNotPermitted, Conflict, NotFound, PolicyDenied, ValidationFailed
from fastpad.notes.ids import new_id

from tests.helpers_store import edit_ops

from .conftest import PUBLIC_URL, Agent, Env

ALL_BUT_ACCEPT = "notes:read,notes:propose,notes:write,notes:delete,search:read,graph:read,schema:write,export"


def proposal(env: Env, agent: Agent, note: str, *, key: str = "k1"):
    """Replace the first block, insert two blocks after the second (in that order)."""
    fetched = env.fetch(agent, note)
    return env.propose(agent, fetched, [
        {"op": "replace_block", "handle": fetched.blocks[0].handle, "text": "First, improved."},
        {"op": "insert_after", "handle": fetched.blocks[1].handle, "text": "New A."},
        {"op": "insert_after", "handle": fetched.blocks[1].handle, "text": "New B."},
    ], key=key)


def states(env: Env, note: str) -> list[tuple[str, str, str]]:
    return [(b["text"], b["origin"], b["review_state"]) for b in env.blocks(note)]


# ---------------------------------------------------------------------- a person accepts


def test_a_person_accepts_and_the_blocks_are_reviewed_by_them(env: Env) -> None:
    note = env.note("First.", "Second.")
    turn = proposal(env, env.agent(), note)
    decision = env.review.accept(env.owner, turn.id)
    assert decision.turn.status == "accepted" and not decision.turn.open and not decision.merged
    assert states(env, note) == [
        ("First, improved.", "agent_written", "human_accepted"), ("Second.", "human_typed", "human_accepted"),
        ("New A.", "agent_written", "human_accepted"), ("New B.", "agent_written", "human_accepted"),
    ]
    assert decision.frontier == env.svc.notes.get(env.owner, note).frontier
    # inserted blocks keep the ids the person reviewed
    assert [b["id"] for b in env.blocks(note)][2:] == [d.block_id for d in turn.diffs if d.kind == "inserted"]
    [entry] = [e for e in env.review.audit_log(env.owner) if e.action == "accept"]
    assert (entry.actor_kind, entry.actor_id, entry.token_id, entry.review_state) == (
        "person", env.ws.owner_id, None, "human_accepted")
    with pytest.raises(Conflict):  # nothing left to accept
        env.review.accept(env.owner, turn.id)
    assert env.review.activity(env.owner) == []  # a person's own accept is not agent activity


def test_accept_some_leaves_the_rest_pending_and_order_survives(env: Env) -> None:
    note = env.note("First.", "Second.")
    turn = proposal(env, env.agent(), note)
    replaced, new_a, new_b = (d.block_id for d in turn.diffs)
    decision = env.review.accept(env.owner, turn.id, block_ids=[new_b])
    assert decision.turn.status == "partially_accepted" and decision.turn.open
    assert set(decision.turn.pending_block_ids) == {replaced, new_a}
    assert env.texts(note) == ["First.", "Second.", "New B."]
    decision = env.review.accept(env.owner, turn.id, block_ids=[new_a])
    assert env.texts(note) == ["First.", "Second.", "New A.", "New B."]  # A still lands before B
    for not_pending in (new_id(), new_a):  # not a block of this turn, or not waiting any more
        with pytest.raises(ValidationFailed):
            env.review.accept(env.owner, turn.id, block_ids=[not_pending])
    env.review.reject(env.owner, turn.id)
    final = env.review.get(env.owner, turn.id)
    assert (final.status, final.open, final.block_state(replaced)) == ("partially_accepted", False, "decided")
    assert env.texts(note)[0] == "First."


# ---------------------------------------------------------------------- the note moved meanwhile


def test_a_person_edit_elsewhere_merges_cleanly_and_is_kept(env: Env) -> None:
    note = env.note("First.", "Second.", "Third.")
    turn = proposal(env, env.agent(), note)
    third = env.blocks(note)[2]["id"]
    env.person_edit(note, third, "Third, as the person rewrote it.")
    review = env.review.review(env.owner, turn.id)
    assert review.note_moved and review.merge is not None and review.merge.conflicts == []
    decision = env.review.accept(env.owner, turn.id)
    assert decision.merged and decision.turn.status == "accepted"
    assert env.texts(note) == ["First, improved.", "Second.", "New A.", "New B.", "Third, as the person rewrote it."]


def test_a_person_edit_of_the_same_block_is_never_overwritten(env: Env) -> None:
    note = env.note("The launch is in May.", "Second.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [
        {"op": "replace_block", "handle": fetched.blocks[0].handle, "text": "The launch is in May, in Lisbon."},
        {"op": "insert_after", "handle": fetched.blocks[1].handle, "text": "New."},
    ])
    first = fetched.blocks[0].id
    env.person_edit(note, first, "The big launch is in May.")
    before = env.texts(note)
    with pytest.raises(Conflict) as refused:
        env.review.accept(env.owner, turn.id)
    [conflict] = refused.value.extra["conflicts"]
    assert conflict == {
        "block_id": first, "kind": "both_changed", "base": "The launch is in May.",
        "mine": "The big launch is in May.", "proposal": "The launch is in May, in Lisbon.",
        "suggestion": "The big launch is in May, in Lisbon.",
    }
    assert refused.value.extra["review_url"] == f"{PUBLIC_URL}/review/{turn.id}"
    assert env.texts(note) == before  # nothing applied, nothing lost
    assert env.review.get(env.owner, turn.id).status == "pending"
    with pytest.raises(ValidationFailed):
        env.review.accept(env.owner, turn.id, resolutions={first: "theirs, obviously"})
    decision = env.review.accept(env.owner, turn.id, resolutions={first: "suggestion"})
    assert env.texts(note) == ["The big launch is in May, in Lisbon.", "Second.", "New."]
    assert decision.merged and decision.turn.status == "accepted"


def test_keeping_mine_declines_that_block_and_lands_the_rest(env: Env) -> None:
    note = env.note("Alpha.", "Beta.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [
        {"op": "replace_block", "handle": fetched.blocks[0].handle, "text": "Alpha by the agent."},
        {"op": "replace_block", "handle": fetched.blocks[1].handle, "text": "Beta by the agent."},
    ])
    env.person_edit(note, fetched.blocks[0].id, "Alpha by the person.")
    decision = env.review.accept(env.owner, turn.id, resolutions={fetched.blocks[0].id: "mine"})
    assert env.texts(note) == ["Alpha by the person.", "Beta by the agent."]
    assert decision.landed_block_ids == (fetched.blocks[1].id,)
    assert decision.turn.status == "partially_accepted" and not decision.turn.open
    assert states(env, note)[0] == ("Alpha by the person.", "human_typed", "human_accepted")


# ---------------------------------------------------------------------- revert


def test_revert_undoes_the_turn_and_keeps_a_later_human_edit(env: Env) -> None:
    note = env.note("First.", "Second.", "Third.")
    turn = proposal(env, env.agent(), note)
    env.review.accept(env.owner, turn.id)
    new_a = turn.diffs[1].block_id
    env.person_edit(note, new_a, "New A, which the person then made their own.")
    third = env.blocks(note)[-1]["id"]
    env.person_edit(note, third, "Third, edited later.")
    decision = env.review.revert(env.owner, turn.id)
    assert decision.turn.status == "reverted" and decision.kept == ((new_a, "kept_edited"),)
    assert env.texts(note) == ["First.", "Second.", "New A, which the person then made their own.",
                               "Third, edited later."]
    assert states(env, note)[0] == ("First.", "human_typed", "human_accepted")  # provenance restored too
    with pytest.raises(Conflict):
        env.review.revert(env.owner, turn.id)


def test_revert_after_accept_some_undoes_every_landing(env: Env) -> None:
    note = env.note("First.", "Second.")
    turn = proposal(env, env.agent(), note)
    env.review.accept(env.owner, turn.id, block_ids=[turn.diffs[2].block_id])
    env.review.accept(env.owner, turn.id)
    assert env.texts(note) == ["First, improved.", "Second.", "New A.", "New B."]
    env.review.revert(env.owner, turn.id)
    assert env.texts(note) == ["First.", "Second."]


def test_a_deleted_block_comes_back_with_its_id_on_revert(env: Env) -> None:
    note = env.note("Keep.", "Drop me.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [{"op": "delete", "handle": fetched.blocks[1].handle}])
    env.review.accept(env.owner, turn.id)
    assert env.texts(note) == ["Keep."]
    env.review.revert(env.owner, turn.id)
    assert [(b["id"], b["text"]) for b in env.blocks(note)] == [(b.id, b.text) for b in fetched.blocks]


# ---------------------------------------------------------------------- grants


def test_an_agent_cannot_accept_without_the_grant_and_is_told_where_to_send_a_person(env: Env) -> None:
    note = env.note("First.", "Second.")
    agent = env.agent(ALL_BUT_ACCEPT)  # every other scope: still no accept
    turn = proposal(env, agent, note)
    with pytest.raises(ApprovalNotPermitted) as refused:
        env.review.accept(agent.principal, turn.id)
    assert refused.value.slug == "approve-not-permitted" and refused.value.status == 403
    assert refused.value.extra["review_url"] == f"{PUBLIC_URL}/review/{turn.id}"
    assert turn.review_url in refused.value.detail
    assert env.texts(note) == ["First.", "Second."]


def test_an_agent_with_the_grant_accepts_its_own_prose_as_agent_accepted(env: Env) -> None:
    note = env.note("First.", "Second.")
    agent = env.agent("notes:read,notes:propose,turns:accept")
    turn = proposal(env, agent, note)
    decision = env.review.accept(agent.principal, turn.id)
    assert decision.turn.status == "accepted" and decision.turn.authority == "grant"
    assert states(env, note)[0] == ("First, improved.", "agent_written", "agent_accepted")
    [entry] = [e for e in env.review.audit_log(env.owner) if e.action == "accept"]
    assert (entry.actor_kind, entry.actor_id, entry.token_id, entry.turn_id, entry.review_state) == (
        "agent", agent.principal.principal_id, agent.token_id, turn.id, "agent_accepted")
    [item] = env.review.activity(env.owner)
    assert (item.turn.id, item.blocks, item.note_title) == (turn.id, 3, "A note")
    # a person marks it reviewed: the agent's accept becomes theirs, and it leaves the queue
    reviewed = env.review.mark_reviewed(env.owner, turn.id)
    assert reviewed.reviewed_at is not None and env.review.activity(env.owner) == []
    assert {s[2] for s in states(env, note)} == {"human_accepted"}
    with pytest.raises(Conflict):
        env.review.mark_reviewed(env.owner, turn.id)


def test_an_agent_cannot_accept_another_agents_turn(env: Env) -> None:
    note = env.note("First.", "Second.")
    author = env.agent()
    turn = proposal(env, author, note)
    other = env.agent("notes:read,notes:propose,turns:accept")
    with pytest.raises(ApprovalNotPermitted) as refused:
        env.review.accept(other.principal, turn.id)
    assert refused.value.extra["reason"] == "not_own_turn"
    with pytest.raises(NotFound):  # and cannot even read it
        env.review.get(other.principal, turn.id)
    assert env.texts(note) == ["First.", "Second."]


def test_a_person_cli_token_accepts_like_an_agent(env: Env) -> None:
    note = env.note("First.", "Second.")
    cli = env.agent("notes:read,notes:propose,turns:accept", person_email=env.ws.owner_email)
    turn = proposal(env, cli, note)
    env.review.accept(cli.principal, turn.id)
    assert states(env, note)[0] == ("First, improved.", "human_typed", "agent_accepted")
    assert [i.turn.id for i in env.review.activity(env.owner)] == [turn.id]


@pytest.mark.parametrize("action", ["revert", "mark_reviewed", "reject"])
def test_reviewing_is_a_persons_alone_whatever_the_token(env: Env, action: str) -> None:
    note = env.note("First.", "Second.")
    agent = env.agent(ALL_BUT_ACCEPT + ",turns:accept")
    turn = proposal(env, agent, note)
    if action != "reject":
        env.review.accept(agent.principal, turn.id)
    for principal in (agent.principal, env.agent(ALL_BUT_ACCEPT, person_email=env.ws.owner_email).principal):
        with pytest.raises(PolicyDenied) as refused:
            getattr(env.review, action)(principal, turn.id)
        assert refused.value.extra["reason"] == "person_only"


# ---------------------------------------------------------------------- edges and calendar ops


def test_edge_and_calendar_ops_always_wait_for_a_person(env: Env) -> None:
    note, other = env.note("First.", "Second."), env.note("Other note.")
    event = env.note("Standup", title="Standup")
    agent = env.agent("notes:read,notes:propose,turns:accept", auto_apply=True)
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [
        {"op": "replace_block", "handle": fetched.blocks[0].handle, "text": "First, improved."},
        {"op": "add_edge", "type": "related", "to_note_id": other},
        {"op": "add_event", "title": "Review", "start": "2025-03-01T09:00:00+01:00",
         "end": "2025-03-01T10:00:00+01:00"},
        {"op": "move_event", "event_id": event, "start": "2025-03-02T09:00:00+01:00",
         "end": "2025-03-02T09:30:00+01:00"},
    ])
    # auto-apply landed the prose, never the rest
    assert turn.status == "partially_accepted" and turn.pending_ops == (1, 2, 3) and turn.authority == "auto_apply"
    assert env.texts(note)[0] == "First, improved."
    with pytest.raises(ApprovalNotPermitted) as refused:  # nor does the grant reach them
        env.review.accept(agent.principal, turn.id)
    assert refused.value.extra["reason"] == "person_only_ops"
    with pytest.raises(ApprovalNotPermitted):
        env.review.accept(agent.principal, turn.id, op_indexes=[1])
    assert [e for e in env.graph.links(env.owner, note).outgoing if e.type == "related"] == []
    # a person accepts the link
    env.review.accept(env.owner, turn.id, op_indexes=[1])
    [edge] = [e for e in env.graph.links(env.owner, note).outgoing if e.type == "related"]
    assert (edge.target.id, edge.status, edge.created_by["kind"]) == (other, "asserted", "person")
    assert env.review.get(env.owner, turn.id).pending_ops == (2, 3)


def test_a_person_accepts_calendar_ops_into_event_notes(env: Env) -> None:
    from fastpad.knowledge.calendar import CalendarService
    from fastpad.knowledge.query import KnowledgeQueryService
    from fastpad.knowledge.types import TypeService

    TypeService(env.svc.store).define(env.owner, name="Event", properties=[
        {"name": "start", "kind": "datetime"}, {"name": "end", "kind": "datetime"}])
    standup = env.svc.notes.create(env.owner, title="Standup", types=["Event"], properties={
        "Event.start": "2025-03-03T09:00:00+00:00", "Event.end": "2025-03-03T09:15:00+00:00"}).id
    note = env.note("Planning.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [
        {"op": "add_event", "title": "Retro", "start": "2025-03-03T15:00:00+00:00", "end": "2025-03-03T16:00:00+00:00"},
        {"op": "move_event", "event_id": standup, "start": "2025-03-03T10:00:00+00:00",
         "end": "2025-03-03T10:15:00+00:00"},
    ])
    calendar = CalendarService(env.svc.store, KnowledgeQueryService(env.svc.store))
    window = [datetime(2025, 3, 3, tzinfo=timezone.utc), datetime(2025, 3, 4, tzinfo=timezone.utc)]

    def events() -> list[tuple[str, str]]:
        return [(e.title, e.start.strftime("%H:%M")) for e in calendar.window(env.owner, *window).events]

    assert events() == [("Standup", "09:00")]  # proposed, not applied
    decision = env.review.accept(env.owner, turn.id, op_indexes=[0])
    assert decision.turn.pending_ops == (1,) and decision.turn.status == "partially_accepted"
    assert events() == [("Standup", "09:00"), ("Retro", "15:00")]
    decision = env.review.accept(env.owner, turn.id)
    assert decision.turn.status == "accepted" and decision.turn.accepted_ops == (0, 1)
    assert events() == [("Standup", "10:00"), ("Retro", "15:00")]
    assert [e.op_indexes for e in env.review.audit_log(env.owner, turn_id=turn.id) if e.action == "accept"] == [
        (0,), (1,)]


def test_an_edge_the_graph_would_refuse_is_refused_when_proposed(env: Env) -> None:
    note, other = env.note("First."), env.note("Other.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    with pytest.raises(ValidationFailed) as refused:
        env.propose(agent, fetched, [{"op": "add_edge", "type": "Related-To", "to_note_id": other},
                                     {"op": "add_edge", "type": "supersedes", "to_note_id": other},
                                     {"op": "add_edge", "type": "related", "to_note_id": new_id()}])
    assert [(e.field, e.code) for e in refused.value.field_errors] == [
        ("ops[0].type", "edge_type"), ("ops[1].type", "use_supersede"), ("ops[2].to_note_id", "unknown_note")]


def test_an_ops_only_turn_from_an_agent_with_the_grant_is_refused(env: Env) -> None:
    note, other = env.note("First."), env.note("Other.")
    agent = env.agent("notes:read,notes:propose,turns:accept")
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [{"op": "add_edge", "type": "related", "to_note_id": other}])
    assert turn.diffs == () and turn.pending_ops == (0,)
    with pytest.raises(ApprovalNotPermitted):
        env.review.accept(agent.principal, turn.id)


# ---------------------------------------------------------------------- auto-apply, reject, abandon


def test_auto_apply_lands_at_once_unreviewed_forever_and_is_listed(env: Env) -> None:
    note = env.note("First.", "Second.")
    agent = env.agent(auto_apply=True)
    turn = proposal(env, agent, note)
    assert turn.status == "accepted" and turn.authority == "auto_apply"
    assert states(env, note)[0] == ("First, improved.", "agent_written", "unreviewed")
    [item] = env.review.activity(env.owner)
    assert item.turn.id == turn.id and item.blocks == 3
    env.review.mark_reviewed(env.owner, turn.id)
    assert env.review.activity(env.owner) == []
    assert states(env, note)[0][2] == "unreviewed"  # the cost of auto-apply stays visible in the data
    assert [e.action for e in env.review.audit_log(env.owner)] == ["propose", "auto_apply", "mark_reviewed"]


def test_an_auto_apply_agent_writes_only_by_proposing_and_every_write_is_on_agent_activity(env: Env) -> None:
    note = env.note("First.", "Second.")
    # Even holding notes:write and auto-apply, an agent's direct write (ops or rename) is refused.
    agent = env.agent("notes:read,notes:write,notes:propose", auto_apply=True)
    ops, frontier = edit_ops(env.svc.store, env.ws.id, note, lambda doc: doc.replace_text(doc.blocks()[0].id, "Sneaky."))
    with pytest.raises(PolicyDenied) as refused:
        env.svc.notes.apply_ops(agent.principal, note, ops=ops, peer_id="bot", expected_frontier=frontier)
    assert (refused.value.extra["reason"], refused.value.next_call) == ("agents_propose", f"POST /v1/notes/{note}/proposals")
    assert "Agent activity" in refused.value.detail
    with pytest.raises(PolicyDenied) as renamed:
        env.svc.notes.rename(agent.principal, note, "Renamed by a bot")
    assert renamed.value.extra["reason"] == "agents_propose"
    assert env.texts(note) == ["First.", "Second."] and env.svc.notes.get(env.owner, note).title == "A note"
    assert env.review.activity(env.owner) == []
    # The same agent's proposal lands at once, unreviewed, and is listed on Agent activity.
    turn = proposal(env, agent, note)
    assert turn.status == "accepted" and turn.authority == "auto_apply"
    assert states(env, note)[0] == ("First, improved.", "agent_written", "unreviewed")
    [item] = env.review.activity(env.owner)
    assert item.turn.id == turn.id and item.turn.author_id == agent.principal.principal_id


def test_a_person_rejects_and_nothing_ever_landed(env: Env) -> None:
    note = env.note("First.", "Second.")
    turn = proposal(env, env.agent(), note)
    rejected = env.review.reject(env.owner, turn.id)
    assert rejected.status == "rejected" and not rejected.open
    assert env.texts(note) == ["First.", "Second."]
    with pytest.raises(Conflict):
        env.review.accept(env.owner, turn.id)


def test_only_the_author_abandons(env: Env) -> None:
    note = env.note("First.", "Second.")
    author = env.agent()
    turn = proposal(env, author, note)
    with pytest.raises(NotFound):  # another agent does not even see it
        env.review.abandon(env.agent().principal, turn.id)
    with pytest.raises(PolicyDenied):  # a person rejects instead
        env.review.abandon(env.owner, turn.id)
    assert env.review.abandon(author.principal, turn.id).status == "abandoned"


# ---------------------------------------------------------------------- reading turns, the audit log


def test_agents_see_their_own_turns_and_people_see_all(env: Env) -> None:
    note = env.note("First.", "Second.")
    one, two = env.agent(), env.agent()
    mine = proposal(env, one, note)
    theirs = proposal(env, two, note)
    assert [t.id for t in env.review.list(one.principal).items] == [mine.id]
    assert {t.id for t in env.review.list(env.owner).items} == {mine.id, theirs.id}
    assert env.review.list(env.owner, mine=True).items == []
    env.review.reject(env.owner, theirs.id)
    assert [t.id for t in env.review.list(env.owner, status="pending").items] == [mine.id]
    page = env.review.list(env.owner, limit=1)
    assert len(page.items) == 1 and page.next_cursor is not None
    assert len(env.review.list(env.owner, limit=1, cursor=page.next_cursor).items) == 1


def test_the_audit_log_is_append_only(env: Env, store) -> None:
    note = env.note("First.", "Second.")
    proposal(env, env.agent(), note)
    errors = (*store.integrity_errors, Exception)
    with pytest.raises(errors) as refused:
        with store.write(env.ws.id) as tx:
            tx._x("UPDATE turn_events SET action = 'accept' WHERE workspace_id = ?", (env.ws.id,))
    assert "append-only" in str(refused.value)
    with pytest.raises(errors):
        with store.write(env.ws.id) as tx:
            tx._x("DELETE FROM turn_events WHERE workspace_id = ?", (env.ws.id,))
    assert len(env.review.audit_log(env.owner)) == 1


def test_the_waiting_list_holds_every_turn_with_something_undecided(env: Env) -> None:
    """`fp turns` lists these by default: a partly accepted turn still waits for a person."""
    untouched, partly, finished, closed = (proposal(env, env.agent(), env.note("First.", "Second.")) for _ in range(4))
    env.review.accept(env.owner, partly.id, block_ids=[partly.diffs[2].block_id])
    env.review.accept(env.owner, finished.id)
    env.review.accept(env.owner, closed.id, block_ids=[closed.diffs[2].block_id])
    env.review.reject(env.owner, closed.id)
    statuses = {t.id: t.status for t in env.review.list(env.owner).items}
    assert (statuses[partly.id], statuses[closed.id]) == ("partially_accepted", "partially_accepted")
    waiting = env.review.list(env.owner, status="waiting").items
    assert [t.id for t in waiting] == [partly.id, untouched.id]  # newest first
    assert [t.id for t in env.review.list(env.owner, status="waiting", limit=1).items] == [partly.id]
    with pytest.raises(ValidationFailed):
        env.review.list(env.owner, status="undecided")


def test_a_new_notes_title_and_properties_are_reviewed_with_its_blocks(env: Env) -> None:
    """An agent accepting its own new note stamps its title and properties ``agent_accepted`` —
    below every floor above the lowest, like its blocks — and a person marking the turn reviewed
    raises them with the blocks."""
    agent = env.agent("notes:read,notes:propose,turns:accept")
    turn = env.review.propose_note(agent.principal, agent.session, {
        "title": "Agent's plan", "markdown": "The plan.\n", "properties": {"status": "draft"}}, "new-note")
    accepted = env.review.accept(agent.principal, turn.id).turn

    def names():
        with env.svc.store.read(env.ws.id) as tx:
            return tx.name_provenance([accepted.note_id])[accepted.note_id]

    by_agent = ("agent_written", "agent_accepted")
    assert (names().title, names().properties) == (by_agent, {"status": by_agent})
    env.review.mark_reviewed(env.owner, turn.id)
    by_person = ("agent_written", "human_accepted")
    assert (names().title, names().properties) == (by_person, {"status": by_person})
