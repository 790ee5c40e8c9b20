"""An accepted turn lands all at once — prose, edges, calendar ops, citation edges, the turn's
state, its audit entry and the change feed in one transaction — and a revert takes back all of
it. Failures are caused with real data (a target note trashed or purged, an event trashed),
never by mocking; what is left is read back from the store. Both backends."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from fastpad.errors import Conflict, NotFound
from fastpad.knowledge.calendar import END, START
from fastpad.knowledge.trash import TrashService
from fastpad.knowledge.typed_notes import TypedNoteService
from fastpad.knowledge.types import TypeService
from fastpad.store.feed import FeedRow

from .conftest import Env

WINDOW = {START: "2025-03-03T09:00:00+00:00", END: "2025-03-03T09:15:00+00:00"}
MOVED = {START: "2025-03-03T10:00:00+00:00", END: "2025-03-03T10:15:00+00:00"}


@dataclass
class Scene:
    """A note, the notes its proposal links to and cites, an event it moves — and the turn."""

    note: str
    source: str
    source_block: str
    target: str
    event: str
    turn: Any


def define_event(env: Env) -> None:
    TypeService(env.svc.store).define(env.owner, name="Event", properties=[
        {"name": "start", "kind": "datetime"}, {"name": "end", "kind": "datetime"}])


def event_note(env: Env, title: str, window: dict[str, str] = WINDOW) -> str:
    return env.svc.notes.create(env.owner, title=title, types=["Event"], properties=dict(window)).id


def scene(env: Env) -> Scene:
    """One proposal with everything a turn can carry: a cited prose change, a new event, a
    moved event and an edge (in that op order, so the edge is applied last)."""
    define_event(env)
    note = env.note("First.", "Second.", title="Plan")
    source = env.note("The figures for March.", title="Figures")
    source_block = env.blocks(source)[0]["id"]
    target = env.note("Where the work is tracked.", title="Tracker")
    event = event_note(env, "Standup")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [
        {"op": "replace_block", "handle": fetched.blocks[0].handle, "text": "First, with March in mind.",
         "source_block_ids": [source_block]},
        {"op": "add_event", "title": "Retro", "start": "2025-03-04T15:00:00+00:00",
         "end": "2025-03-04T16:00:00+00:00"},
        {"op": "move_event", "event_id": event, "start": MOVED[START], "end": MOVED[END]},
        {"op": "add_edge", "type": "related", "to_note_id": target},
    ])
    return Scene(note, source, source_block, target, event, turn)


def api_edges(env: Env, note: str) -> list[tuple[str, str, str]]:
    """(type, target note, edge id) of the edges made through the graph from ``note``."""
    with env.svc.store.read(env.ws.id) as tx:
        rows = tx.links.edges(note, direction="out", include_trashed=True)
    return sorted((r.link.type, r.link.target_note_id or "", r.link.id) for r in rows if r.link.derivation == "api")


def feed_head(env: Env) -> int:
    with env.svc.store.read(env.ws.id) as tx:
        return tx.feed.head()


def feed_since(env: Env, seq: int) -> list[FeedRow]:
    with env.svc.store.read(env.ws.id) as tx:
        return tx.feed.read(after_seq=seq, upto_seq=tx.feed.head(), limit=1000)


def titles(env: Env) -> list[str]:
    return sorted(n.title for n in env.svc.notes.list(env.owner, include_trashed=True).items)


def window_of(env: Env, event: str) -> dict[str, str]:
    properties = env.svc.notes.get(env.owner, event).properties
    return {START: properties[START], END: properties[END]}


def stored_turn(env: Env, turn_id: str):
    with env.svc.store.read(env.ws.id) as tx:
        return tx.turns.get(turn_id), tx.turns.events(turn_id=turn_id)


# ---------------------------------------------------------------------- accept is all or nothing


def trash_target(env: Env, s: Scene) -> None:
    env.svc.notes.trash(env.owner, s.target)


def purge_target(env: Env, s: Scene) -> None:
    env.svc.notes.trash(env.owner, s.target)
    TrashService(env.svc.store, retention=timedelta(0), clock=env.svc.clock).purge_expired(env.ws.id)


@pytest.mark.parametrize(("break_it", "error"), [(trash_target, Conflict), (purge_target, NotFound)],
                         ids=["target-trashed", "target-purged"])
def test_an_edge_that_cannot_be_made_leaves_the_whole_accept_undone(env: Env, break_it, error) -> None:
    s = scene(env)
    break_it(env, s)  # between propose and accept: the edge's target goes away
    turn_before, events_before = stored_turn(env, s.turn.id)
    note_before = env.svc.notes.get(env.owner, s.note)
    notes_before, head = titles(env), feed_head(env)

    with pytest.raises(error) as refused:
        env.review.accept(env.owner, s.turn.id)
    assert refused.value.extra["op_index"] == 3 and "ops[3] (add_edge)" in refused.value.detail
    assert "nothing was accepted" in refused.value.detail

    turn_after, events_after = stored_turn(env, s.turn.id)
    assert turn_after == turn_before and turn_after.status == "pending"  # exactly as it was
    assert events_after == events_before  # no audit entry
    note_after = env.svc.notes.get(env.owner, s.note)
    assert (note_after.frontier, env.texts(s.note)) == (note_before.frontier, ["First.", "Second."])  # no prose
    assert api_edges(env, s.note) == []  # neither the cites edge nor the others
    assert titles(env) == notes_before  # the Retro event it created first is gone with the rest
    assert window_of(env, s.event) == WINDOW  # and the move it made is undone
    assert feed_since(env, head) == []
    assert env.review.accepted_from(env.owner, s.source_block) == []  # the citation did not land either

    # Nothing is half-done, so after the person restores the target (or drops the edge) it all lands.
    if error is Conflict:
        env.svc.notes.restore(env.owner, s.target)
        assert env.review.accept(env.owner, s.turn.id).turn.status == "accepted"
    else:
        decision = env.review.accept(env.owner, s.turn.id, block_ids=[s.turn.diffs[0].block_id], op_indexes=[1, 2])
        assert decision.turn.status == "partially_accepted" and decision.turn.pending_ops == (3,)


def test_an_event_that_cannot_move_leaves_the_whole_accept_undone(env: Env) -> None:
    s = scene(env)
    env.svc.notes.trash(env.owner, s.event)
    turn_before, _ = stored_turn(env, s.turn.id)
    head = feed_head(env)
    with pytest.raises(Conflict) as refused:
        env.review.accept(env.owner, s.turn.id)
    assert refused.value.extra == {"reason": "trashed", "op_index": 2}
    assert stored_turn(env, s.turn.id)[0] == turn_before
    assert env.texts(s.note) == ["First.", "Second."] and api_edges(env, s.note) == []
    assert "Retro" not in titles(env) and feed_since(env, head) == []


def test_accept_lands_prose_edges_events_and_citations_together(env: Env) -> None:
    s = scene(env)
    head = feed_head(env)
    decision = env.review.accept(env.owner, s.turn.id)
    assert decision.turn.status == "accepted" and decision.turn.accepted_ops == (1, 2, 3)
    assert env.texts(s.note) == ["First, with March in mind.", "Second."]
    edges = api_edges(env, s.note)
    assert [(t, target) for t, target, _ in edges] == [("cites", s.source), ("related", s.target)]
    [retro] = [n for n in env.svc.notes.list(env.owner).items if n.title == "Retro"]
    assert retro.types == ("Event",) and window_of(env, s.event) == MOVED

    # One audit entry says what landed, and records what the accept created, for revert.
    [entry] = [e for e in env.review.audit_log(env.owner, turn_id=s.turn.id) if e.action == "accept"]
    assert entry.block_ids == (s.turn.diffs[0].block_id,) and entry.op_indexes == (1, 2, 3)
    ids = {target: edge_id for _, target, edge_id in edges}
    assert entry.effects == {
        "links": [ids[s.source], ids[s.target]], "events": [retro.id],
        "moves": [{"event_id": s.event, "before": WINDOW, "after": MOVED}],
    }

    # The feed shows the accept as one run of rows, all by the person, in the order it happened.
    rows = feed_since(env, head)
    assert [(r.kind, r.note_id, r.subject_id) for r in rows] == [
        ("accept", s.note, None), ("link", s.note, ids[s.source]), ("create", retro.id, None),
        ("meta", s.event, None), ("link", s.note, ids[s.target]),
    ]
    assert [r.seq for r in rows] == list(range(head + 1, head + 6))
    assert {(r.actor_kind, r.actor_id) for r in rows} == {("person", env.ws.owner_id)}


def test_accept_some_then_the_rest_each_land_whole(env: Env) -> None:
    s = scene(env)
    first = env.review.accept(env.owner, s.turn.id, op_indexes=[3])
    assert first.turn.status == "partially_accepted" and first.turn.pending_ops == (1, 2)
    assert first.turn.pending_block_ids == (s.turn.diffs[0].block_id,)
    assert [t for t, _, _ in api_edges(env, s.note)] == ["related"]
    second = env.review.accept(env.owner, s.turn.id)
    assert second.turn.status == "accepted" and second.turn.accepted_ops == (3, 1, 2)
    assert [t for t, _, _ in api_edges(env, s.note)] == ["cites", "related"]
    assert [e.op_indexes for e in env.review.audit_log(env.owner, turn_id=s.turn.id) if e.action == "accept"] == [
        (3,), (1, 2)]


# ---------------------------------------------------------------------- revert undoes all of it


def test_revert_takes_back_what_the_accept_made_and_keeps_what_a_person_made_theirs(env: Env) -> None:
    define_event(env)
    note = env.note("First.", "Second.", title="Plan")
    source = env.note("The figures for March.", title="Figures")
    existing, confirmed, dropped = (env.note(f"{name}.", title=name) for name in ("Existing", "Confirmed", "Dropped"))
    standup, planning = event_note(env, "Standup"), event_note(env, "Planning")
    before_accept = env.graph.create_link(env.owner, source_note_id=note, type="related", target_note_id=existing)
    agent = env.agent()
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [
        {"op": "replace_block", "handle": fetched.blocks[0].handle, "text": "First, with March in mind.",
         "source_block_ids": [env.blocks(source)[0]["id"]]},
        {"op": "insert_after", "handle": fetched.blocks[1].handle, "text": "A new step."},
        *({"op": "add_edge", "type": "related", "to_note_id": n} for n in (existing, confirmed, dropped)),
        {"op": "add_event", "title": "Retro", "start": "2025-03-04T15:00:00+00:00",
         "end": "2025-03-04T16:00:00+00:00"},
        *({"op": "move_event", "event_id": e, "start": MOVED[START], "end": MOVED[END]} for e in (standup, planning)),
    ])
    env.review.accept(env.owner, turn.id)
    edges = {target: edge_id for _, target, edge_id in api_edges(env, note)}
    assert edges[existing] == before_accept.id  # the same person's identical edge was reused, not duplicated
    [retro] = [n.id for n in env.svc.notes.list(env.owner).items if n.title == "Retro"]

    # Since the accept, a person made some of it their own.
    assert env.graph.promote(env.owner, edges[confirmed]).confirmed_by == env.ws.owner_id  # asserted, now confirmed
    inserted = turn.diffs[1].block_id
    env.person_edit(note, inserted, "A new step, reworded by the person.")
    TypedNoteService(env.svc.store).apply(env.owner, planning, properties={START: "2025-03-03T11:00:00+00:00"})

    head = feed_head(env)
    decision = env.review.revert(env.owner, turn.id)
    assert decision.turn.status == "reverted" and decision.kept == ((inserted, "kept_edited"),)
    assert decision.turn.as_dict()["ops"][2]["state"] == "decided"
    assert env.texts(note) == ["First.", "Second.", "A new step, reworded by the person."]
    assert sorted(target for _, target, _ in api_edges(env, note)) == sorted([existing, confirmed])
    assert edges[existing] == before_accept.id and edges[confirmed] in {i for _, _, i in api_edges(env, note)}
    assert env.svc.notes.get(env.owner, retro).trashed
    assert window_of(env, standup) == WINDOW
    assert env.svc.notes.get(env.owner, planning).properties[START] == "2025-03-03T11:00:00+00:00"

    [entry] = [e for e in env.review.audit_log(env.owner, turn_id=turn.id) if e.action == "revert"]
    cites = edges[source]
    assert entry.effects == {"undone": [
        ["move", planning, "kept_changed"], ["move", standup, "restored"], ["event", retro, "trashed"],
        ["link", cites, "removed"], ["link", edges[confirmed], "kept_confirmed"], ["link", edges[dropped], "removed"],
    ]}
    assert decision.undone == tuple(tuple(thing) for thing in entry.effects["undone"]), "the caller is told as well"
    assert [(r.kind, r.note_id, r.subject_id) for r in feed_since(env, head)] == [
        ("revert", note, None), ("meta", standup, None), ("trash", retro, None),
        ("link_delete", note, cites), ("link_delete", note, edges[dropped]),
    ]


def test_revert_removes_the_cites_edges_a_mark_reviewed_made(env: Env) -> None:
    note = env.note("First.", title="Plan")
    source = env.note("The figures for March.", title="Figures")
    agent = env.agent("notes:read,notes:propose,turns:accept")
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [{"op": "insert_after", "handle": fetched.blocks[0].handle,
                                         "text": "March looks fine.",
                                         "source_block_ids": [env.blocks(source)[0]["id"]]}])
    env.review.accept(agent.principal, turn.id)
    assert api_edges(env, note) == []  # an agent's own accept makes no citation real
    env.review.mark_reviewed(env.owner, turn.id)
    [(kind, target, cites)] = api_edges(env, note)
    assert (kind, target) == ("cites", source)
    env.review.revert(env.owner, turn.id)
    assert api_edges(env, note) == [] and env.texts(note) == ["First."]
    [entry] = [e for e in env.review.audit_log(env.owner, turn_id=turn.id) if e.action == "revert"]
    assert entry.effects == {"undone": [["link", cites, "removed"]]}


def test_a_turn_whose_only_accepted_part_is_an_edge_can_be_reverted(env: Env) -> None:
    note, other = env.note("First."), env.note("Other.")
    agent = env.agent()
    fetched = env.fetch(agent, note)
    turn = env.propose(agent, fetched, [
        {"op": "replace_block", "handle": fetched.blocks[0].handle, "text": "First, improved."},
        {"op": "add_edge", "type": "related", "to_note_id": other},
    ])
    env.review.accept(env.owner, turn.id, op_indexes=[1])
    [(_, _, edge_id)] = api_edges(env, note)
    head = feed_head(env)
    decision = env.review.revert(env.owner, turn.id)
    assert decision.turn.status == "reverted" and decision.turn.pending_block_ids == ()
    assert api_edges(env, note) == [] and env.texts(note) == ["First."]
    assert [(r.kind, r.subject_id) for r in feed_since(env, head)] == [("link_delete", edge_id),
                                                                        ("proposal_revert", turn.id)]
    with pytest.raises(Conflict):
        env.review.revert(env.owner, turn.id)


def test_a_revert_that_cannot_finish_changes_nothing(env: Env) -> None:
    s = scene(env)
    env.review.accept(env.owner, s.turn.id)
    edges_before = api_edges(env, s.note)
    env.svc.notes.trash(env.owner, s.note)  # the prose cannot be undone on a note in the trash
    head = feed_head(env)
    with pytest.raises(Conflict):
        env.review.revert(env.owner, s.turn.id)
    assert api_edges(env, s.note) == edges_before and window_of(env, s.event) == MOVED
    assert "Retro" in [n.title for n in env.svc.notes.list(env.owner).items]  # not trashed
    assert env.review.get(env.owner, s.turn.id).status == "accepted" and feed_since(env, head) == []


def test_a_source_gone_to_the_trash_gets_no_cites_edge_but_stays_cited(env: Env) -> None:
    s = scene(env)
    env.svc.notes.trash(env.owner, s.source)
    decision = env.review.accept(env.owner, s.turn.id)
    assert decision.turn.status == "accepted" and env.texts(s.note)[0] == "First, with March in mind."
    assert [(t, target) for t, target, _ in api_edges(env, s.note)] == [("related", s.target)]
    uses = env.review.accepted_from(env.owner, s.source_block)  # a retraction still reaches the block
    assert [(u.note_id, u.block_id) for u in uses] == [(s.note, s.turn.diffs[0].block_id)]
