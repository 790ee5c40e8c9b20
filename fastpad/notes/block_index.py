"""Where each block of a note sits: the block id per list position, and its inverse.

Local edits keep it in step (they know exactly what moved); an import that touched more
than text drops it, to be re-read once when next needed. Re-reading costs ~2-5 ms per
2,000 blocks."""

from __future__ import annotations

from collections.abc import Iterable

from loro import LoroMovableList

from fastpad.notes.loro_layout import read_id


class BlockIndex:
    """The positions of the block maps in a note's ``blocks`` list, by block id."""

    def __init__(self, blocks: LoroMovableList) -> None:
        self._list = blocks
        self._order: list[str | None] | None = None
        self._positions: dict[str, int] | None = None

    def forget(self) -> None:
        """Drop what is known, after ops that may have added, removed, moved or re-identified blocks."""
        self._order = self._positions = None

    def seen(self, ids: Iterable[str | None]) -> None:
        """The block ids in list order, as just read: kept as the order if none is held."""
        if self._order is None:
            self._order = list(ids)

    def positions(self) -> dict[str, int]:
        """Block id -> position in the list, read from the list if not known."""
        if self._positions is None:
            if self._order is None:
                self._order = [read_id(self._list.get(i)) for i in range(len(self._list))]
            self._positions = {}
            self._reindex(0, len(self._order))
        return self._positions

    def _reindex(self, start: int, stop: int) -> None:
        """Point the ids at positions [start, stop) to where they now are. Only the blocks
        an edit shifted are touched, so appending stays O(1). Should a buggy peer write one
        id twice, it resolves to the later block."""
        if self._positions is not None:
            for position in range(start, stop):
                if (block_id := self._order[position]) is not None:
                    self._positions[block_id] = position

    def inserted(self, index: int, block_id: str) -> None:
        if self._order is not None:
            self._order.insert(index, block_id)
            self._reindex(index, len(self._order))

    def deleted(self, index: int) -> None:
        if self._order is None:
            return
        block_id = self._order.pop(index)
        if self._positions is not None:
            del self._positions[block_id]
            if block_id in self._order:  # that buggy peer's duplicate is still here
                self._positions = None
        self._reindex(index, len(self._order))

    def moved(self, source: int, target: int) -> None:
        if self._order is not None:
            self._order.insert(target, self._order.pop(source))
            self._reindex(min(source, target), max(source, target) + 1)
