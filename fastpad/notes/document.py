"""A note as a Loro document: an ordered list of blocks with stable ULIDs, plus metadata.

The layout is shared with the browser editor, which edits the same document
through npm ``loro-crdt``:

    blocks: MovableList of Map {id: ULID str, type: str, text: Text, attrs: Map of primitives}
    meta:   Map {title: str, types: List of str, properties: Map}

Blocks live in a *movable* list because a move there is one op that keeps the
block's container: concurrent moves and edits of the same block merge without
duplicating or losing it, where delete+reinsert would fork its identity.

Text offsets are Unicode code points — the unit of both Python ``str`` indices
and ``LoroText.insert``/``delete`` in the Python binding (JS uses UTF-16; the
ops themselves are unit-independent).

Every edit validates all its inputs before its first write: Loro has no way to
abort a transaction, so a half-applied edit would ride along with the next commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Literal

from loro import (
    ID,
    ContainerType,
    Cursor,
    ExportMode,
    Frontiers,
    LoroDoc,
    LoroList,
    LoroMap,
    LoroMovableList,
    LoroText,
    Ordering,
    Side,
    VersionRange,
    VersionVector,
)

from fastpad.errors import FastpadError, FieldError, NotFound, ValidationFailed
from fastpad.notes.block_index import BlockIndex
from fastpad.notes.blocks import BLOCK_TYPES, Block, NoteMeta, normalize_attrs
from fastpad.notes.edit_checks import check_attr, check_offset, check_text, invalid
from fastpad.notes.frontier import decode_frontier, encode_frontier
from fastpad.notes.guard import loro_errors
from fastpad.notes.ids import is_ulid, new_id
from fastpad.notes.loro_layout import (
    child_container,
    existing_container,
    read_block,
    rewrite_text,
    same_value,
    sync_list,
    text_container,
    value_of,
)
from fastpad.notes.schema import schema_violation, storable_text, storable_value
from fastpad.notes.updates import UpdateLimits, check_update, missing_dependencies

Comparison = Literal["equal", "before", "after", "concurrent"]

# Loro's Ordering is unhashable; its int value is a stable key.
_ORDERINGS: dict[int, Comparison] = {int(Ordering.Less): "before", int(Ordering.Equal): "equal", int(Ordering.Greater): "after"}
_MISSING = object()


class NoteDocument:
    """One loaded note. Not thread-safe: one writer at a time per instance."""

    def __init__(self, doc: LoroDoc) -> None:
        """Wrap a document as it is: an empty ``LoroDoc`` is the way to receive a note
        that another peer created (``new()`` would write a first change of its own)."""
        self._bind(doc)

    def _bind(self, doc: LoroDoc) -> None:
        self._doc = doc
        self._list: LoroMovableList = doc.get_movable_list("blocks")
        self._meta: LoroMap = doc.get_map("meta")
        self._block_index = BlockIndex(self._list)

    # -- construction ---------------------------------------------------------------

    @classmethod
    def new(cls, meta: NoteMeta | None = None, blocks: Iterable[Block] = (), peer_id: int | None = None) -> NoteDocument:
        """A new note; blocks without an id get a fresh ULID."""
        doc = LoroDoc()
        if peer_id is not None:
            doc.peer_id = peer_id
        note = cls(doc)
        note._block_index.seen(())
        meta = meta or NoteMeta()
        note._check_meta(meta)
        blocks = list(blocks)
        ids = note._claim_ids(blocks)
        # Created once, in the note's first change, so replicas share these containers
        # instead of each creating its own and losing the others' writes to last-writer-wins.
        note._meta.insert_container("types", LoroList())
        note._meta.insert_container("properties", LoroMap())
        note._write_meta(meta)
        for index, (block_id, block) in enumerate(zip(ids, blocks)):
            note._write_block(index, block_id, block)
        doc.commit()
        return note

    @classmethod
    def load(cls, snapshot: bytes, peer_id: int | None = None) -> NoteDocument:
        """Open a note from ``snapshot()`` bytes (or any self-contained Loro export).

        A peer id must never be used by two writers at once; reuse one only from
        a document that holds all of that peer's earlier ops.
        """

        def malformed(why: str) -> ValidationFailed:
            return ValidationFailed(
                detail=f"The stored note could not be loaded: {why}.",
                field_errors=[FieldError("snapshot", "malformed_snapshot", why)],
            )

        doc = LoroDoc()
        if peer_id is not None:
            doc.peer_id = peer_id
        with loro_errors(lambda exc: malformed(f"not a Loro export ({exc})")):
            LoroDoc.decode_import_blob_meta(snapshot, True)  # verifies the checksum before import
            status = doc.import_(snapshot)
        if status.pending is not None and not status.pending.is_empty:
            raise malformed("it depends on history it does not include")
        return cls(doc)

    def snapshot(self) -> bytes:
        return self._doc.export(ExportMode.Snapshot())

    @property
    def peer_id(self) -> int:
        return self._doc.peer_id

    @property
    def loro(self) -> LoroDoc:
        """The underlying document, for reading and exporting. Edit through this class, or the
        block index goes stale; do not keep it, as a refused import swaps in a fresh one."""
        return self._doc

    # -- metadata ---------------------------------------------------------------------

    @property
    def meta(self) -> NoteMeta:
        value = self._meta.get_deep_value()
        title, types, properties = value.get("title"), value.get("types"), value.get("properties")
        return NoteMeta(
            title=title if isinstance(title, str) else "",
            types=tuple(t for t in types if isinstance(t, str)) if isinstance(types, list) else (),
            properties=properties if isinstance(properties, dict) else {},
        )

    def set_meta(self, meta: NoteMeta) -> None:
        """Write only what changed, so concurrent edits of other keys survive the merge."""
        self._check_meta(meta)
        self._write_meta(meta)
        self._doc.commit()

    def _check_meta(self, meta: NoteMeta) -> None:
        if not isinstance(meta.title, str) or not storable_text(meta.title):
            raise invalid("title", "invalid_text", "The title must be a string of valid Unicode without U+0000.")
        for position, type_name in enumerate(meta.types):
            if not isinstance(type_name, str) or not storable_text(type_name):
                raise invalid(f"types[{position}]", "invalid_text", "Each type must be a string of valid Unicode without U+0000.")
        for key, value in meta.properties.items():
            if not isinstance(key, str) or not storable_value(value, nested=True):
                raise invalid(
                    f"properties.{key}",
                    "invalid_value",
                    "A property must be null, a boolean, a 64-bit integer, a number, a string, "
                    "or a list/object of those.",
                )

    def _write_meta(self, meta: NoteMeta) -> None:
        current = self.meta
        if current.title != meta.title:
            self._meta.insert("title", meta.title)
        if current.types != tuple(meta.types):
            types = child_container(self._meta, "types", LoroList)
            sync_list(types, types.get_value(), list(meta.types))
        if not same_value(current.properties, meta.properties):
            properties = child_container(self._meta, "properties", LoroMap)
            written = properties.get_deep_value()
            for key in written.keys() - meta.properties.keys():
                properties.delete(key)
            for key, value in meta.properties.items():
                if not same_value(written.get(key, _MISSING), value):
                    properties.insert(key, value)

    # -- reading blocks -----------------------------------------------------------------

    def blocks(self) -> list[Block]:
        """All blocks in order. Whatever another peer wrote, each is a valid ``Block``:
        an unknown type reads as a paragraph, bad or missing attrs as the defaults,
        and an id that is not a ULID as ``None``."""
        blocks = [read_block(value) for value in self._list.get_deep_value()]
        self._block_index.seen(block.id for block in blocks)
        return blocks

    def block(self, block_id: str) -> Block:
        return read_block(value_of(self._list.get(self.index_of(block_id))))

    def has_block(self, block_id: str) -> bool:
        return block_id in self._block_index.positions()

    def keeps_run_from(self, block_id: str, frontier: str, length: int) -> bool:
        """Whether ``length`` adjacent characters of the block's text were all in it already at
        ``frontier``: the very characters, each told apart by its identity in the Loro text
        (a letter deleted and typed again is a new one)."""
        text = existing_container(self._map(block_id), "text", LoroText)
        if text is None:  # a plain string another peer left: its characters have no identities
            return False
        held = self._doc.frontiers_to_vv(self._known(frontier, field="frontier"))
        run = 0
        for position in range(text.len_unicode):
            character = text.get_cursor(position, Side.Middle).id
            run = run + 1 if character is not None and held.includes_id(character) else 0
            if run >= length:
                return True
        return False

    def text_anchor(self, block_id: str, start: int, end: int) -> tuple[bytes, bytes]:
        """Two encoded Loro cursors holding ``[start, end)`` of the block's text (code points):
        on its first and its last character, so text typed just outside the range stays
        outside it and text typed inside it widens it."""
        text = existing_container(self._map(block_id), "text", LoroText)
        length = 0 if text is None else text.len_unicode
        if text is None or not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= length):
            raise invalid("range", "out_of_range", f"A range is start < end within the block's {length} characters.")
        return text.get_cursor(start, Side.Left).encode(), text.get_cursor(end - 1, Side.Right).encode()

    def anchored_range(self, start: bytes, end: bytes) -> tuple[int, int] | None:
        """Where a range held by :meth:`text_anchor` is now; None when every character of it was
        deleted (or the cursors are not this note's). A cursor's position is its character's
        index, or where that character was once deleted (``update`` is then set)."""
        try:
            first = self._doc.get_cursor_pos(Cursor.decode(start)).current.pos
            last = self._doc.get_cursor_pos(Cursor.decode(end))
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException:  # noqa: BLE001 — Loro raises a bare BaseException for an unknown cursor
            return None
        stop = last.current.pos + (1 if last.update is None else 0)
        return (first, stop) if first < stop else None

    def index_of(self, block_id: str) -> int:
        position = self._block_index.positions().get(block_id)
        if position is None:
            raise NotFound(
                detail=f"The note has no block {block_id!r}. Re-read the note for its current block ids.",
                field_errors=[FieldError("blockId", "unknown_block", f"No block {block_id!r} in this note.")],
                extra={"block_id": block_id},
            )
        return position

    def __len__(self) -> int:
        return len(self._list)

    # -- editing (each edit is one commit) ------------------------------------------------

    def insert_after(self, anchor_id: str | None, block: Block) -> str:
        """Insert ``block`` after ``anchor_id`` (``None``: at the start); returns its id."""
        index = 0 if anchor_id is None else self.index_of(anchor_id) + 1
        return self._insert(index, block)

    def insert_before(self, anchor_id: str | None, block: Block) -> str:
        """Insert ``block`` before ``anchor_id`` (``None``: at the end); returns its id."""
        index = len(self) if anchor_id is None else self.index_of(anchor_id)
        return self._insert(index, block)

    def _insert(self, index: int, block: Block) -> str:
        [block_id] = self._claim_ids([block])
        self._write_block(index, block_id, block)
        self._doc.commit()
        return block_id

    def replace_text(self, block_id: str, text: str) -> None:
        """Set a block's text through a diff, so concurrent edits elsewhere in it survive."""
        block_map = self._map(block_id)
        check_text(text, "text")
        rewrite_text(text_container(block_map), text)
        self._doc.commit()

    def insert_text(self, block_id: str, offset: int, text: str) -> None:
        """Insert ``text`` at a code-point ``offset``: one keystroke from an editor."""
        loro_text = text_container(self._map(block_id))
        check_offset(offset, loro_text.len_unicode)
        check_text(text, "text")
        loro_text.insert(offset, text)
        self._doc.commit()

    def delete_text(self, block_id: str, offset: int, length: int) -> None:
        """Delete ``length`` code points from ``offset`` (a backspace is length 1)."""
        loro_text = text_container(self._map(block_id))
        check_offset(offset, loro_text.len_unicode)
        check_offset(length, loro_text.len_unicode - offset)  # what remains after offset
        loro_text.delete(offset, length)
        self._doc.commit()

    def set_block(self, block_id: str, *, type: str | None = None, attrs: dict[str, Any] | None = None) -> None:
        """Change a block's type and/or some of its attrs; attrs not given keep their values
        (those the new type does not have are dropped, those it adds take their defaults)."""
        block_map = self._map(block_id)
        stored = block_map.get_deep_value()
        current = read_block(stored)
        new_type = current.type if type is None else type
        if new_type not in BLOCK_TYPES:
            raise invalid("type", "unknown_type", f"Unknown block type {new_type!r}; use one of {sorted(BLOCK_TYPES)}.")
        for key, value in (attrs or {}).items():
            if key not in BLOCK_TYPES[new_type]:
                raise invalid(f"attrs.{key}", "unknown_attr", f"A {new_type} block has no attribute {key!r}.")
            check_attr(key, value)
        merged = normalize_attrs(new_type, {**current.attrs, **(attrs or {})})

        if stored.get("type") != new_type:
            block_map.insert("type", new_type)
        attrs_map = existing_container(block_map, "attrs", LoroMap)
        written = {} if attrs_map is None else attrs_map.get_deep_value()
        stale = written.keys() - merged.keys()
        changed = {key: value for key, value in merged.items() if not same_value(written.get(key, _MISSING), value)}
        if stale or changed:
            attrs_map = child_container(block_map, "attrs", LoroMap)
            for key in stale:
                attrs_map.delete(key)
            for key, value in changed.items():
                attrs_map.insert(key, value)
        self._doc.commit()

    def delete(self, block_id: str) -> None:
        index = self.index_of(block_id)
        self._list.delete(index, 1)
        self._block_index.deleted(index)
        self._doc.commit()

    def move_after(self, block_id: str, anchor_id: str | None) -> None:
        """Move a block after ``anchor_id`` (``None``: to the start), keeping its id and container."""
        self.index_of(block_id)
        if anchor_id is not None:
            self.index_of(anchor_id)
        self._move_after(block_id, anchor_id)
        self._doc.commit()

    def _move_after(self, block_id: str, anchor_id: str | None) -> None:
        source = self.index_of(block_id)
        if anchor_id is None:
            target = 0
        else:
            anchor = self.index_of(anchor_id)
            # ``mov(a, b)`` leaves the block at index b of the list as it is after the move.
            target = anchor + 1 if anchor < source else anchor
        if target != source:
            self._list.mov(source, target)
            self._block_index.moved(source, target)

    def split(self, block_id: str, offset: int) -> str:
        """Split a block at a code-point ``offset``. The id stays with the first half, so
        whatever points at the block keeps pointing at the text it was about; the tail
        becomes a new block (new ULID, same type and attrs). Returns the tail's id."""
        index = self.index_of(block_id)
        block_map = self._map(block_id)
        block = read_block(block_map.get_deep_value())
        check_offset(offset, len(block.text))
        text_container(block_map).delete(offset, len(block.text) - offset)
        tail_id = new_id()
        self._write_block(index + 1, tail_id, Block(tail_id, block.type, block.text[offset:], block.attrs))
        self._doc.commit()
        return tail_id

    def join(self, first_id: str, second_id: str) -> None:
        """Append the second block's text to the first and delete the second; the first's id survives."""
        first, second = self._map(first_id), self._map(second_id)
        if first_id == second_id:
            raise invalid("secondId", "same_block", "A block cannot be joined with itself.")
        head = text_container(first)
        head.insert(head.len_unicode, read_block(second.get_deep_value()).text)
        index = self.index_of(second_id)
        self._list.delete(index, 1)
        self._block_index.deleted(index)
        self._doc.commit()

    def copy_blocks(self, ids: Iterable[str], after_id: str | None) -> list[str]:
        """Paste copies of ``ids`` (in that order) after ``after_id``. A copy is a new block,
        so it gets a new ULID: two blocks never share one. Returns the copies' ids."""
        sources = [self.block(block_id) for block_id in ids]
        index = 0 if after_id is None else self.index_of(after_id) + 1
        copies = []
        for offset, source in enumerate(sources):
            copies.append(copy_id := new_id())
            self._write_block(index + offset, copy_id, source)
        self._doc.commit()
        return copies

    def cut_paste(self, ids: Iterable[str], after_id: str | None) -> None:
        """Move ``ids`` (in that order) after ``after_id``: a cut-paste keeps the blocks, and their ids."""
        ids = list(ids)
        for block_id in ids:
            self.index_of(block_id)
        if after_id is not None:
            self.index_of(after_id)
        anchor = after_id
        for block_id in ids:
            self._move_after(block_id, anchor)
            anchor = block_id
        self._doc.commit()

    # -- versions -------------------------------------------------------------------------

    def frontier(self) -> str:
        return encode_frontier(self._doc.oplog_frontiers)

    def knows(self, frontier: str) -> bool:
        """Whether this note holds every op of ``frontier`` (a malformed string raises)."""
        return self._doc.frontiers_to_vv(decode_frontier(frontier)) is not None

    def at(self, frontier: str, *, field: str = "frontier") -> NoteDocument:
        """An independent copy of the note as it was at ``frontier``, with its own peer id
        (``field`` names the frontier in the error for one that is malformed or unknown)."""
        return NoteDocument(self._doc.fork_at(self._known(frontier, field=field)))

    def blocks_at_each(self, frontiers: Iterable[str]) -> Iterator[list[Block]]:
        """The blocks at each version in turn, by checking this document out at each: it is
        read-only while the walk runs and back at its latest after. Walking nearby versions in
        order costs the changes between them, where ``at`` (a fork) costs the whole history
        each time — what a timeline of many versions needs."""
        try:
            for frontier in frontiers:
                self._doc.checkout(self._known(frontier, field="frontier"))
                yield [read_block(value) for value in self._list.get_deep_value()]
        finally:
            self._doc.checkout_to_latest()

    def compare(self, a: str, b: str) -> Comparison:
        """How version ``a`` relates to ``b``: equal, before, after, or concurrent."""
        ordering = self._doc.cmp_frontiers(self._known(a), self._known(b))
        return "concurrent" if ordering is None else _ORDERINGS[int(ordering)]

    def _known(self, frontier: str, field: str = "expectedFrontier") -> Frontiers:
        decoded = decode_frontier(frontier, field=field)
        if self._doc.frontiers_to_vv(decoded) is None:
            raise ValidationFailed(
                detail=f"{field} names a version this note has never seen. Re-read the note and use the frontier it returns.",
                field_errors=[FieldError(field, "unknown_frontier", "This note has never been at that version.")],
                extra={"current_frontier": self.frontier()},
            )
        return decoded

    # -- updates --------------------------------------------------------------------------

    def export_updates(self, since: str | None = None) -> bytes:
        """A Loro update holding every op after ``since`` (``None``: the whole history)."""
        vv = VersionVector() if since is None else self._doc.frontiers_to_vv(self._known(since, field="since"))
        return self._doc.export(ExportMode.Updates(vv))

    def apply_update(self, blob: bytes, limits: UpdateLimits = UpdateLimits()) -> str:
        """Check, then import a Loro update; returns the new frontier. A refused update changes
        nothing. If Loro itself breaks on the blob, a plain ``FastpadError`` (500) says this
        instance is unusable; the stored note is untouched and must be loaded again."""
        return self.import_update(blob, limits)[0]

    def import_update(self, blob: bytes, limits: UpdateLimits = UpdateLimits()) -> tuple[str, dict[int, Block] | None]:
        """:meth:`apply_update`, also saying what the import changed, from the containers its
        ops touched (never by reading every block): when it only edited the text of blocks
        in the list — typing, nearly every update — those blocks as they now read, by
        position (empty if the update held no new op). ``None`` when it may have done more
        (added, removed, moved or re-typed blocks, changed attrs or the metadata, or edited
        a block no longer in the list): then every block has to be read."""
        check_update(self._doc, blob, limits)
        before, held = self._doc.oplog_frontiers, self._doc.oplog_vv
        try:
            with loro_errors(_undecodable_update):
                status = self._doc.import_(blob)
        except ValidationFailed:
            self._restore(before)
            raise
        if status.pending is not None and not status.pending.is_empty:
            # Loro would keep the ops waiting for their dependencies and apply them later,
            # silently; a save must land whole or not at all.
            self._restore(before)
            raise missing_dependencies(self._doc)
        changed = self._changed_containers(status.success)
        if violation := schema_violation(self._doc, held, changed):
            self._restore(before)
            raise _off_schema(*violation)
        # ContainerType.Text is the class of a Text container's type (== never holds).
        if not all(isinstance(container.container_type, ContainerType.Text) for container in changed):
            # Ops that may have added, removed, moved or re-identified blocks drop the block
            # index; typing keeps it.
            self._block_index.forget()
            return self.frontier(), None
        return self.frontier(), self._edited_texts(changed)

    def _changed_containers(self, imported: VersionRange) -> list[Any]:
        return [
            changed
            for peer, (start, end) in imported.inner().items()
            for changed in self._doc.get_changed_containers_in(ID(peer, start), end - start)
        ]

    def _edited_texts(self, texts: list[Any]) -> dict[int, Block] | None:
        """The blocks whose ``text`` containers are ``texts``, by position; None when one
        is anywhere else (detached with a deleted block, or not a block's text)."""
        edited: dict[int, Block] = {}
        for text_id in texts:
            path = self._doc.get_path_to_container(text_id)
            if path is None or len(path) != 3:
                return None
            (root, _), (map_id, seq), (_, key) = path
            position = getattr(seq, "index", None)
            if root != self._list.id or getattr(key, "key", None) != "text" or not isinstance(position, int):
                return None
            if not 0 <= position < len(self._list):
                return None
            item = self._list.get(position)
            block_map = getattr(item, "container", None)
            if not isinstance(block_map, LoroMap) or block_map.id != map_id:
                return None
            edited[position] = read_block(block_map.get_deep_value())
        return edited

    def _restore(self, frontiers: Frontiers) -> None:
        """Go back to ``frontiers``, the oplog before a refused import. Only error paths pay for it."""
        with loro_errors(_unrecoverable):
            peer_id = self._doc.peer_id
            landed = self._doc.oplog_frontiers.encode() != frontiers.encode()
            # A fork keeps the oplog but not the parked ops; fork_at also drops what landed,
            # but Loro has not implemented it for shallow documents.
            doc = self._doc.fork_at(frontiers) if landed else self._doc.fork()
        doc.peer_id = peer_id
        self._bind(doc)

    # -- internals --------------------------------------------------------------------------

    def _map(self, block_id: str) -> LoroMap:
        item = self._list.get(self.index_of(block_id))
        return item.container  # the block index lists only maps: read_id gives other items no id

    def _claim_ids(self, blocks: list[Block]) -> list[str]:
        """Ids for blocks about to be written: fresh ULIDs where missing, checked otherwise."""
        ids, seen = [], set()
        for position, block in enumerate(blocks):
            block_id = block.id or new_id()
            if not is_ulid(block_id):
                raise invalid(f"blocks[{position}].id", "invalid_id", f"{block_id!r} is not a ULID.")
            if block_id in seen or block_id in self._block_index.positions():
                raise invalid(f"blocks[{position}].id", "duplicate_id", f"Block id {block_id} is already in this note.")
            check_text(block.text, f"blocks[{position}].text")
            for key, value in block.attrs.items():
                check_attr(key, value)
            seen.add(block_id)
            ids.append(block_id)
        return ids

    def _write_block(self, index: int, block_id: str, block: Block) -> None:
        block_map = self._list.insert_container(index, LoroMap())
        block_map.insert("id", block_id)
        block_map.insert("type", block.type)
        text = block_map.insert_container("text", LoroText())
        if block.text:
            text.insert(0, block.text)
        attrs = block_map.insert_container("attrs", LoroMap())
        for key, value in block.attrs.items():
            attrs.insert(key, value)
        self._block_index.inserted(index, block_id)


# -- refusing an update ---------------------------------------------------------------------


def _off_schema(path: str, why: str) -> ValidationFailed:
    message = f"The update leaves the note's schema at {path}: {why}. Nothing was applied."
    return ValidationFailed(detail=message, field_errors=[FieldError("ops", "off_schema", message)], extra={"path": path})


def _unrecoverable(exc: BaseException) -> FastpadError:
    # Some crafted updates (valid checksum, inconsistent ops) make Loro panic mid-import,
    # which poisons the document's lock: no read, fork or export works after that. A
    # shallow document that took part of a refused update cannot be rolled back either.
    return FastpadError(
        detail="Loro could not undo a refused update in this in-memory copy of the note, so it can "
        "no longer be used. Nothing was saved: load the note again from storage.",
        extra={"cause": str(exc)},
    )


def _undecodable_update(exc: BaseException) -> ValidationFailed:
    why = f"Loro could not import the update ({exc})."
    return ValidationFailed(
        detail=f"{why} Send the bytes of a Loro update export, unmodified.",
        field_errors=[FieldError("ops", "malformed_update", why)],
    )
