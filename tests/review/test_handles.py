"""Anchor handles: real HMAC, real note frontiers."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta, timezone

import pytest

from fastpad.errors import HandleExpired, OutOfScope, StaleFrontier
from fastpad.notes import Block, NoteDocument
from fastpad.security.handles import (
    HANDLE_TTL,
    handle_frontier_matches,
    mint_handle,
    open_handle,
    require_current_frontier,
)

SECRET = b"s" * 32
NOW = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
SESSION, TOKEN = "ses_01JB2K7Q9XN4M8YV3TD0FZ5ERW", "tok_01JB2K7Q9XN4M8YV3TD0FZ5ERX"
NOTE, OTHER_NOTE = "01JB2K7Q9XN4M8YV3TD0FZ5ERW", "01JB2K7Q9XN4M8YV3TD0FZ5ERY"
NOT_REVOKED = lambda token_id: False  # noqa: E731


@pytest.fixture
def note() -> NoteDocument:
    return NoteDocument.new(blocks=[Block(None, "paragraph", "First."), Block(None, "paragraph", "Second.")], peer_id=1)


def mint(note: NoteDocument, **over) -> str:
    args = dict(session_id=SESSION, token_id=TOKEN, note_id=NOTE, block_id=note.blocks()[1].id, frontier=note.frontier(), now=NOW)
    args.update(over)
    return mint_handle(SECRET, **args)


def open_(handle: str, **over):
    args = dict(session_id=SESSION, token_id=TOKEN, note_id=NOTE, now=NOW + timedelta(seconds=10), is_token_revoked=NOT_REVOKED)
    args.update(over)
    return open_handle(SECRET, handle, **args)


def test_round_trip_names_the_block_and_is_short(note):
    handle = mint(note)
    assert handle.startswith("h1.") and len(handle) < 100
    claims = open_(handle)
    assert claims.block_id == note.blocks()[1].id
    assert (claims.session_id, claims.token_id, claims.note_id) == (SESSION, TOKEN, NOTE)
    assert claims.expires_at == NOW + HANDLE_TTL
    assert handle_frontier_matches(claims, note.frontier())


def test_length_does_not_grow_with_the_frontier(note):
    # a frontier naming many peers is hashed, not carried
    snapshot = note.snapshot()
    for peer in range(2, 40):  # concurrent edits: the frontier names every head
        other = NoteDocument.load(snapshot, peer_id=peer)
        other.replace_text(other.blocks()[0].id, f"edit {peer}")
        note.apply_update(other.export_updates())
    assert len(note.frontier()) > 100
    assert len(mint(note)) == len(mint(NoteDocument.new(blocks=[Block(None, "paragraph", "x")] * 2))) == 73


@pytest.mark.parametrize(
    "over",
    [{"session_id": "ses_someone_else"}, {"token_id": "tok_someone_else"}, {"note_id": OTHER_NOTE}],
    ids=["other-session", "other-token", "other-note"],
)
def test_replayed_elsewhere_is_inert(note, over):
    with pytest.raises(OutOfScope) as refused:
        open_(mint(note), **over)
    assert refused.value.slug == "out-of-scope"
    assert refused.value.field_errors[0].code == "invalid_handle"


def test_foreign_and_tampered_handles_are_refused_identically(note):
    handle = mint(note)
    body = bytearray(base64.urlsafe_b64decode(handle[3:] + "=" * (-len(handle[3:]) % 4)))
    body[6] ^= 0x01  # flip a bit of the block id
    tampered = "h1." + base64.urlsafe_b64encode(bytes(body)).rstrip(b"=").decode()
    errors = []
    for bad in (tampered, mint(note, session_id="x"), "h1.garbage", "", None, handle + "A", "h2." + handle[3:]):
        with pytest.raises(OutOfScope) as refused:
            open_(bad)
        errors.append((refused.value.detail, refused.value.field_errors))
    assert all(error == errors[0] for error in errors)


def test_extending_the_expiry_breaks_the_signature(note):
    handle = mint(note)
    raw = bytearray(base64.urlsafe_b64decode(handle[3:] + "=" * (-len(handle[3:]) % 4)))
    raw[0:4] = (int.from_bytes(raw[0:4], "big") + 3600).to_bytes(4, "big")
    forged = "h1." + base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    with pytest.raises(OutOfScope):
        open_(forged, now=NOW + timedelta(minutes=30))


def test_another_servers_secret_is_refused(note):
    handle = mint_handle(b"t" * 32, session_id=SESSION, token_id=TOKEN, note_id=NOTE,
                         block_id=note.blocks()[0].id, frontier=note.frontier(), now=NOW)
    with pytest.raises(OutOfScope):
        open_(handle)


def test_revoking_the_token_kills_its_handles(note):
    handle = mint(note)
    revoked = {TOKEN}
    with pytest.raises(OutOfScope):
        open_(handle, is_token_revoked=revoked.__contains__)


def test_expired_handle(note):
    handle = mint(note)
    open_(handle, now=NOW + HANDLE_TTL - timedelta(seconds=1))
    with pytest.raises(HandleExpired) as expired:
        open_(handle, now=NOW + HANDLE_TTL)
    assert expired.value.slug == "handle-expired" and expired.value.retryable
    assert expired.value.field_errors[0].field == "handle"


def test_expired_foreign_handle_says_nothing_about_expiry(note):
    with pytest.raises(OutOfScope):
        open_(mint(note), session_id="ses_other", now=NOW + timedelta(hours=1))


def test_frontier_mismatch_after_a_human_edit(note):
    handle = mint(note)
    note.replace_text(note.blocks()[0].id, "First, edited by a person.")
    claims = open_(handle)
    assert not handle_frontier_matches(claims, note.frontier())
    with pytest.raises(StaleFrontier) as stale:
        require_current_frontier(claims, note.frontier(), field="ops[0].handle")
    assert stale.value.extra["current_frontier"] == note.frontier()
    assert stale.value.field_errors[0].field == "ops[0].handle"


def test_field_path_is_named(note):
    with pytest.raises(OutOfScope) as refused:
        open_("h1.nope", field="ops[2].handle")
    assert refused.value.field_errors[0].field == "ops[2].handle"


def test_weak_secret_and_naive_time_are_programming_errors(note):
    with pytest.raises(ValueError):
        mint_handle(b"short", session_id=SESSION, token_id=TOKEN, note_id=NOTE, block_id=note.blocks()[0].id,
                    frontier=note.frontier(), now=NOW)
    with pytest.raises(ValueError):
        mint(note, now=datetime(2025, 3, 1))
