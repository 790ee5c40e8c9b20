"""MemoryService: designating topics, the index (no bodies, trust floor), one topic."""

from __future__ import annotations

import pytest

from fastpad.errors import Conflict, InsufficientScope, NotFound, OutOfScope, ValidationFailed
from fastpad.knowledge.changes import ChangeFeedService
from fastpad.knowledge.memory import MemoryService
from fastpad.notes import Block, new_id
from tests.helpers_store import agent_propose


@pytest.fixture
def memory(svc) -> MemoryService:
    return MemoryService(svc.store, svc.notes, clock=svc.clock)


def token(svc, ws, scopes, **kwargs):
    plaintext, _ = svc.tokens.create(ws.id, scopes=list(scopes), **kwargs)
    return svc.tokens.authenticate(plaintext)


def note(svc, ws, title, *texts, kind="paragraph"):
    return svc.notes.create(ws.owner, title=title, blocks=[Block(None, kind, t) for t in texts])


def test_the_index_lists_topics_with_one_line_summaries_and_no_bodies(svc, ws, memory) -> None:
    prefs = svc.notes.create(ws.owner, title="Preferences", blocks=[
        Block(None, "heading", "Preferences"),
        Block(None, "paragraph", "Prefers tea,\n  never coffee.\nLong body follows."),
        Block(None, "paragraph", "A second paragraph that is body, not summary."),
    ])
    people = note(svc, ws, "People", "x" * 500)
    note(svc, ws, "Not a topic", "ignored")
    assert memory.designate(ws.owner, prefs.id).name == "Preferences"
    memory.designate(ws.owner, people.id, name="Who is who")

    index = memory.index(ws.owner)
    assert [(t.name, t.note_id, t.title) for t in index.topics] == [
        ("Preferences", prefs.id, "Preferences"), ("Who is who", people.id, "People")]
    assert index.topics[0].summary == "Prefers tea, never coffee. Long body follows."
    assert len(index.topics[1].summary) == 200 and index.topics[1].summary.endswith("…")
    assert "second paragraph" not in str(index.as_dict())


def test_a_topic_is_found_by_name_in_any_case_or_by_note_id(svc, ws, memory) -> None:
    n = note(svc, ws, "Projects", "Fastpad ships in March.")
    memory.designate(ws.owner, n.id)
    for key in ("Projects", "projects", "  PROJECTS ", n.id):
        view = memory.topic(ws.owner, key)
        assert view.name == "Projects" and view.note.id == n.id
        assert view.note.blocks[0]["text"] == "Fastpad ships in March."
    for key in ("Nope", new_id(), ""):
        with pytest.raises(NotFound):
            memory.topic(ws.owner, key)


def test_an_agent_s_summary_skips_text_below_its_trust_floor(svc, ws, memory) -> None:
    n = note(svc, ws, "Facts", "placeholder", "Established by a person.")
    first = n.blocks[0]["id"]
    bot = token(svc, ws, ["notes:read", "notes:propose"], auto_apply=True)
    agent_propose(svc, bot, n.id, [{"op": "replace_block", "block": first, "text": "Unreviewed agent claim."}])
    memory.designate(ws.owner, n.id)

    assert memory.index(ws.owner).topics[0].summary == "Unreviewed agent claim."  # a person reads at floor "all"
    agent_view = memory.index(bot)
    assert agent_view.floor.value == "human"
    assert agent_view.topics[0].summary == "Established by a person."
    assert memory.index(bot, floor="all").topics[0].summary == "Unreviewed agent claim."
    with pytest.raises(ValidationFailed):
        memory.index(bot, floor="lowest")


def test_a_note_scoped_token_sees_only_its_topics(svc, ws, memory) -> None:
    mine, theirs = note(svc, ws, "Mine", "a"), note(svc, ws, "Theirs", "b")
    memory.designate(ws.owner, mine.id)
    memory.designate(ws.owner, theirs.id)
    scoped = token(svc, ws, ["notes:read"], note_ids=[mine.id])
    assert [t.name for t in memory.index(scoped).topics] == ["Mine"]
    with pytest.raises(NotFound):
        memory.topic(scoped, "Theirs")
    assert memory.index(ws.owner.sees_nothing_in(ws.id)).topics == []


def test_designating_needs_notes_write_and_a_visible_live_note(svc, ws, memory) -> None:
    n = note(svc, ws, "Topic", "t")
    reader = token(svc, ws, ["notes:read"])
    with pytest.raises(InsufficientScope):
        memory.designate(reader, n.id)
    other = note(svc, ws, "Elsewhere", "e")
    writer = token(svc, ws, ["notes:read", "notes:write"], note_ids=[n.id])
    with pytest.raises(OutOfScope):
        memory.designate(writer, other.id)
    with pytest.raises(NotFound):
        memory.designate(ws.owner, new_id())
    assert memory.designate(writer, n.id).name == "Topic"  # an agent token with notes:write may designate
    svc.notes.trash(ws.owner, other.id)
    with pytest.raises(Conflict):
        memory.designate(ws.owner, other.id)


def test_names_are_validated_and_unique_regardless_of_case(svc, ws, memory) -> None:
    a, b = note(svc, ws, "Alpha", "a"), note(svc, ws, "", "b")
    memory.designate(ws.owner, a.id)
    with pytest.raises(Conflict) as taken:
        memory.designate(ws.owner, b.id, name="ALPHA")
    assert taken.value.extra["reason"] == "name_taken"
    for bad in ("", "a/b", "x" * 121, new_id(), new_id().lower(), "bell\x07"):
        with pytest.raises(ValidationFailed):
            memory.designate(ws.owner, b.id, name=bad)
    with pytest.raises(ValidationFailed) as untitled:
        memory.designate(ws.owner, b.id)  # no name and no title to default to
    assert untitled.value.field_errors[0].field == "name"
    # Renaming a topic; designating again under the same name changes nothing.
    assert memory.designate(ws.owner, a.id, name="First letter").name == "First letter"
    assert memory.designate(ws.owner, a.id).name == "First letter"
    assert [t.name for t in memory.index(ws.owner).topics] == ["First letter"]


def test_trash_hides_a_topic_and_restore_brings_it_back(svc, ws, memory) -> None:
    n = note(svc, ws, "Ephemeral", "e")
    memory.designate(ws.owner, n.id)
    svc.notes.trash(ws.owner, n.id)
    assert memory.index(ws.owner).topics == []
    with pytest.raises(NotFound):
        memory.topic(ws.owner, "Ephemeral")
    svc.notes.restore(ws.owner, n.id)
    assert [t.name for t in memory.index(ws.owner).topics] == ["Ephemeral"]


def test_undesignating_keeps_the_note_and_both_acts_are_in_the_feed(svc, ws, memory) -> None:
    n = note(svc, ws, "Temporary", "t")
    memory.designate(ws.owner, n.id)
    assert memory.undesignate(ws.owner, "temporary").note_id == n.id
    assert memory.index(ws.owner).topics == []
    assert svc.notes.get(ws.owner, n.id).title == "Temporary"
    with pytest.raises(NotFound):
        memory.undesignate(ws.owner, "Temporary")
    changes = ChangeFeedService(svc.store).changes(ws.owner).items
    assert [(c.kind, c.note_id, c.subject_id, c.actor_kind) for c in changes[-2:]] == [
        ("memory_designate", n.id, "Temporary", "person"), ("memory_undesignate", n.id, "Temporary", "person")]
