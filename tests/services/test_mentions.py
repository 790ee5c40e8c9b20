"""People mentioned in notes, on both backends: the write path's mention step puts one Inbox
entry per (person, block) for a member the first time the block mentions them, never for the
writer themselves; an agent's mention lands when its proposal is accepted; the Inbox reads
in keyset pages, read and unread, a person's own only."""

from __future__ import annotations

import pytest

from fastpad.errors import NotFound, PolicyDenied, ValidationFailed
from fastpad.knowledge.mentions import InboxService
from fastpad.knowledge.publishing import PublishingService
from fastpad.knowledge.wikilinks import extract_links
from fastpad.notes import Block, new_id
from fastpad.notes.mentions import person_mention
from fastpad.review.service import ReviewService
from fastpad.security.team import TeamService
from fastpad.store.purge import TrashPurge
from tests.helpers_store import REVIEW_SECRET, agent_propose, edit_ops


@pytest.fixture
def inbox(svc) -> InboxService:
    return InboxService(svc.store, clock=svc.clock)


@pytest.fixture
def bea(svc, ws):
    person = svc.people.create_person(ws.id, "bea@example.com", password="a long enough pass", display_name="Bea")
    return svc.people.principal_for(ws.id, person.id)


def type_into(svc, ws, principal, note_id, block_id, text):
    ops, frontier = edit_ops(svc.store, ws.id, note_id, lambda d: d.replace_text(block_id, text))
    svc.notes.apply_ops(principal, note_id, ops=ops, peer_id="1", expected_frontier=frontier)


def test_a_mention_puts_one_entry_in_the_person_s_inbox_naming_who_where_and_a_link(svc, ws, bea, inbox) -> None:
    note = svc.notes.create(ws.owner, title="Plan", blocks=[Block(None, "paragraph", "first"),
                                                            Block(None, "paragraph", "")])
    block_id = note.blocks[1]["id"]
    type_into(svc, ws, ws.owner, note.id, block_id, f"Over to {person_mention(bea.principal_id, 'Bea')} for review")

    page = inbox.page(bea)
    assert page.unread == 1 and page.next_cursor is None
    entry = page.mentions[0].as_dict()
    assert (entry["note_id"], entry["block_id"], entry["note_title"], entry["url"]) == (
        note.id, block_id, "Plan", f"/notes/{note.id}#{block_id}")
    assert entry["mentioned_by"] == {"kind": "person", "id": ws.owner_id, "token_id": None,
                                     "name": "owner-" + ws.id.lower() + "@example.com"}
    assert entry["excerpt"].startswith("Over to [@Bea](/people/") and entry["read"] is False
    assert entry["origin"] == "human_typed"
    assert inbox.page(ws.owner).mentions == []  # the writer's own Inbox holds nothing


def test_editing_removing_and_writing_a_mention_back_never_duplicates_it(svc, ws, bea, inbox) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "")])
    block_id = note.blocks[0]["id"]
    mention = person_mention(bea.principal_id, "Bea")
    for text in (f"{mention} hi", f"{mention} hi again, {mention}", "mention gone", f"back: {mention}"):
        type_into(svc, ws, ws.owner, note.id, block_id, text)
    assert len(inbox.page(bea).mentions) == 1
    # A second block is a second place: a second entry.
    svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", f"elsewhere {mention}")])
    assert len(inbox.page(bea).mentions) == 2


def test_mentioning_yourself_or_someone_who_is_not_a_member_notifies_nobody(svc, ws, bea, inbox) -> None:
    stranger = new_id()
    svc.notes.create(bea, blocks=[Block(None, "paragraph", f"note to self {person_mention(bea.principal_id, 'me')}"),
                                  Block(None, "paragraph", f"and {person_mention(stranger, 'Nobody')}")])
    assert inbox.page(bea).mentions == [] and inbox.page(ws.owner).mentions == []
    with svc.store.read(ws.id) as tx:
        assert tx.mentions.page(stranger, before_id=None, unread_only=False, limit=10) == []


def test_a_viewer_may_be_mentioned_and_a_removed_member_is_not(svc, ws, bea, inbox) -> None:
    team = TeamService(svc.store, svc.people)
    team.set_role(ws.owner, bea.principal_id, "viewer")
    svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", person_mention(bea.principal_id, "Bea"))])
    assert len(inbox.page(svc.people.principal_for(ws.id, bea.principal_id)).mentions) == 1
    team.remove(ws.owner, bea.principal_id)
    svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "again " + person_mention(bea.principal_id, "Bea"))])
    with svc.store.read(ws.id) as tx:
        assert len(tx.mentions.page(bea.principal_id, before_id=None, unread_only=False, limit=10)) == 1


def test_an_agent_s_mention_lands_when_its_proposal_is_accepted(svc, ws, bea, inbox) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "status")])
    plaintext, _ = svc.tokens.create(ws.id, scopes=["notes:read", "notes:propose"], label="helper")
    agent = svc.tokens.authenticate(plaintext)
    turn = agent_propose(svc, agent, note.id, [{"op": "insert_after", "block": note.blocks[0]["id"],
                                                "text": f"{person_mention(bea.principal_id, 'Bea')} please check"}])
    assert inbox.page(bea).mentions == []  # a proposal is not in the note yet
    ReviewService(svc.store, REVIEW_SECRET, svc.notes, clock=svc.clock).accept(ws.owner, turn.id)
    [entry] = inbox.page(bea).mentions
    assert entry.row.origin.startswith("agent") and entry.row.mentioned_by_id == ws.owner_id


def test_read_unread_and_keyset_pages(svc, ws, bea, inbox) -> None:
    for i in range(5):
        svc.clock.advance(seconds=1)
        svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", f"{i} {person_mention(bea.principal_id, 'Bea')}")])
    first = inbox.page(bea, limit=2)
    second = inbox.page(bea, limit=2, cursor=first.next_cursor)
    third = inbox.page(bea, limit=2, cursor=second.next_cursor)
    texts = [m.excerpt[0] for m in [*first.mentions, *second.mentions, *third.mentions]]
    assert texts == ["4", "3", "2", "1", "0"] and third.next_cursor is None

    newest = first.mentions[0].row.id
    assert inbox.mark(bea, newest, read=True).row.read_at == svc.clock()
    assert inbox.page(bea).unread == 4
    assert [m.row.id for m in inbox.page(bea, unread_only=True).mentions if m.row.id == newest] == []
    assert inbox.mark(bea, newest, read=False).row.read_at is None
    assert inbox.mark_all_read(bea) == 5 and inbox.page(bea).unread == 0


def test_no_one_reads_or_marks_another_s_inbox_and_an_agent_has_none(svc, ws, bea, inbox) -> None:
    svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", person_mention(bea.principal_id, "Bea"))])
    entry = inbox.page(bea).mentions[0].row.id
    with pytest.raises(NotFound):
        inbox.mark(ws.owner, entry, read=True)
    plaintext, _ = svc.tokens.create(ws.id, scopes=["notes:read"], label="reader")
    with pytest.raises(PolicyDenied):
        inbox.page(svc.tokens.authenticate(plaintext))
    with pytest.raises(ValidationFailed):
        inbox.page(bea, cursor="not-a-cursor")


def test_a_person_mention_is_not_a_link_to_a_note_of_the_same_name(svc, ws, bea) -> None:
    svc.notes.create(ws.owner, title="Bea", blocks=[Block(None, "paragraph", "a note named like her")])
    text = f"ask {person_mention(bea.principal_id, 'Bea')} or read @Bea"
    assert [ref.title for ref in extract_links("paragraph", text, titles={"bea"})] == ["Bea"]  # the bare @Bea only
    assert extract_links("paragraph", person_mention(bea.principal_id, "Bea"), titles={"bea"}) == []


def test_purging_a_note_removes_its_entries(svc, ws, bea, inbox) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", person_mention(bea.principal_id, "Bea"))])
    svc.notes.trash(ws.owner, note.id)
    assert inbox.page(bea).mentions[0].note_title is None  # trashed: no title, no text shown
    with svc.store.write(ws.id) as tx:
        assert TrashPurge(tx).delete_trashed_before(svc.clock(), limit=10) == [note.id]
    assert inbox.page(bea).mentions == []


def test_a_published_page_shows_a_mention_as_the_name_alone(svc, ws, bea) -> None:
    note = svc.notes.create(ws.owner, title="Public", blocks=[
        Block(None, "paragraph", f"Thanks to {person_mention(bea.principal_id, 'Bea')}!")])
    publishing = PublishingService(svc.store, b"k" * 32, clock=svc.clock)
    publishing.publish(ws.owner, note.id)
    page = publishing.public(note.id)
    assert "Thanks to @Bea!" in page.markdown and bea.principal_id not in page.markdown + page.body_html
