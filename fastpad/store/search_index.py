"""Statements for search: ``tx.search_index``.

Three things live here, all workspace-scoped like the rest of the data-access
layer (every statement adds ``workspace_id = <the transaction's workspace>``):

* the ``chunks`` table, rewritten by the one write path (``WorkspaceTx.write_note``)
  from the chunk rows the caller computed, in the note's own transaction;
* the ``chunk_vectors`` table the embedding worker fills (one vector per
  provider and chunk digest) and sweeps;
* the reads each search strategy makes. Every read takes a :class:`SearchFilter`
  and applies it *inside* the query — trashed notes never, archived notes only
  when asked, only the caller's note set, only provenance its trust floor admits —
  so what a strategy ranks is already what the caller may see.

A chunk's provenance is summarised as a bit mask: one bit per (origin, review
state) pair among its blocks (:func:`provenance_bit`). A floor becomes the mask
of the pairs it refuses, and a chunk passes when the two share no bit.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from fastpad.notes.provenance import Origin, ReviewState
from fastpad.store.records import BlockRow

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx

_ORIGINS = [o.value for o in Origin]
_REVIEWS = [r.value for r in ReviewState]
UNKNOWN_PROVENANCE_BIT = 1 << (len(_ORIGINS) * len(_REVIEWS))  # a pair this version does not know
PGVECTOR_DIMENSIONS = 384  # the width of chunk_vectors.embedding when pgvector is installed


def provenance_bit(origin: str, review_state: str) -> int:
    """The bit of one (origin, review state) pair."""
    try:
        return 1 << (_ORIGINS.index(origin) * len(_REVIEWS) + _REVIEWS.index(review_state))
    except ValueError:
        return UNKNOWN_PROVENANCE_BIT


def known_provenance() -> list[tuple[str, str]]:
    return [(o, r) for o in _ORIGINS for r in _REVIEWS]


@dataclass(frozen=True)
class ChunkRow:
    """A chunk as stored: no text (the blocks hold it), the digest of what is embedded."""

    id: str
    note_id: str
    ordinal: int
    block_ids: tuple[str, ...]
    heading_path: tuple[str, ...]
    prefix: str
    digest: str
    provenance_mask: int


@dataclass(frozen=True)
class SearchFilter:
    """What a caller may be shown. ``note_ids`` None = the whole workspace;
    ``allowed_provenance`` None = every (origin, review state) pair."""

    note_ids: frozenset[str] | None = None
    include_archived: bool = False
    allowed_provenance: frozenset[tuple[str, str]] | None = None

    @property
    def denied_mask(self) -> int:
        """Provenance bits a chunk must not carry (0: none refused)."""
        if self.allowed_provenance is None:
            return 0
        mask = UNKNOWN_PROVENANCE_BIT
        for pair in known_provenance():
            if pair not in self.allowed_provenance:
                mask |= provenance_bit(*pair)
        return mask

    @property
    def sees_nothing(self) -> bool:
        return self.note_ids is not None and not self.note_ids


@dataclass(frozen=True)
class BlockHit:
    """A block the lexical index matched."""

    note_id: str
    block_id: str
    score: float  # higher is better; bm25 (SQLite) or ts_rank_cd (PostgreSQL)


@dataclass(frozen=True)
class ChunkHit:
    """A chunk found by its digest (dense search), as the caller may see it."""

    chunk_id: str
    note_id: str
    digest: str
    block_ids: tuple[str, ...]


@dataclass(frozen=True)
class NoteRecency:
    note_id: str
    updated_at: datetime
    own_last_write: datetime | None  # the caller's latest write still present in the note


@dataclass(frozen=True)
class HitNote:
    """What a rendered hit shows of its note."""

    note_id: str
    title: str
    types: tuple[str, ...]
    archived: bool
    updated_at: datetime


class SearchIndex:
    """Search statements for one transaction's workspace."""

    def __init__(self, tx: "WorkspaceTx") -> None:
        self._tx = tx
        self._d = tx._d  # noqa: SLF001 - this module is part of the data-access layer
        self._x = tx._x  # noqa: SLF001
        self._many = tx._many  # noqa: SLF001
        self.workspace_id = tx.workspace_id

    @property
    def backend(self) -> str:
        return self._d.name

    # ------------------------------------------------------------------ the write path

    def replace_chunks(self, note_id: str, chunks: Sequence[ChunkRow], *,
                       before: Sequence[ChunkRow] | None = None) -> None:
        """Bring the note's chunk rows to ``chunks``, touching only rows that changed.
        ``before`` is what ``note_chunks`` returned in this transaction, if the caller has it."""
        self._tx._w()  # noqa: SLF001
        d, ws = self._d, self.workspace_id
        before = {c.id: c for c in (self.note_chunks(note_id) if before is None else before)}
        after = {c.id: c for c in chunks}
        if len(after) != len(chunks):
            raise ValueError("a chunk id appears twice in one note")
        stale = [chunk_id for chunk_id, old in before.items() if after.get(chunk_id) != old]
        self._many("DELETE FROM chunks WHERE workspace_id = ? AND id = ?", [(ws, chunk_id) for chunk_id in stale])
        self._many(
            "INSERT INTO chunks (id, workspace_id, note_id, ordinal, block_ids, heading_path, prefix, digest,"
            " provenance_mask) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (c.id, ws, note_id, c.ordinal, d.js(list(c.block_ids)), d.js(list(c.heading_path)), c.prefix,
                 c.digest, c.provenance_mask)
                for c in chunks
                if before.get(c.id) != c
            ],
        )

    def note_chunks(self, note_id: str) -> list[ChunkRow]:
        rows = self._x(
            "SELECT id, note_id, ordinal, block_ids, heading_path, prefix, digest, provenance_mask FROM chunks"
            " WHERE workspace_id = ? AND note_id = ? ORDER BY ordinal",
            (self.workspace_id, note_id),
        ).fetchall()
        return [self._chunk(r) for r in rows]

    def chunks_of(self, note_ids: Iterable[str]) -> dict[str, list[ChunkRow]]:
        """Chunk rows of several notes, each note's in order."""
        ids = sorted(set(note_ids))
        found: dict[str, list[ChunkRow]] = {}
        if not ids:
            return found
        rows = self._x(
            "SELECT id, note_id, ordinal, block_ids, heading_path, prefix, digest, provenance_mask FROM chunks"
            f" WHERE workspace_id = ? AND {self._d.in_ids('note_id')} ORDER BY note_id, ordinal",
            (self.workspace_id, self._d.ids(ids)),
        ).fetchall()
        for r in rows:
            found.setdefault(r[1], []).append(self._chunk(r))
        return found

    def notes_without_chunks(self, *, limit: int = 100) -> list[str]:
        """Notes holding text but no chunk rows: written before chunks existed (the worker backfills them)."""
        rows = self._x(
            "SELECT n.id FROM notes n WHERE n.workspace_id = ? AND n.trashed_at IS NULL"
            " AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.workspace_id = ? AND c.note_id = n.id)"
            " AND EXISTS (SELECT 1 FROM blocks b WHERE b.workspace_id = ? AND b.note_id = n.id AND b.text <> '')"
            " ORDER BY n.id LIMIT ?",
            (self.workspace_id, self.workspace_id, self.workspace_id, int(limit)),
        ).fetchall()
        return [r[0] for r in rows]

    def _chunk(self, r: Sequence[Any]) -> ChunkRow:
        d = self._d
        return ChunkRow(r[0], r[1], int(r[2]), tuple(d.js_out(r[3])), tuple(d.js_out(r[4])), r[5], r[6], int(r[7]))

    # ------------------------------------------------------------------ lexical text (the write path's search step)

    def blocks_without_lexical_text(self, note_id: str | None = None, *, limit: int = 500) -> list[tuple[str, str, str]]:
        """(note id, block id, text) of blocks whose lexical text is not computed yet (written since
        the write's last search step, or before migration 21): of one note, or of the workspace."""
        sql = "SELECT note_id, block_id, text FROM blocks WHERE workspace_id = ? AND lexical_text IS NULL"
        params: list[Any] = [self.workspace_id]
        if note_id is not None:
            sql += " AND note_id = ?"
            params.append(note_id)
        return [(r[0], r[1], r[2]) for r in self._x(sql + " LIMIT ?", [*params, int(limit)]).fetchall()]

    def notes_without_lexical_title(self, note_id: str | None = None, *, limit: int = 500) -> list[tuple[str, str]]:
        """(note id, title) of notes whose lexical title is not computed yet: one, or the workspace's."""
        sql = "SELECT id, title FROM notes WHERE workspace_id = ? AND lexical_title IS NULL"
        params: list[Any] = [self.workspace_id]
        if note_id is not None:
            sql += " AND id = ?"
            params.append(note_id)
        return [(r[0], r[1]) for r in self._x(sql + " LIMIT ?", [*params, int(limit)]).fetchall()]

    def set_lexical_titles(self, titles: Sequence[tuple[str, str]]) -> None:
        """Store (note id, lexical title) pairs: what the title index reads."""
        self._tx._w()  # noqa: SLF001
        self._many("UPDATE notes SET lexical_title = ? WHERE workspace_id = ? AND id = ?",
                   [(title, self.workspace_id, note_id) for note_id, title in titles])

    def set_lexical_texts(self, texts: Sequence[tuple[str, str, str]]) -> None:
        """Store (note id, block id, lexical text) triples: what the lexical index reads."""
        self._tx._w()  # noqa: SLF001
        self._many("UPDATE blocks SET lexical_text = ? WHERE workspace_id = ? AND note_id = ? AND block_id = ?",
                   [(text, self.workspace_id, note_id, block_id) for note_id, block_id, text in texts])

    # ------------------------------------------------------------------ vectors (the embedding worker)

    def has_pgvector(self) -> bool:
        """Whether chunk_vectors has the pgvector column (PostgreSQL with the extension)."""
        if self._d.name != "postgres":
            return False
        row = self._x(
            "SELECT 1 FROM information_schema.columns WHERE table_name = 'chunk_vectors' AND column_name = ?"
            " AND table_schema = current_schema()",
            ("embedding",),
        ).fetchone()
        return row is not None

    def notes_missing_vectors(self, provider: str, *, limit: int = 50) -> list[str]:
        """Notes with at least one chunk whose digest has no vector from ``provider``."""
        rows = self._x(
            "SELECT DISTINCT c.note_id FROM chunks c WHERE c.workspace_id = ? AND NOT EXISTS ("
            " SELECT 1 FROM chunk_vectors v WHERE v.workspace_id = ? AND v.provider = ? AND v.digest = c.digest)"
            " ORDER BY c.note_id LIMIT ?",
            (self.workspace_id, self.workspace_id, provider, int(limit)),
        ).fetchall()
        return [r[0] for r in rows]

    def digests_missing_vectors(self, provider: str, *, limit: int = 1000) -> list[str]:
        """Chunk digests with no vector from ``provider`` (in digest order)."""
        rows = self._x(
            "SELECT DISTINCT c.digest FROM chunks c WHERE c.workspace_id = ? AND NOT EXISTS ("
            " SELECT 1 FROM chunk_vectors v WHERE v.workspace_id = ? AND v.provider = ? AND v.digest = c.digest)"
            " ORDER BY c.digest LIMIT ?",
            (self.workspace_id, self.workspace_id, provider, int(limit)),
        ).fetchall()
        return [r[0] for r in rows]

    def counts(self) -> dict[str, int]:
        """How many blocks and chunks the workspace holds (for reports)."""
        ws = self.workspace_id
        return {
            "blocks": int(self._x("SELECT count(*) FROM blocks WHERE workspace_id = ?", (ws,)).fetchone()[0]),
            "chunks": int(self._x("SELECT count(*) FROM chunks WHERE workspace_id = ?", (ws,)).fetchone()[0]),
        }

    def missing_digests(self, provider: str, digests: Iterable[str]) -> set[str]:
        wanted = sorted(set(digests))
        if not wanted:
            return set()
        rows = self._x(
            f"SELECT digest FROM chunk_vectors WHERE workspace_id = ? AND provider = ? AND {self._d.in_ids('digest')}",
            (self.workspace_id, provider, self._d.ids(wanted)),
        ).fetchall()
        return set(wanted) - {r[0] for r in rows}

    def put_vectors(self, provider: str, digests: Sequence[str], vectors: np.ndarray, at: datetime,
                    *, pgvector: bool = False) -> None:
        """Store one vector per digest (an existing one is kept: same digest, same text)."""
        self._tx._w()  # noqa: SLF001
        vectors = np.asarray(vectors, dtype="<f4")
        if vectors.ndim != 2 or vectors.shape[0] != len(digests):
            raise ValueError("one vector per digest")
        dims = int(vectors.shape[1])
        rows = [(self.workspace_id, provider, digest, dims, vector.tobytes(), self._d.ts(at))
                for digest, vector in zip(digests, vectors)]
        if pgvector and dims == PGVECTOR_DIMENSIONS:
            self._many(
                "INSERT INTO chunk_vectors (workspace_id, provider, digest, dimensions, vector, created_at, embedding)"
                " VALUES (?, ?, ?, ?, ?, ?, ?::vector) ON CONFLICT (workspace_id, provider, digest) DO NOTHING",
                [(*row, _vector_literal(vector)) for row, vector in zip(rows, vectors)],
            )
        else:
            self._many(
                "INSERT INTO chunk_vectors (workspace_id, provider, digest, dimensions, vector, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, provider, digest) DO NOTHING",
                rows,
            )

    def vector_digests(self, provider: str) -> set[str]:
        rows = self._x(
            "SELECT digest FROM chunk_vectors WHERE workspace_id = ? AND provider = ?", (self.workspace_id, provider)
        ).fetchall()
        return {r[0] for r in rows}

    def vectors(self, provider: str, digests: Iterable[str] | None = None) -> tuple[list[str], np.ndarray | None]:
        """(digests, float32 matrix) of ``provider``'s vectors (all, or the given digests)."""
        sql = "SELECT digest, vector FROM chunk_vectors WHERE workspace_id = ? AND provider = ?"
        params: list[Any] = [self.workspace_id, provider]
        if digests is not None:
            wanted = sorted(set(digests))
            if not wanted:
                return [], None
            sql += f" AND {self._d.in_ids('digest')}"
            params.append(self._d.ids(wanted))
        rows = self._x(sql + " ORDER BY digest", params).fetchall()
        if not rows:
            return [], None
        matrix = np.stack([np.frombuffer(bytes(r[1]), dtype="<f4") for r in rows]).astype(np.float32)
        return [r[0] for r in rows], matrix

    def sweep_vectors(self, provider: str) -> list[str]:
        """Delete ``provider``'s vectors no chunk refers to any more; returns their digests."""
        self._tx._w()  # noqa: SLF001
        rows = self._x(
            "DELETE FROM chunk_vectors WHERE workspace_id = ? AND provider = ? AND NOT EXISTS ("
            " SELECT 1 FROM chunks c WHERE c.workspace_id = ? AND c.digest = chunk_vectors.digest) RETURNING digest",
            (self.workspace_id, provider, self.workspace_id),
        ).fetchall()
        return sorted(r[0] for r in rows)

    def pgvector_nearest(self, provider: str, query: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """(digest, cosine) nearest to ``query`` by the HNSW index, best first."""
        literal = _vector_literal(np.asarray(query, dtype=np.float32))
        # ef_search bounds how many candidates the HNSW walk keeps; it must
        # exceed the LIMIT or the index returns fewer rows than asked.
        self._x("SELECT set_config('hnsw.ef_search', ?, true)", (str(min(1000, max(40, int(limit)))),))
        rows = self._x(
            "SELECT digest, 1 - (embedding <=> ?::vector) FROM chunk_vectors"
            " WHERE workspace_id = ? AND provider = ? AND embedding IS NOT NULL"
            " ORDER BY embedding <=> ?::vector LIMIT ?",
            (literal, self.workspace_id, provider, literal, int(limit)),
        ).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    # ------------------------------------------------------------------ strategy reads

    def lexical_blocks(self, match: str, flt: SearchFilter, *, limit: int, every_word: str = "") -> list[BlockHit]:
        """Blocks matching ``match`` best first: an FTS5 MATCH expression on SQLite,
        ``to_tsquery`` input on PostgreSQL (see fastpad/search/query.py). On PostgreSQL the blocks
        also matching ``every_word`` (``query.every_word_match``) come first, each scored its rank
        plus the best rank returned, so a note's score keeps them ahead where titles are added."""
        if flt.sees_nothing or not match:
            return []
        where, params = self._note_filter(flt, "b")
        if self._d.name == "postgres":
            scoped, source, scoped_params = self._note_set_rows("blocks", "note_id", flt)
            holds, holds_params = ("b.tsv @@ to_tsquery('english', ?)", [every_word]) if every_word else ("false", [])
            rows = self._x(
                f"{scoped}SELECT b.note_id, b.block_id, ts_rank_cd(b.tsv, q.q) AS s, {holds} AS holds"
                f" FROM (SELECT to_tsquery('english', ?) AS q) q, {source} b JOIN notes n ON n.id = b.note_id"
                f" WHERE b.tsv @@ q.q AND b.workspace_id = ? AND n.workspace_id = ?{where}"
                " ORDER BY holds DESC, s DESC, b.note_id, b.position LIMIT ?",
                [*scoped_params, *holds_params, match, self.workspace_id, self.workspace_id, *params, int(limit)],
            ).fetchall()
            ahead = max((float(r[2]) for r in rows), default=0.0)
            return [BlockHit(r[0], r[1], float(r[2]) + (ahead if r[3] else 0.0)) for r in rows]
        # FTS5 ranks every match in C; joining each to its block and note first cost
        # three times as much. So rank in the index alone — where the workspace and the
        # floor already hold (`_scoped_match`) — then join and filter the best `window`
        # by what the index cannot know (trash, archive, note set), widening until
        # `limit` pass or the matches run out: the same rows as filtering before
        # ranking, at a fraction of the work.
        if flt.allowed_provenance is not None and not flt.allowed_provenance:
            return []
        match = _scoped_match(match, None if self._sole_workspace() else self.workspace_id, flt.allowed_provenance,
                              flt.note_ids)
        shards = self._rowid_shards()
        rows = self._filter_ranked(
            lambda window: self._ranked_in_index(match, shards, window),
            "SELECT b.note_id, b.block_id, f.s FROM " + _RANKED_ROWS +
            " CROSS JOIN blocks b ON b.rid = f.rid CROSS JOIN notes n ON n.id = b.note_id"
            f" WHERE b.workspace_id = ? AND n.workspace_id = ?{where}"
            " ORDER BY f.s DESC, b.note_id, b.position LIMIT ?",
            [self.workspace_id, self.workspace_id, *params], limit,
        )
        return [BlockHit(r[0], r[1], float(r[2])) for r in rows]

    def blocks_holding(self, match: str, *, besides: tuple[str, str], limit: int) -> list[tuple[str, BlockRow]]:
        """Up to ``limit`` blocks of the workspace matching ``match`` (phrases, as
        :meth:`lexical_blocks` takes them) whose (origin, review state) is not ``besides``, as
        (note id, block), in no particular order: where a person's new block may have been
        copied from (``knowledge/persons_save.py``). Unranked and unfiltered by the floor's
        scope tokens, so a phrase few blocks hold costs only those blocks."""
        if not match:
            return []
        columns = "b.note_id, b.block_id, b.position, b.type, b.text, b.attrs, b.origin, b.review_state"
        if self._d.name == "postgres":
            found = "FROM blocks b WHERE b.tsv @@ to_tsquery('english', ?)"
        else:
            found = "FROM blocks_fts f CROSS JOIN blocks b ON b.rid = f.rowid WHERE blocks_fts MATCH ?"
            match = f"lexical_text : ({match})"
        rows = self._x(
            f"SELECT {columns} {found} AND b.workspace_id = ? AND NOT (b.origin = ? AND b.review_state = ?) LIMIT ?",
            [match, self.workspace_id, *besides, int(limit)],
        ).fetchall()
        return [(r[0], BlockRow(r[1], r[2], r[3], r[4], self._d.js_out(r[5]), r[6], r[7])) for r in rows]

    def _filter_ranked(self, ranked_at: Callable[[int], list[tuple[int, float]]], joined: str,
                       params: list[Any], limit: int) -> list[Any]:
        """Rows of ``joined`` (which reads the ranked (rowid, score) pairs as ``f``) for the best
        ``window`` an FTS5 index ranked, widening until ``limit`` pass or every match was ranked."""
        window = limit + max(50, limit // 4)  # room for what the filter drops
        while True:
            ranked = ranked_at(window)
            rows = self._x(joined, [json.dumps(ranked), *params, int(limit)]).fetchall()
            if len(rows) >= limit or len(ranked) < window:
                return rows
            window *= 4

    def lexical_titles(self, match: str, flt: SearchFilter, *, limit: int) -> list[tuple[str, float]]:
        """Notes whose title matches ``match`` (as :meth:`lexical_blocks` takes it), best first,
        as (note id, score). A title is the note's, not a block's, so the floor holds as it does for
        a whole-title match: the note counts only when the floor admits some of its text."""
        if flt.sees_nothing or not match:
            return []
        where, params = self._note_filter(flt, "n", blocks=False)
        admitted, admitted_params = self._admitted_text(flt)
        if self._d.name == "postgres":
            scoped, source, scoped_params = self._note_set_rows("notes", "id", flt)
            rows = self._x(
                f"{scoped}SELECT n.id, ts_rank_cd(n.title_tsv, q.q) AS s"
                f" FROM (SELECT to_tsquery('english', ?) AS q) q, {source} n"
                f" WHERE n.title_tsv @@ q.q AND n.workspace_id = ?{where}{admitted}"
                " ORDER BY s DESC, n.id LIMIT ?",
                [*scoped_params, match, self.workspace_id, *params, *admitted_params, int(limit)],
            ).fetchall()
        else:  # ranked in the index alone, then joined, as lexical_blocks does and for the same reason
            scoped = _scoped_match(match, None if self._sole_workspace() else self.workspace_id, None, flt.note_ids,
                                   column="title")
            rows = self._filter_ranked(
                lambda window: [(int(rid), -float(score)) for rid, score in self._x(
                    "SELECT rowid, bm25(note_title_fts, 1.0, 0.0) AS lower_is_better FROM note_title_fts"
                    " WHERE note_title_fts MATCH ? ORDER BY lower_is_better LIMIT ?", [scoped, window]).fetchall()],
                "SELECT t.note_id, f.s FROM " + _RANKED_ROWS +
                " CROSS JOIN note_title_text t ON t.rid = f.rid CROSS JOIN notes n ON n.id = t.note_id"
                f" WHERE n.workspace_id = ?{where}{admitted} ORDER BY f.s DESC, n.id LIMIT ?",
                [self.workspace_id, *params, *admitted_params], limit,
            )
        return [(r[0], float(r[1])) for r in rows]

    def _note_set_rows(self, table: str, note_column: str, flt: SearchFilter) -> tuple[str, str, list[Any]]:
        """PostgreSQL: (``WITH`` clause, the rows to rank, its parameters). A caller limited to a note
        set ranks its notes' rows alone, read first (``MATERIALIZED``: the planner may not start from
        the text index instead), so what the statement costs is the note set's, whatever the words:
        a word only notes outside it hold costs what a word no note holds (bench/note_scope.py)."""
        if flt.note_ids is None:
            return "", table, []
        return (f"WITH note_set_rows AS MATERIALIZED (SELECT * FROM {table} WHERE workspace_id = ?"
                f" AND {self._d.in_ids(note_column)}) ", "note_set_rows",
                [self.workspace_id, self._d.ids(sorted(flt.note_ids))])

    def _sole_workspace(self) -> bool:
        """Whether the database holds this workspace alone (SQLite): then every row of the text index
        is its own, and the workspace's ``scope`` token — present in every row, so ranking with it
        intersects each match with the whole index, about a third of a search's ranking — would
        keep out nothing. The rows are still joined back through this workspace's filter."""
        return self._x("SELECT NOT EXISTS (SELECT 1 FROM workspaces WHERE id <> ?)", [self.workspace_id]).fetchone()[0] == 1

    def _rowid_shards(self) -> list[tuple[int, int]]:
        """Rowid ranges to rank a query over side by side: as many as the
        transaction can fan out, splitting the blocks table's rowid span (read
        off its primary key, across workspaces: the index is shared, and every
        row it ranks is joined back through this workspace's filter). Probing
        the query's own matches first cost more than an idle range does."""
        everything = [(-(2 ** 63), 2 ** 63 - 1)]
        parts = self._tx.parallel_reads
        if parts < 2:
            return everything
        low, high = self._x("SELECT (SELECT min(rid) FROM blocks), (SELECT max(rid) FROM blocks)").fetchone()
        if low is None or high - low < parts:
            return everything
        step = (high - low) // parts + 1
        return [(low + i * step, low + (i + 1) * step - 1) for i in range(parts)]

    def _ranked_in_index(self, match: str, shards: list[tuple[int, int]], window: int) -> list[tuple[int, float]]:
        """The best ``window`` (rowid, score) pairs for ``match``, best first, each
        rowid range ranked on its own (bm25's statistics are the whole index's in
        every range, so their scores compare)."""
        # One bm25 call per row: ordering by a different expression than the one
        # selected (say, -bm25) would score every match twice.
        found = self._tx.fan_out(
            "SELECT rowid, bm25(blocks_fts, 1.0, 0.0) AS lower_is_better FROM blocks_fts WHERE blocks_fts MATCH ?"
            " AND rowid BETWEEN ? AND ?"
            " ORDER BY lower_is_better LIMIT ?",
            [(match, low, high, window) for low, high in shards],
        )
        best = heapq.nsmallest(window, (r for rows in found for r in rows), key=lambda r: r[1])
        return [(int(rid), -float(rank)) for rid, rank in best]  # bm25() is lower-is-better

    def chunks_by_digest(self, digests: Iterable[str], flt: SearchFilter) -> list[ChunkHit]:
        """The chunks carrying these digests that the caller may see."""
        wanted = sorted(set(digests))
        if not wanted or flt.sees_nothing:
            return []
        where, params = self._note_filter(flt, "c", blocks=False)
        denied = flt.denied_mask
        if denied:
            where += " AND (c.provenance_mask & ?) = 0"
            params.append(denied)
        rows = self._x(
            "SELECT c.id, c.note_id, c.digest, c.block_ids FROM chunks c"
            " JOIN notes n ON n.id = c.note_id"
            f" WHERE c.workspace_id = ? AND n.workspace_id = ? AND {self._d.in_ids('c.digest')}{where}",
            [self.workspace_id, self.workspace_id, self._d.ids(wanted), *params],
        ).fetchall()
        # Sorted here, not in SQL: an ORDER BY lures SQLite onto the note index and
        # a scan of every chunk of the workspace instead of the digest lookups.
        rows.sort(key=lambda r: (r[1], r[0]))
        d = self._d
        return [ChunkHit(r[0], r[1], r[2], tuple(d.js_out(r[3]))) for r in rows]

    def visible_notes(self, note_ids: Iterable[str], flt: SearchFilter, *, with_admitted_text: bool = False) -> set[str]:
        """Which of ``note_ids`` the filter lets through (note level: trash, archive,
        note set). ``with_admitted_text`` also drops a note whose every chunk
        holds text the filter's floor refuses."""
        ids = sorted(set(note_ids))
        if not ids or flt.sees_nothing:
            return set()
        where, params = self._note_filter(flt, "n", blocks=False)
        if with_admitted_text:
            admitted, admitted_params = self._admitted_text(flt)
            where, params = where + admitted, params + admitted_params
        rows = self._x(
            f"SELECT n.id FROM notes n WHERE n.workspace_id = ? AND {self._d.in_ids('n.id')}{where}",
            [self.workspace_id, self._d.ids(ids), *params],
        ).fetchall()
        return {r[0] for r in rows}

    def recency(self, note_ids: Iterable[str], caller_id: str | None, flt: SearchFilter) -> list[NoteRecency]:
        """For each visible note: when it last changed, and when the caller last
        wrote a block of it that is still there (the caller's own recent work)."""
        ids = sorted(set(note_ids))
        if not ids or flt.sees_nothing:
            return []
        where, params = self._note_filter(flt, "n", blocks=False)
        rows = self._x(
            "SELECT n.id, n.updated_at, (SELECT MAX(b.written_at) FROM blocks b"
            " WHERE b.workspace_id = ? AND b.note_id = n.id AND b.author_id = ?)"
            f" FROM notes n WHERE n.workspace_id = ? AND {self._d.in_ids('n.id')}{where}",
            [self.workspace_id, caller_id or "", self.workspace_id, self._d.ids(ids), *params],
        ).fetchall()
        d = self._d
        return [NoteRecency(r[0], d.ts_out(r[1]), d.ts_out(r[2])) for r in rows]

    def hit_notes(self, note_ids: Iterable[str]) -> dict[str, HitNote]:
        ids = sorted(set(note_ids))
        if not ids:
            return {}
        rows = self._x(
            "SELECT id, title, types, archived_at, updated_at FROM notes"
            f" WHERE workspace_id = ? AND {self._d.in_ids('id')}",
            (self.workspace_id, self._d.ids(ids)),
        ).fetchall()
        d = self._d
        return {r[0]: HitNote(r[0], r[1], tuple(d.js_out(r[2])), r[3] is not None, d.ts_out(r[4])) for r in rows}

    def block_texts(self, note_ids: Iterable[str], block_ids: Iterable[str], flt: SearchFilter) -> dict[str, str]:
        """block id → text, for the given blocks of the given notes that the filter's floor admits."""
        notes, blocks = sorted(set(note_ids)), sorted(set(block_ids))
        if not notes or not blocks:
            return {}
        d = self._d
        sql = (
            f"SELECT block_id, text FROM blocks b WHERE b.workspace_id = ? AND {d.in_ids('b.note_id')}"
            f" AND {d.in_ids('b.block_id')}"
        )
        params: list[Any] = [self.workspace_id, d.ids(notes), d.ids(blocks)]
        if flt.allowed_provenance is not None:
            sql += f" AND {d.in_ids(_PAIR_SQL)}"
            params.append(d.ids(_pairs(flt.allowed_provenance)))
        return {r[0]: r[1] for r in self._x(sql, params).fetchall()}

    # ------------------------------------------------------------------ filters

    def _admitted_text(self, flt: SearchFilter) -> tuple[str, list[Any]]:
        """`` AND …`` on the joined note ``n``: it has no text, or some text the floor admits."""
        denied = flt.denied_mask
        if not denied:
            return "", []
        return (
            " AND (NOT EXISTS (SELECT 1 FROM chunks c WHERE c.workspace_id = ? AND c.note_id = n.id)"
            " OR EXISTS (SELECT 1 FROM chunks c WHERE c.workspace_id = ? AND c.note_id = n.id"
            " AND (c.provenance_mask & ?) = 0))",
            [self.workspace_id, self.workspace_id, denied],
        )

    def _note_filter(self, flt: SearchFilter, alias: str, *, blocks: bool = True) -> tuple[str, list[Any]]:
        """`` AND …`` conditions on the joined note ``n`` (and on block ``alias`` when
        ``blocks``): never trashed, archived only when asked, the note set, the floor."""
        where = " AND n.trashed_at IS NULL"
        params: list[Any] = []
        if not flt.include_archived:
            where += " AND n.archived_at IS NULL"
        if flt.note_ids is not None:
            where += f" AND {self._d.in_ids('n.id')}"
            params.append(self._d.ids(sorted(flt.note_ids)))
            if blocks:  # on the ranked rows too: the planner may then start from the note set's blocks
                where += f" AND {self._d.in_ids(alias + '.note_id')}"
                params.append(self._d.ids(sorted(flt.note_ids)))
        if blocks and flt.allowed_provenance is not None:
            where += f" AND {self._d.in_ids(_PAIR_SQL.replace('b.', alias + '.'))}"
            params.append(self._d.ids(_pairs(flt.allowed_provenance)))
        return where, params


_PAIR_SQL = "(b.origin || '|' || b.review_state)"
# The (rowid, score) pairs an FTS5 index ranked, passed as one JSON parameter, as a table `f`.
_RANKED_ROWS = ("(SELECT json_extract(value, '$[0]') AS rid, json_extract(value, '$[1]') AS s"
                " FROM json_each(?)) f")


def _scoped_match(match: str, workspace_id: str | None, allowed: frozenset[tuple[str, str]] | None,
                  note_ids: frozenset[str] | None = None, *, column: str = "lexical_text") -> str:
    """The FTS5 query for ``match`` over ``column`` (block text less its secrets, migration 21; or
    titles), limited by the tokens of its ``scope`` column (migrations 17, 20, 21), spelled the way
    that generated column spells them: to the workspace's rows (``workspace_id`` None: the database
    holds no other), when ``allowed`` is given to blocks of those (origin, review state) pairs, and
    when ``note_ids`` is to those notes' rows. The caller's floor and note set are thus applied inside
    the ranking, never after it: what it may not see costs it nothing.

    The floor is spelled as the pairs it refuses (``NOT``), not the ones it admits: each block holds
    one pair, and the admitted pairs are most of the index, so an ``AND`` of them intersects every
    match with nearly every row — twice the ranking's cost (issue 29) — where the refused pairs are
    the few rows an agent wrote or a capture brought. A pair this version does not know is refused by
    the join after the ranking (``_note_filter``), which checks the admitted pairs themselves."""
    scoped = f"{column} : ({match})"
    if workspace_id is not None:
        scoped += f" AND scope : {_scope_token('w', workspace_id)}"
    scoped += _note_tokens(note_ids)
    refused = sorted(set(known_provenance()) - allowed) if allowed is not None else []
    if refused:
        scoped = f"({scoped}) NOT scope : (" + " OR ".join(_scope_token("p", f"{o}|{r}") for o, r in refused) + ")"
    return scoped


def _note_tokens(note_ids: frozenset[str] | None) -> str:
    """`` AND scope : (n… OR …)``: the note set as ``scope`` tokens (migration 21); '' for no note set."""
    if note_ids is None:
        return ""
    return " AND scope : (" + " OR ".join(_scope_token("n", note_id) for note_id in sorted(note_ids)) + ")"


def _scope_token(kind: str, value: str) -> str:
    return f"{kind}{value.encode().hex()}0"  # hex(): the column's spelling (the tokenizer folds case)


def _pairs(allowed: Iterable[tuple[str, str]]) -> list[str]:
    return sorted(f"{origin}|{review}" for origin, review in allowed)


def _vector_literal(vector: np.ndarray) -> str:
    """pgvector's text form: '[0.1,0.2,…]' (cast with ::vector)."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"
