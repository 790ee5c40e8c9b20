"""Applying a proposal's prose ops, and the per-block diff a person reviews.

A proposal never touches the note itself. :func:`apply_prose` forks the note at
the proposal's base (``at``: its ``expected_frontier``, default the current
frontier), applies the prose ops to the fork in order and returns the blocks
before and after, the per-block :class:`BlockDiff` list and the equivalent
:class:`Change` list. The fork is a real ``NoteDocument`` with its own peer id,
so its Loro update (:meth:`ProseResult.update`) is the proposal's "sibling
suggestion container" if the store wants to keep one.

Rules an op list must follow (each refusal is ``validation-failed`` naming
``ops[i].handle``): every handle must be resolved to a block id of this note
(``unknown_block`` otherwise); a block deleted by an earlier op cannot be
replaced, deleted again or used as an anchor (``block_deleted``); a block is
replaced at most once per proposal (``duplicate_target``).

Insert order is the order the agent wrote: consecutive ``insert_after`` ops with
the same anchor land one after another (X, A, B — not X, B, A);
``insert_before`` already does (A, B, X). Non-prose ops (edges, events) are
skipped here: they wait for a person and are applied by their own services.

Inserted blocks get fresh ULIDs in the fork; accepting keeps those ids
(:func:`apply_changes` inserts the block with its id), so the diff a person
reviewed, the blocks that land and a later revert all talk about the same ids.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from fastpad.errors import FieldError, StaleFrontier, ValidationFailed
from fastpad.notes.blocks import BLOCK_TYPES, Block
from fastpad.notes.document import NoteDocument
from fastpad.review.ops import Delete, InsertAfter, InsertBefore, Op, ReplaceBlock, is_prose, normalized_attrs

DiffKind = Literal["inserted", "replaced", "deleted"]
HunkOp = Literal["equal", "insert", "delete", "replace"]

_TOKENS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class Hunk:
    """One stretch of an inline diff: ``before`` became ``after`` (equal: both the same)."""

    op: HunkOp
    before: str
    after: str


@dataclass(frozen=True)
class BlockDiff:
    """One touched block, as the review page shows it.

    ``before`` is what the agent read (the block at the proposal's base), ``after`` what it
    wants; ``after_id`` places an inserted block (the block it follows in the proposed note,
    ``None``: the start); ``source_block_ids`` are the blocks it says it drew from."""

    kind: DiffKind
    block_id: str
    before: Block | None
    after: Block | None
    hunks: tuple[Hunk, ...]
    after_id: str | None = None
    source_block_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Change:
    """One step that turns a note's blocks into others, in the order to apply it.

    - ``insert``: ``block`` (with its id) goes after ``after_id`` (``None``: at the start)
    - ``replace``: block ``block_id`` takes ``block``'s type, text and attrs
    - ``delete``: block ``block_id`` goes
    """

    kind: Literal["insert", "replace", "delete"]
    block_id: str
    block: Block | None = None
    after_id: str | None = None


@dataclass
class ProseResult:
    base_frontier: str
    before: list[Block]
    after: list[Block]
    diffs: list[BlockDiff]
    changes: list[Change]
    inserted: dict[int, str]  # op index -> id of the block it inserted
    document: NoteDocument = field(repr=False)

    def update(self) -> bytes:
        """The proposal as a Loro update on top of its base frontier."""
        return self.document.export_updates(since=self.base_frontier)

    @property
    def touched_block_ids(self) -> list[str]:
        return [diff.block_id for diff in self.diffs]


# -- reading a note at a version ---------------------------------------------------------------


def fork_at(note: NoteDocument, frontier: str | None = None) -> NoteDocument:
    """An independent copy of ``note`` at ``frontier`` (default: now), with its own peer id.
    Raises ``validation-failed`` for a frontier the note has never been at."""
    if frontier is None:
        return NoteDocument(note.loro.fork())
    if not note.knows(frontier):
        raise ValidationFailed(
            detail="expected_frontier names a version this note has never been at. Re-read the note "
            "and use the frontier it returns.",
            field_errors=[FieldError("expected_frontier", "unknown_frontier", "This note has never been at that version.")],
            extra={"current_frontier": note.frontier()},
        )
    return note.at(frontier)


def blocks_at(note: NoteDocument, frontier: str) -> list[Block]:
    """The note's blocks as they were at ``frontier`` (what an agent read then)."""
    return fork_at(note, frontier).blocks()


def check_fresh(note: NoteDocument, expected_frontier: str) -> None:
    """``stale-frontier`` unless the note is exactly at ``expected_frontier``.

    A version the note has never seen is ``validation-failed`` (it is not stale, it is wrong)."""
    current = note.frontier()
    if current == expected_frontier:
        return
    note.compare(expected_frontier, current)  # raises validation-failed for an unknown frontier
    raise StaleFrontier(
        detail="The note changed since you read it, so nothing was proposed. Re-read the note, "
        "recompute your ops against its frontier, and propose again.",
        field_errors=[FieldError("expected_frontier", "stale_frontier", "The note has moved on since this frontier.")],
        extra={"expected_frontier": expected_frontier, "current_frontier": current},
        next_call="fastpad_fetch with with_handles: true, then fastpad_propose with the new frontier",
    )


# -- applying ops ----------------------------------------------------------------------------------


def apply_prose(
    note: NoteDocument,
    ops: Sequence[Op],
    *,
    at: str | None = None,
    source_block_ids: Sequence[str] = (),
    path: str = "ops",
) -> ProseResult:
    """Apply the prose ops (handles already resolved) to a fork of ``note`` at ``at``."""
    fork = fork_at(note, at)
    base_frontier = fork.frontier()
    before = fork.blocks()
    present = {block.id for block in before if block.id}
    deleted: set[str] = set()
    replaced: set[str] = set()
    last_after: dict[str | None, str] = {}
    inserted: dict[int, str] = {}
    sources: dict[str, tuple[str, ...]] = {}

    for index, op in enumerate(ops):
        if not is_prose(op):
            continue
        where = f"{path}[{index}]"
        target = op.block_id
        if op.handle is not None:
            if target is None:
                raise _invalid(f"{where}.handle", "unresolved_handle", "The handle was not resolved to a block.")
            if target in deleted:
                raise _invalid(f"{where}.handle", "block_deleted", "An earlier op in this proposal deletes that block.")
            if target not in present:
                raise _invalid(f"{where}.handle", "unknown_block", "The handle names a block this note does not have.")

        if isinstance(op, (InsertAfter, InsertBefore)):
            block = Block(None, op.type, op.text, normalized_attrs(op.type, op.attrs))
            if isinstance(op, InsertAfter):
                anchor = last_after.get(target, target)
                new_id = fork.insert_after(anchor, block)
                last_after[target] = new_id
            else:
                new_id = fork.insert_before(target, block)
            inserted[index] = new_id
            sources[new_id] = _merge_ids(op.source_block_ids, source_block_ids)
        elif isinstance(op, ReplaceBlock):
            assert target is not None
            if target in replaced:
                raise _invalid(f"{where}.handle", "duplicate_target", "Another op in this proposal already replaces that block.")
            current = fork.block(target)
            new_type = op.type or current.type
            for key in op.attrs or {}:
                if key not in BLOCK_TYPES[new_type]:
                    raise _invalid(f"{where}.attrs.{key}", "unknown_attr", f"A {new_type} block has no attribute {key!r}.")
            fork.replace_text(target, op.text)
            if op.type is not None or op.attrs:
                fork.set_block(target, type=new_type, attrs=normalized_attrs(new_type, {**current.attrs, **(op.attrs or {})}))
            replaced.add(target)
            sources[target] = _merge_ids(op.source_block_ids, source_block_ids)
        elif isinstance(op, Delete):
            assert target is not None
            fork.delete(target)
            deleted.add(target)
            present.discard(target)

    after = fork.blocks()
    diffs = diff_for_review(before, after, sources=sources, default_sources=tuple(source_block_ids))
    return ProseResult(base_frontier, before, after, diffs, changes_from_diffs(diffs), inserted, fork)


# -- the review diff --------------------------------------------------------------------------------


def diff_for_review(
    before_blocks: Sequence[Block],
    after_blocks: Sequence[Block],
    *,
    sources: Mapping[str, Sequence[str]] | None = None,
    default_sources: Sequence[str] = (),
) -> list[BlockDiff]:
    """The touched blocks, in document order, by id: gone → deleted, new → inserted,
    same id with other type/text/attrs → replaced. A deleted block is listed where it was.
    ``sources`` maps a block id to the source blocks cited for it; ``default_sources``
    (the proposal-level citations) go to every block without its own."""
    sources = sources or {}
    old = {block.id: block for block in before_blocks if block.id}
    new_ids = {block.id for block in after_blocks if block.id}
    old_order = [block.id for block in before_blocks if block.id]
    old_position = {block_id: i for i, block_id in enumerate(old_order)}
    out: list[BlockDiff] = []
    cursor = 0

    def cited(block_id: str) -> tuple[str, ...]:
        return tuple(sources.get(block_id, ())) or tuple(default_sources)

    def flush_deleted(upto: int) -> None:
        nonlocal cursor
        while cursor < upto:
            block_id = old_order[cursor]
            if block_id not in new_ids:
                gone = old[block_id]
                out.append(BlockDiff("deleted", block_id, gone, None, (Hunk("delete", gone.text, ""),), None, cited(block_id)))
            cursor += 1

    previous: str | None = None
    for block in after_blocks:
        if not block.id:
            previous = None
            continue
        if block.id in old:
            position = old_position[block.id]
            if position >= cursor:
                flush_deleted(position)
                cursor = position + 1
            was = old[block.id]
            if _content(was) != _content(block):
                out.append(BlockDiff("replaced", block.id, was, block, text_hunks(was.text, block.text), None, cited(block.id)))
        else:
            # a run of deletions right here is listed before what replaces it
            upto = cursor
            while upto < len(old_order) and old_order[upto] not in new_ids:
                upto += 1
            flush_deleted(upto)
            out.append(BlockDiff("inserted", block.id, None, block, (Hunk("insert", "", block.text),), previous, cited(block.id)))
        previous = block.id
    flush_deleted(len(old_order))
    return out


def text_hunks(before: str, after: str) -> tuple[Hunk, ...]:
    """A word-level inline diff (whitespace and punctuation are tokens of their own)."""
    a, b = _TOKENS.findall(before), _TOKENS.findall(after)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return tuple(
        Hunk(tag, "".join(a[i1:i2]), "".join(b[j1:j2]))  # type: ignore[arg-type]
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
    )


# -- changes -----------------------------------------------------------------------------------------


def changes_from_diffs(diffs: Sequence[BlockDiff], only: Iterable[str] | None = None) -> list[Change]:
    """The changes that land ``diffs`` on the note they were computed against. ``only``
    (accept some) keeps the listed block ids; an included insert anchored on an excluded
    insert is re-anchored on that one's own anchor, so it still lands where it belongs."""
    keep = None if only is None else set(only)
    anchor_of = {diff.block_id: diff.after_id for diff in diffs if diff.kind == "inserted"}
    changes: list[Change] = []
    for diff in diffs:
        if keep is not None and diff.block_id not in keep:
            continue
        if diff.kind == "inserted":
            anchor = diff.after_id
            while anchor in anchor_of and keep is not None and anchor not in keep:
                anchor = anchor_of[anchor]
            changes.append(Change("insert", diff.block_id, diff.after, anchor))
        elif diff.kind == "replaced":
            changes.append(Change("replace", diff.block_id, diff.after))
        else:
            changes.append(Change("delete", diff.block_id))
    return changes


def apply_changes(note: NoteDocument, changes: Sequence[Change]) -> None:
    """Apply ``changes`` to ``note`` in order. Replacements go through the note's text
    diff, so concurrent edits elsewhere in the block survive; inserts keep their ids."""
    for change in changes:
        if change.kind == "insert":
            assert change.block is not None
            note.insert_after(change.after_id, change.block.with_id(change.block_id))
        elif change.kind == "replace":
            assert change.block is not None
            current = note.block(change.block_id)
            if current.text != change.block.text:
                note.replace_text(change.block_id, change.block.text)
            if current.type != change.block.type or current.attrs != change.block.attrs:
                note.set_block(change.block_id, type=change.block.type, attrs=change.block.attrs)
        else:
            note.delete(change.block_id)


def apply_changes_to_blocks(blocks: Sequence[Block], changes: Sequence[Change]) -> list[Block]:
    """What :func:`apply_changes` would leave, computed on a plain block list."""
    out = list(blocks)
    for change in changes:
        if change.kind == "insert":
            assert change.block is not None
            at = 0 if change.after_id is None else _position(out, change.after_id) + 1
            out.insert(at, change.block.with_id(change.block_id))
        elif change.kind == "replace":
            assert change.block is not None
            out[_position(out, change.block_id)] = change.block.with_id(change.block_id)
        else:
            del out[_position(out, change.block_id)]
    return out


def _position(blocks: Sequence[Block], block_id: str) -> int:
    for index, block in enumerate(blocks):
        if block.id == block_id:
            return index
    raise KeyError(block_id)


# -- helpers -------------------------------------------------------------------------------------------


def _content(block: Block) -> tuple[str, str, tuple]:
    return block.type, block.text, tuple(sorted(block.attrs.items()))


def same_content(a: Block | None, b: Block | None) -> bool:
    """Equal type, text and attrs (ids aside); ``None`` (absent) equals only ``None``."""
    if a is None or b is None:
        return a is b
    return _content(a) == _content(b)


def _merge_ids(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))


def _invalid(path: str, code: str, message: str) -> ValidationFailed:
    return ValidationFailed(detail=f"{path}: {message}", field_errors=[FieldError(path, code, message)])
