"""Exact vector KNN over an in-memory float32 matrix — one index per workspace.

Measured on this kind of machine: a matrix product + ``argpartition`` over
50k × 384 float32 takes ~3 ms, ten times faster than sqlite-vec's exact KNN, so
SQLite deployments (and PostgreSQL ones without pgvector) use this. Vectors are
expected L2-normalised, so the dot product is the cosine similarity.

Rows are kept dense: removing a chunk moves the last row into the hole, so the
matrix never needs compaction. A lock makes additions from the background
embedding worker safe against concurrent queries.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterable, Sequence

import numpy as np


class VectorIndex:
    """Chunk id → vector, with exact top-k by inner product."""

    def __init__(self, dimensions: int, *, provider: str = "", initial_capacity: int = 1024):
        if dimensions <= 0:
            raise ValueError("dimensions must be positive")
        self.dimensions = int(dimensions)
        self.provider = provider  # the vectors of two providers never share an index
        self._matrix = np.zeros((max(1, initial_capacity), self.dimensions), dtype=np.float32)
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._row

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._ids)

    def vector(self, chunk_id: str) -> np.ndarray:
        with self._lock:
            return self._matrix[self._row[chunk_id]].copy()

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Insert or replace the vectors of ``ids`` (one row each, in order)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = vectors[None, :]
        if vectors.shape != (len(ids), self.dimensions):
            raise ValueError(f"expected vectors of shape ({len(ids)}, {self.dimensions}), got {vectors.shape}")
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate ids in one add")
        with self._lock:
            fresh = sum(1 for chunk_id in ids if chunk_id not in self._row)
            self._reserve(len(self._ids) + fresh)
            for chunk_id, vector in zip(ids, vectors):
                row = self._row.get(chunk_id)
                if row is None:
                    row = len(self._ids)
                    self._ids.append(chunk_id)
                    self._row[chunk_id] = row
                self._matrix[row] = vector

    def remove(self, ids: Iterable[str]) -> int:
        """Drop the given ids; unknown ids are ignored. Returns how many were removed."""
        removed = 0
        with self._lock:
            for chunk_id in ids:
                row = self._row.pop(chunk_id, None)
                if row is None:
                    continue
                last = len(self._ids) - 1
                if row != last:
                    moved = self._ids[last]
                    self._matrix[row] = self._matrix[last]
                    self._ids[row] = moved
                    self._row[moved] = row
                self._ids.pop()
                removed += 1
        return removed

    def knn(
        self,
        query: np.ndarray,
        k: int,
        *,
        where: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` nearest ids with their inner product, best first.

        ``where`` filters ids (scope, archive, trust floor): the search widens
        until ``k`` accepted ids are found or the index is exhausted, so a
        filter never silently shrinks the result below what exists.
        """
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dimensions:
            raise ValueError(f"query has {query.shape[0]} dimensions, index has {self.dimensions}")
        if k <= 0:
            return []
        with self._lock:
            n = len(self._ids)
            if n == 0:
                return []
            # einsum, not ``@``: numpy's ``@`` is OpenBLAS's sgemv, which fans out to one thread per core
            # that spin between calls — on two cores busy with the server's own work a 12,000-row scan
            # took 26-48 ms against einsum's single-threaded SIMD loop at 1.4-2.3 ms (issue 29).
            scores = np.einsum("ij,j->i", self._matrix[:n], query)
            ids = self._ids  # read under the lock; copied out below
            results: list[tuple[str, float]] = []
            examined: set[int] = set()
            window = min(n, k if where is None else max(4 * k, 64))
            while True:
                if window >= n:
                    top = np.arange(n)
                else:
                    top = np.argpartition(-scores, window - 1)[:window]
                top = np.sort(top)  # row order first, so equal scores keep a fixed order
                top = top[np.argsort(-scores[top], kind="stable")]
                for row in top.tolist():
                    if row in examined:
                        continue
                    examined.add(row)
                    chunk_id = ids[row]
                    if where is None or where(chunk_id):
                        results.append((chunk_id, float(scores[row])))
                        if len(results) == k:
                            return results
                if window >= n:
                    return results
                window = min(n, window * 4)

    def _reserve(self, rows: int) -> None:
        capacity = self._matrix.shape[0]
        if rows <= capacity:
            return
        grown = np.zeros((max(rows, capacity * 2), self.dimensions), dtype=np.float32)
        grown[: len(self._ids)] = self._matrix[: len(self._ids)]
        self._matrix = grown


class WorkspaceVectorIndexes:
    """One :class:`VectorIndex` per workspace, created on first use."""

    def __init__(self, dimensions: int, *, provider: str = ""):
        self.dimensions = dimensions
        self.provider = provider
        self._indexes: dict[str, VectorIndex] = {}
        self._lock = threading.Lock()

    def get(self, workspace_id: str) -> VectorIndex:
        with self._lock:
            index = self._indexes.get(workspace_id)
            if index is None:
                index = self._indexes[workspace_id] = VectorIndex(self.dimensions, provider=self.provider)
            return index

    def drop(self, workspace_id: str) -> None:
        with self._lock:
            self._indexes.pop(workspace_id, None)
