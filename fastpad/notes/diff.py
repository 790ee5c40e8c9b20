"""What changed between a note's blocks and an edited copy of its Markdown.

The basis of ``fp push``. Identity comes from anchors, never from text
similarity: an anchor whose block changed is an edit, an anchor that vanished
is a deletion, a block without an anchor is new, an anchor out of its old order
is a move. The one refinement is exact: a block without an anchor directly
before an anchored one, whose texts joined give that anchored block's old text,
is a split on disk — and a split keeps the id on the first half, as in the
editor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Sequence

from fastpad.notes.blocks import Block
from fastpad.notes.ids import new_id
from fastpad.notes.markdown import canonical_form

if TYPE_CHECKING:
    from fastpad.notes.document import NoteDocument

ChangeKind = Literal["edit", "delete", "insert", "move", "split"]


@dataclass(frozen=True)
class BlockChange:
    """One change, in the order to apply it.

    - edit: ``block`` is the block's new content (same id).
    - delete: ``block_id`` is gone.
    - insert: ``block`` (with a freshly minted id) goes after ``after_id``.
    - move: ``block_id`` goes after ``after_id``.
    - split: ``block_id`` keeps ``block`` (the first half); the tail arrives as the next insert.
    ``after_id`` None means the start of the note.
    """

    kind: ChangeKind
    block_id: str
    block: Block | None = None
    after_id: str | None = None


def diff_blocks(known: Sequence[Block], edited: Sequence[Block], *, keep_ids: bool = False) -> list[BlockChange]:
    """The changes that turn ``known`` (the note) into ``edited`` (parsed from disk).
    ``keep_ids``: ``edited`` is an earlier version of this very note (a restore), so a block
    the note no longer has comes back under its own id instead of a fresh one."""
    known_by_id = {block.id: block for block in known}
    position = {block.id: i for i, block in enumerate(known)}
    final = _resolve_identities(known_by_id, edited, keep_ids)
    kept = {block.id for block, _ in final if block.id in known_by_id}
    changes = [BlockChange("delete", block.id) for block in known if block.id not in kept]

    stable = _longest_increasing([position[block.id] for block, _ in final if block.id in kept])
    previous: str | None = None
    for block, split_head in final:
        old = known_by_id.get(block.id)
        if old is None:
            changes.append(BlockChange("insert", block.id, block, previous))
        else:
            if position[block.id] not in stable:
                changes.append(BlockChange("move", block.id, after_id=previous))
            if split_head:
                changes.append(BlockChange("split", block.id, block))
            elif canonical_form(old) != canonical_form(block):
                changes.append(BlockChange("edit", block.id, block))
        previous = block.id
    return changes


def apply_block_changes(doc: "NoteDocument", changes: Sequence[BlockChange]) -> None:
    """Apply ``changes`` (from :func:`diff_blocks`, in its order) to ``doc``. A changed text goes
    through the note's text diff, so it costs the characters that changed."""
    for change in changes:
        if change.kind == "delete":
            doc.delete(change.block_id)
        elif change.kind == "insert":
            assert change.block is not None
            doc.insert_after(change.after_id, change.block)
        elif change.kind == "move":
            doc.move_after(change.block_id, change.after_id)
        else:  # edit, or the first half of a split (the tail follows as an insert)
            assert change.block is not None
            current = doc.block(change.block_id)
            if current.text != change.block.text:
                doc.replace_text(change.block_id, change.block.text)
            if (current.type, current.attrs) != (change.block.type, change.block.attrs):
                doc.set_block(change.block_id, type=change.block.type, attrs=change.block.attrs)


def _resolve_identities(known: dict[str, Block], edited: Sequence[Block],
                        keep_ids: bool = False) -> list[tuple[Block, bool]]:
    """Edited blocks with their final ids, each flagged when it is the head of a split."""
    final: list[tuple[Block, bool]] = []
    i = 0
    while i < len(edited):
        block = edited[i]
        following = edited[i + 1] if i + 1 < len(edited) else None
        if block.id is None and following is not None and _is_split(known.get(following.id), block, following):
            final.append((block.with_id(following.id), True))
            final.append((following.with_id(new_id()), False))
            i += 2
            continue
        # An anchor this note never had (copied from elsewhere) is new here too.
        final.append((block if block.id in known or (keep_ids and block.id) else block.with_id(new_id()), False))
        i += 1
    return final


def _is_split(old: Block | None, head: Block, tail: Block) -> bool:
    if old is None or not head.text or not tail.text:
        return False
    if not old.text.startswith(head.text.rstrip()) or not old.text.endswith(tail.text.lstrip()):
        return False
    middle = old.text[len(head.text.rstrip()) : len(old.text) - len(tail.text.lstrip())]
    return middle.strip() == "" and len(head.text.rstrip()) + len(tail.text.lstrip()) <= len(old.text)


def _longest_increasing(values: list[int]) -> set[int]:
    """The values of one longest strictly increasing subsequence (patience sorting)."""
    tails: list[int] = []  # index into values of the smallest tail of each length
    parent: list[int] = [-1] * len(values)
    for i, value in enumerate(values):
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if values[tails[mid]] < value:
                lo = mid + 1
            else:
                hi = mid
        parent[i] = tails[lo - 1] if lo else -1
        if lo == len(tails):
            tails.append(i)
        else:
            tails[lo] = i
    result: set[int] = set()
    i = tails[-1] if tails else -1
    while i != -1:
        result.add(values[i])
        i = parent[i]
    return result
