"""CaptureService on both backends: an inbox note of untrusted text, replayed by key for good."""

from __future__ import annotations

import pytest

from fastpad.errors import IdempotencyConflict, InsufficientScope, ValidationFailed
from fastpad.knowledge.capture import CaptureService
from tests.helpers_store import Services, Workspace


@pytest.fixture
def captures(svc: Services) -> CaptureService:
    return CaptureService(svc.store, svc.notes, clock=svc.clock)


def test_a_capture_is_an_untrusted_inbox_note_with_fresh_block_ids(svc, ws: Workspace, captures):
    text = "---\ntitle: Paper\ntypes: [Reading]\nurl: https://example.com\n---\n\n# Read this\n\nCopied {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}\n"
    result = captures.capture(ws.owner, text=text, key="k-1", properties={"source": "cli"})
    note = svc.notes.get(ws.owner, result.note_id)
    assert note.title == "Paper" and note.types == ("Inbox", "Reading")
    assert note.properties == {"url": "https://example.com", "source": "cli"}
    assert [b["text"] for b in note.blocks] == ["Read this", "Copied"]
    assert {(b["origin"], b["review_state"]) for b in note.blocks} == {("inbound_untrusted", "unreviewed")}
    assert note.blocks[1]["id"] != "01JB2K7Q9XN4M8YV3TD0FZ5ERW", "a copy never keeps another note's block id"


def test_replay_acknowledges_for_good_and_a_different_capture_under_the_key_conflicts(svc, ws, captures):
    first = captures.capture(ws.owner, text="remember the milk", key="k-2")
    svc.clock.advance(days=30)  # long after the generic idempotency records have expired
    again = captures.capture(ws.owner, text="remember the milk", key="k-2")
    assert again.note_id == first.note_id and again.replayed and not first.replayed
    assert len(svc.notes.list(ws.owner, limit=10).items) == 1
    with pytest.raises(IdempotencyConflict):
        captures.capture(ws.owner, text="remember the eggs", key="k-2")


def test_titles_text_that_is_not_markdown_and_refusals(svc, ws, captures):
    derived = captures.capture(ws.owner, text="- [ ] call the plumber about the leaking tap in the downstairs "
                                              "bathroom before the weekend, and ask about the boiler too",
                               key="k-3")
    title = svc.notes.get(ws.owner, derived.note_id).title
    assert title.startswith("call the plumber") and title.endswith("…") and len(title) <= 81
    broken = "---\nnot: [closed\n---\nstill kept"
    verbatim = svc.notes.get(ws.owner, captures.capture(ws.owner, text=broken, key="k-4").note_id)
    assert [(b["type"], b["text"]) for b in verbatim.blocks] == [("code", broken)]
    assert verbatim.title == "not: [closed"
    with pytest.raises(ValidationFailed):
        captures.capture(ws.owner, text="   ", key="k-5")
    with pytest.raises(ValidationFailed):
        captures.capture(ws.owner, text="fine", key="")
    reader = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes=["notes:read"])[0])
    with pytest.raises(InsufficientScope):
        captures.capture(reader, text="no write scope", key="k-6")
