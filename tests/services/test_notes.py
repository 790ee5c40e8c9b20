"""NoteService: scopes, note sets, the write path's guarantees, pagination."""

from __future__ import annotations

import pytest

from fastpad.errors import (
    Conflict,
    InsufficientScope,
    NotFound,
    OutOfScope,
    PolicyDenied,
    StaleFrontier,
    ValidationFailed,
)
from fastpad.notes import Block, NoteDocument, UpdateLimits, is_ulid, parse_markdown
from fastpad.knowledge.notes import NoteService
from fastpad.review.effects import KnowledgeEffects
from fastpad.review.service import ReviewService
from fastpad.review.turns import Turn
from tests.helpers_store import REVIEW_SECRET, agent_propose, client_copy, edit_ops, feed_rows, lexical

MARKDOWN = """---
title: Trip plan
types: [Project]
---
# Packing {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}

Bring the quokka camera.

- [ ] passport
"""


def everything(store, workspace_id, note_id):
    with store.read(workspace_id) as tx:
        return (tx.note(note_id, with_snapshot=True), tx.op_log(note_id), tx.blocks(note_id), feed_rows(tx),
                [h.block_id for h in lexical(tx, "quokka camera passport")])


# ---------------------------------------------------------------------- create / get / markdown


def test_create_from_markdown_keeps_anchors_and_mints_the_rest(svc, ws) -> None:
    view = svc.notes.create(ws.owner, markdown=MARKDOWN)
    assert (view.title, view.types) == ("Trip plan", ("Project",))
    assert [b["type"] for b in view.blocks] == ["heading", "paragraph", "task"]
    assert view.blocks[0]["id"] == "01JB2K7Q9XN4M8YV3TD0FZ5ERW"
    assert all(is_ulid(b["id"]) for b in view.blocks) and len({b["id"] for b in view.blocks}) == 3
    assert {(b["origin"], b["review_state"]) for b in view.blocks} == {("human_typed", "human_accepted")}
    assert view.frontier.startswith("fp1:") and not view.archived and not view.trashed
    data = view.as_dict()
    assert data["created_at"].endswith("+00:00") and data["blocks"][2]["attrs"]["checked"] is False
    # Canonical Markdown back, parsing to the same note.
    text = svc.notes.markdown(ws.owner, view.id)
    parsed = parse_markdown(text)
    assert [b.id for b in parsed.blocks] == [b["id"] for b in view.blocks]
    assert parsed.meta.title == "Trip plan"


def test_create_from_blocks_and_overrides(svc, ws) -> None:
    view = svc.notes.create(ws.owner, title="T", types=["Book"], properties={"pages": 3},
                            blocks=[Block(None, "paragraph", "hello")])
    got = svc.notes.get(ws.owner, view.id)
    assert (got.title, got.types, got.properties) == ("T", ("Book",), {"pages": 3})
    assert got.blocks[0]["text"] == "hello"


def test_create_validates_its_input(svc, ws) -> None:
    dup = Block("01JB2K7Q9XN4M8YV3TD0FZ5ERW", "paragraph", "a")
    with pytest.raises(ValidationFailed) as caught:
        svc.notes.create(ws.owner, blocks=[dup, dup])
    assert caught.value.field_errors[0].code == "duplicate_block_id"
    with pytest.raises(ValidationFailed):
        svc.notes.create(ws.owner, markdown="x", blocks=[])
    with pytest.raises(ValidationFailed):
        svc.notes.create(ws.owner, markdown="a {#not-a-ulid}\n")
    with svc.store.read(ws.id) as tx:
        assert tx.list_notes() == []


def test_an_agents_new_note_is_a_proposal_and_under_auto_apply_lands_unreviewed_on_agent_activity(svc, ws) -> None:
    review = ReviewService(svc.store, REVIEW_SECRET, svc.notes, clock=svc.clock,
                           effects=KnowledgeEffects(notes=svc.notes))
    scopes = ["notes:read", "notes:write"]
    plain = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=scopes)[0])
    before = svc.notes.list(ws.owner).items
    proposed = svc.notes.create(plain, title="From a bot", blocks=[Block(None, "paragraph", "from a bot")])
    assert isinstance(proposed, Turn) and proposed.status == "pending" and proposed.authority is None
    assert proposed.new_note is not None and proposed.new_note["title"] == "From a bot"
    assert svc.notes.list(ws.owner).items == before  # nothing exists until a person accepts it
    [waiting] = review.list(ws.owner, status="waiting").items
    assert waiting.id == proposed.id and review.review(ws.owner, proposed.id).note_title == "From a bot"
    decision = review.accept(ws.owner, proposed.id)
    note = svc.notes.get(ws.owner, proposed.note_id)
    assert (note.title, [b["text"] for b in note.blocks]) == ("From a bot", ["from a bot"])
    assert (note.blocks[0]["origin"], note.blocks[0]["review_state"]) == ("agent_written", "human_accepted")
    assert decision.turn.status == "accepted" and decision.frontier == note.frontier
    # A rejected one leaves no note behind.
    rejected = svc.notes.create(plain, markdown="# Unwanted\n\nNo thanks.\n")
    assert review.reject(ws.owner, rejected.id).status == "rejected"
    with pytest.raises(NotFound):
        svc.notes.get(ws.owner, rejected.note_id)

    auto = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=scopes, auto_apply=True)[0])
    view = svc.notes.create(auto, blocks=[Block(None, "paragraph", "from a bot")])
    assert (view.blocks[0]["origin"], view.blocks[0]["review_state"]) == ("agent_written", "unreviewed")
    [listed] = review.activity(ws.owner)
    assert (listed.turn.note_id, listed.turn.authority, listed.blocks) == (view.id, "auto_apply", 1)
    # A title alone is a note too (one empty paragraph to accept), and reverting it takes the note back.
    empty = svc.notes.create(auto, title="Just a title")
    [listed] = [item for item in review.activity(ws.owner) if item.turn.note_id == empty.id]
    assert [b["text"] for b in empty.blocks] == [""]
    assert review.revert(ws.owner, listed.turn.id).undone == (("note", empty.id, "trashed"),)
    assert svc.notes.get(ws.owner, empty.id).trashed
    # Captures and imports carry inbound text rather than the agent's words: still created directly.
    carried = svc.notes.create(plain, blocks=[Block(None, "paragraph", "an email")], inbound=True)
    assert carried.blocks[0]["origin"] == "inbound_untrusted"


# ---------------------------------------------------------------------- apply_ops


def test_ops_apply_and_restamp_only_changed_blocks(svc, ws) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", t) for t in ("keep me", "change me")])
    keep, change = (b["id"] for b in note.blocks)
    agent = svc.tokens.authenticate(
        svc.tokens.create(ws.id, scopes=["notes:read", "notes:propose"], auto_apply=True)[0])
    frontier = note.frontier
    # An agent writes by proposing; an auto-apply token's proposal lands at once.
    turn = agent_propose(svc, agent, note.id, [{"op": "replace_block", "block": change, "text": "changed by a bot"}])
    assert turn.note_id == note.id and turn.landed_block_ids == (change,)
    view = svc.notes.get(ws.owner, note.id)
    assert view.frontier != frontier
    by_id = {b["id"]: b for b in view.blocks}
    assert (by_id[keep]["origin"], by_id[keep]["review_state"]) == ("human_typed", "human_accepted")
    assert (by_id[change]["origin"], by_id[change]["review_state"]) == ("agent_written", "unreviewed")
    assert by_id[change]["text"] == "changed by a bot"


def test_resending_ops_the_note_already_has_changes_nothing(svc, ws) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "a")])
    block_id = note.blocks[0]["id"]
    ops, frontier = edit_ops(svc.store, ws.id, note.id, lambda d: d.replace_text(block_id, "b"))
    first = svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id=None, expected_frontier=frontier)
    again = svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id=None, expected_frontier=first.frontier)
    assert again.frontier == first.frontier
    with svc.store.read(ws.id) as tx:
        assert len(tx.op_log(note.id)) == 2


def test_a_stale_frontier_names_both_states_and_changes_nothing(svc, ws) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "a")])
    block_id = note.blocks[0]["id"]
    ops1, frontier = edit_ops(svc.store, ws.id, note.id, lambda d: d.replace_text(block_id, "first"))
    ops2, _ = edit_ops(svc.store, ws.id, note.id, lambda d: d.replace_text(block_id, "second"))
    current = svc.notes.apply_ops(ws.owner, note.id, ops=ops1, peer_id=None, expected_frontier=frontier).frontier
    before = everything(svc.store, ws.id, note.id)
    with pytest.raises(StaleFrontier) as caught:
        svc.notes.apply_ops(ws.owner, note.id, ops=ops2, peer_id=None, expected_frontier=frontier)
    assert caught.value.extra == {"expected_frontier": frontier, "current_frontier": current}
    assert caught.value.status == 409 and caught.value.retryable
    assert everything(svc.store, ws.id, note.id) == before


@pytest.mark.parametrize("refusal", ["mode", "max_bytes", "malformed_update", "block_identity"])
def test_a_refused_update_leaves_op_log_projection_and_index_untouched(svc, ws, refusal) -> None:
    note = svc.notes.create(ws.owner, markdown=MARKDOWN)
    block_id = note.blocks[1]["id"]
    doc, frontier = client_copy(svc.store, ws.id, note.id)
    notes = svc.notes
    if refusal == "mode":
        doc.replace_text(block_id, "something else entirely")
        ops = doc.snapshot()
    elif refusal == "max_bytes":
        doc.replace_text(block_id, "x" * 5000)
        ops = doc.export_updates(frontier)
        notes = NoteService(svc.store, clock=svc.clock, limits=UpdateLimits(max_bytes=1000))
    elif refusal == "malformed_update":
        ops = b"\x00not a loro update at all"
    else:  # a block copied without minting a new id
        from loro import LoroMap, LoroText

        blocks = doc.loro.get_movable_list("blocks")
        copy = blocks.insert_container(0, LoroMap())
        copy.insert("id", block_id)
        copy.insert("type", "paragraph")
        copy.insert_container("text", LoroText()).insert(0, "duplicate")
        doc.loro.commit()
        ops = doc.export_updates(frontier)
    before = everything(svc.store, ws.id, note.id)
    assert before[4]  # the lexical index holds the note
    with pytest.raises(ValidationFailed) as caught:
        notes.apply_ops(ws.owner, note.id, ops=ops, peer_id=None, expected_frontier=frontier)
    assert caught.value.field_errors[0].field == "ops"
    assert caught.value.field_errors[0].code == refusal
    assert not caught.value.retryable
    assert everything(svc.store, ws.id, note.id) == before


def test_malformed_frontier_is_a_validation_error(svc, ws) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "a")])
    with pytest.raises(ValidationFailed):
        svc.notes.apply_ops(ws.owner, note.id, ops=b"", peer_id=None, expected_frontier="nope")


def test_an_agent_needs_auto_apply_to_edit_directly(svc, ws) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "a")])
    agent = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:read", "notes:write"])[0])
    ops, frontier = edit_ops(svc.store, ws.id, note.id, lambda d: d.replace_text(note.blocks[0]["id"], "b"))
    with pytest.raises(PolicyDenied):
        svc.notes.apply_ops(agent, note.id, ops=ops, peer_id=None, expected_frontier=frontier)


def test_a_trashed_note_must_be_restored_before_editing(svc, ws) -> None:
    note = svc.notes.create(ws.owner, blocks=[Block(None, "paragraph", "a")])
    ops, frontier = edit_ops(svc.store, ws.id, note.id, lambda d: d.replace_text(note.blocks[0]["id"], "b"))
    svc.notes.trash(ws.owner, note.id)
    with pytest.raises(Conflict):
        svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id=None, expected_frontier=frontier)
    svc.notes.restore(ws.owner, note.id)
    svc.notes.apply_ops(ws.owner, note.id, ops=ops, peer_id=None, expected_frontier=frontier)


# ---------------------------------------------------------------------- scopes and note sets


def test_require_names_every_missing_scope(svc, ws) -> None:
    reader = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["search:read"])[0])
    with pytest.raises(InsufficientScope) as caught:
        reader.require("notes:read", "notes:write", "search:read")
    assert caught.value.extra == {"required": ["notes:read", "notes:write", "search:read"],
                                  "missing": ["notes:read", "notes:write"]}
    with pytest.raises(InsufficientScope):
        svc.notes.list(reader)
    with pytest.raises(InsufficientScope):
        svc.notes.create(reader, title="x")


def test_a_note_set_limits_everything_and_hides_the_rest(svc, ws) -> None:
    inside = svc.notes.create(ws.owner, title="in")
    outside = svc.notes.create(ws.owner, title="out")
    limited = svc.tokens.authenticate(svc.tokens.create(
        ws.id, scopes=["notes:read", "notes:write", "notes:delete"], note_ids=[inside.id], auto_apply=True)[0])
    assert [n.id for n in svc.notes.list(limited).items] == [inside.id]
    assert svc.notes.get(limited, inside.id).title == "in"
    # Outside the set is out-of-scope, decided from the set alone: a note there and no note at all look the same.
    for call in (svc.notes.get, svc.notes.markdown, svc.notes.trash):
        for note_id in (outside.id, "01JB2K7Q9XN4M8YV3TD0FZ5ERW"):
            with pytest.raises(OutOfScope) as caught:
                call(limited, note_id)
            assert caught.value.status == 403 and caught.value.extra == {"note_id": note_id}
    with pytest.raises(OutOfScope):
        svc.notes.create(limited, title="new")


# ---------------------------------------------------------------------- archive / trash


def test_archive_and_trash_states_and_lists(svc, ws) -> None:
    a, b, c = (svc.notes.create(ws.owner, title=t, blocks=[Block(None, "paragraph", f"zebra {t}")])
               for t in "abc")
    assert svc.notes.archive(ws.owner, a.id).archived
    assert svc.notes.trash(ws.owner, b.id).trashed
    assert svc.notes.archive(ws.owner, a.id).archived  # idempotent, no second write
    assert [n.id for n in svc.notes.list(ws.owner).items] == [c.id]
    assert {n.id for n in svc.notes.list(ws.owner, include_archived=True).items} == {a.id, c.id}
    assert {n.id for n in svc.notes.list(ws.owner, include_archived=True, include_trashed=True).items} == {
        a.id, b.id, c.id}
    with svc.store.read(ws.id) as tx:
        assert {h.note_id for h in lexical(tx, "zebra")} == {c.id}  # archived and trashed drop out
        assert {h.note_id for h in lexical(tx, "zebra", include_archived=True)} == {a.id, c.id}
        assert [ch.kind for ch in feed_rows(tx)] == ["create", "create", "create", "archive", "trash"]
    assert not svc.notes.unarchive(ws.owner, a.id).archived
    assert not svc.notes.restore(ws.owner, b.id).trashed
    assert len(svc.notes.list(ws.owner).items) == 3


def test_archiving_is_for_people_trashing_needs_notes_delete(svc, ws) -> None:
    note = svc.notes.create(ws.owner, title="x")
    agent = svc.tokens.authenticate(svc.tokens.create(
        ws.id, scopes=["notes:read", "notes:write", "notes:delete"], auto_apply=True)[0])
    with pytest.raises(PolicyDenied):
        svc.notes.archive(agent, note.id)
    assert svc.notes.trash(agent, note.id).trashed
    writer = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:read", "notes:write"])[0])
    with pytest.raises(InsufficientScope):
        svc.notes.restore(writer, note.id)


# ---------------------------------------------------------------------- pagination


def test_keyset_pagination_walks_every_note_once(svc, ws) -> None:
    ids = [svc.notes.create(ws.owner, title=f"n{i}").id for i in range(7)]
    seen, cursor, pages = [], None, 0
    while True:
        page = svc.notes.list(ws.owner, cursor=cursor, limit=3)
        seen += [n.id for n in page.items]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted(ids) and pages == 3
    # A note created mid-walk lands after the cursor, never duplicating earlier pages.
    first = svc.notes.list(ws.owner, limit=3)
    late = svc.notes.create(ws.owner, title="late").id
    rest = svc.notes.list(ws.owner, cursor=first.next_cursor, limit=50)
    assert [n.id for n in first.items + rest.items] == sorted(ids) + [late]
    assert svc.notes.list(ws.owner, limit=7 + 1).next_cursor is None


@pytest.mark.parametrize("cursor", ["", "garbage!", "bjE6bm90LWEtdWxpZA"])
def test_a_bad_cursor_or_limit_is_a_validation_error(svc, ws, cursor) -> None:
    with pytest.raises(ValidationFailed):
        svc.notes.list(ws.owner, cursor=cursor)
    with pytest.raises(ValidationFailed):
        svc.notes.list(ws.owner, limit=0)


def test_new_documents_round_trip_through_the_store(svc, ws) -> None:
    note = svc.notes.create(ws.owner, markdown=MARKDOWN)
    doc, frontier = client_copy(svc.store, ws.id, note.id)
    assert isinstance(doc, NoteDocument) and doc.frontier() == frontier == note.frontier
    assert [b.id for b in doc.blocks()] == [b["id"] for b in note.blocks]
