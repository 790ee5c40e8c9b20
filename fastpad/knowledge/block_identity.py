"""Block identity on the write path: every block has its own ULID, unique across the workspace.

A ULID is minted when a block is created and survives splits, joins, pastes and ``fp push``
(spec › Blocks); everything durable (comment anchors, citations, ``{#id}`` anchors, search
chunks) points at one. These checks run inside ``NoteService``'s writes, before ``_commit``.
"""

from __future__ import annotations

from fastpad.errors import FieldError, ValidationFailed
from fastpad.notes import Block, is_ulid, new_id
from fastpad.store import BlockRow, WorkspaceTx


def mint_block_ids(blocks: list[Block]) -> list[Block]:
    errors, seen, out = [], set(), []
    for i, block in enumerate(blocks):
        if not isinstance(block, Block):
            errors.append(FieldError(f"blocks[{i}]", "type", "a block"))
            continue
        if block.id is None:
            block = block.with_id(new_id())
        elif not is_ulid(block.id):
            errors.append(FieldError(f"blocks[{i}].id", "ulid", "a block id is a ULID"))
        elif block.id in seen:
            errors.append(FieldError(f"blocks[{i}].id", "duplicate_block_id", f"{block.id} appears twice"))
        seen.add(block.id)
        out.append(block)
    if errors:
        raise ValidationFailed(detail="some blocks are invalid", field_errors=errors[:50],
                               extra={"field_errors_truncated": max(0, len(errors) - 50)} if len(errors) > 50 else {})
    return out


def reassign_block_ids_held_elsewhere(tx: WorkspaceTx, note_id: str,
                                       blocks: list[Block]) -> tuple[list[Block], dict[str, str]]:
    """``blocks`` with a fresh ULID for each id another note of the workspace holds, and the
    map of those old ids to the new ones."""
    held = tx.block_ids_held_elsewhere((b.id for b in blocks if b.id), note_id)
    reassigned = {block_id: new_id() for block_id in sorted(held)}
    return [b.with_id(reassigned[b.id]) if b.id in reassigned else b for b in blocks], reassigned


def check_block_identity(blocks: list[Block]) -> None:
    """After an import every block must still have its own ULID (the projection and
    everything that anchors to a block depend on it); otherwise the save is refused."""
    seen: set[str] = set()
    for block in blocks:
        if block.id is None or block.id in seen:
            raise ValidationFailed(
                detail="after this update a block would have no ULID, or share one with another block; "
                "copied blocks need freshly minted ids",
                field_errors=[FieldError("ops", "block_identity",
                                         "every block needs its own ULID id" if block.id is None
                                         else f"block id {block.id} would appear twice")],
            )
        seen.add(block.id)


def refuse_block_ids_held_elsewhere(tx: WorkspaceTx, note_id: str, before: list[BlockRow],
                                     after: list[Block]) -> None:
    """An update cannot give a new block an id another note holds: block ids are unique
    across the workspace. The server cannot re-id a block inside the client's CRDT update
    (the client's document would no longer be the server's), so the save is refused; the
    editor and ``fp push`` mint fresh ids for a copy, so only a client that kept a copied
    block's id meets this."""
    own = {b.block_id for b in before}
    held = tx.block_ids_held_elsewhere((b.id for b in after if b.id and b.id not in own), note_id)
    if held:
        raise ValidationFailed(
            detail="this update gives blocks ids another note holds; copied blocks need freshly minted ids",
            field_errors=[FieldError("ops", "block_identity", f"block id {block_id} belongs to another note")
                          for block_id in sorted(held)[:50]],
        )


def changed_block_ids(before: list[BlockRow], after: list[Block]) -> set[str]:
    old = {b.block_id: b for b in before}
    changed = set()
    for block in after:
        prev = old.get(block.id or "")
        if prev is None or (prev.type, prev.text, prev.attrs) != (block.type, block.text, block.attrs):
            changed.add(block.id or "")
    return changed
