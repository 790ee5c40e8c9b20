"""Shared fixtures for the review tests: real notes, real handles."""

from __future__ import annotations

from datetime import datetime, timezone

from fastpad.notes import Block, NoteDocument
from fastpad.review.ops import Op, resolve_handles, validate_ops
from fastpad.security.handles import mint_handle, open_handle, require_current_frontier

SECRET = b"k" * 32
NOW = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
SESSION, TOKEN = "ses_1", "tok_1"


def note(*texts: str, peer_id: int = 1) -> NoteDocument:
    return NoteDocument.new(blocks=[Block(None, "paragraph", text) for text in texts], peer_id=peer_id)


def texts(blocks) -> list[str]:
    return [block.text for block in blocks]


def handles(doc: NoteDocument, note_id: str) -> list[str]:
    """What fastpad_fetch with_handles would hand out, one per block."""
    frontier = doc.frontier()
    return [
        mint_handle(SECRET, session_id=SESSION, token_id=TOKEN, note_id=note_id, block_id=block.id, frontier=frontier, now=NOW)
        for block in doc.blocks()
    ]


def resolved(doc: NoteDocument, note_id: str, raw_ops: list[dict]) -> list[Op]:
    """Validate and resolve ops the way the service will: open each handle, check its frontier."""

    def open_one(handle: str, field: str) -> str:
        claims = open_handle(
            SECRET, handle, session_id=SESSION, token_id=TOKEN, note_id=note_id, now=NOW,
            is_token_revoked=lambda token_id: False, field=field,
        )
        require_current_frontier(claims, doc.frontier(), field=field)
        return claims.block_id

    return resolve_handles(validate_ops(raw_ops), open_one)
