"""Where the server's dense vectors are searched: pgvector, or an in-memory index.

The database holds every vector (``chunk_vectors``, one per provider and chunk
digest). Searching them takes one of two paths, chosen once per process:

* PostgreSQL with the ``vector`` extension and a 384-dimension provider: KNN
  by the HNSW index, in the database.
* Otherwise (SQLite; PostgreSQL without pgvector; another width): an exact
  in-memory :class:`VectorIndex` per workspace keyed by digest, loaded from the
  table on first use and kept current by the embedding worker in this process.
  Vectors another process adds or sweeps are picked up by the worker's slow
  sweep (:meth:`StoredVectors.reconcile`); until then a swept digest simply
  resolves to no chunk, and is skipped.

Either way a key is a digest; :meth:`resolve` turns digests into the chunks
carrying them that the caller may see (``SearchIndex.chunks_by_digest``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from fastpad.search.embeddings import EmbeddingProvider
from fastpad.search.hybrid import SearchRequest
from fastpad.search.vector_index import VectorIndex, WorkspaceVectorIndexes
from fastpad.store import Store, WorkspaceTx
from fastpad.store.search_index import PGVECTOR_DIMENSIONS


class StoredVectors:
    """One provider's vectors for every workspace of a store (a ``VectorSource``)."""

    def __init__(self, store: Store, provider: EmbeddingProvider, *, use_pgvector: bool = True) -> None:
        self.store = store
        self.provider = provider
        self._allow_pgvector = use_pgvector
        self._in_database: bool | None = None
        self._column: bool | None = None
        self._indexes: WorkspaceVectorIndexes | None = None
        self._loaded: set[str] = set()
        self._lock = threading.Lock()

    def in_database(self, tx: WorkspaceTx) -> bool:
        """Whether KNN runs in the database (decided on first use, then fixed)."""
        if self._in_database is None:
            self._in_database = self._allow_pgvector and self.fills_pgvector(tx)
        return self._in_database

    def fills_pgvector(self, tx: WorkspaceTx) -> bool:
        """Whether stored vectors get their pgvector copy: whenever the column exists
        and fits, whichever path this process searches by, so another process
        searching in the database finds every vector."""
        if self._column is None:
            self._column = self.provider.dimensions == PGVECTOR_DIMENSIONS and tx.search_index.has_pgvector()
        return self._column

    # ------------------------------------------------------------------ VectorSource

    def nearest(self, request: SearchRequest, query: Any, k: int) -> list[tuple[str, float]]:
        tx: WorkspaceTx = request.context["tx"]
        if self.in_database(tx):
            return tx.search_index.pgvector_nearest(self.provider.name, query, k)
        return self.index(tx).knn(query, k)

    def resolve(self, request: SearchRequest, keys: Sequence[str]) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
        tx: WorkspaceTx = request.context["tx"]
        found: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for chunk in tx.search_index.chunks_by_digest(keys, request.context["filter"]):
            found.setdefault(chunk.digest, []).append((chunk.note_id, chunk.block_ids))
        return found

    # ------------------------------------------------------------------ the in-memory path

    def index(self, tx: WorkspaceTx) -> VectorIndex:
        """The workspace's in-memory index, loaded from the table the first time."""
        workspace_id = tx.workspace_id
        with self._lock:
            if self._indexes is None:
                self._indexes = WorkspaceVectorIndexes(self.provider.dimensions, provider=self.provider.name)
            index = self._indexes.get(workspace_id)
            if workspace_id not in self._loaded:
                digests, matrix = tx.search_index.vectors(self.provider.name)
                if digests:
                    index.add(digests, matrix)
                self._loaded.add(workspace_id)
        return index

    def added(self, tx: WorkspaceTx, digests: Sequence[str], vectors: np.ndarray) -> None:
        """The worker stored these vectors: keep a loaded in-memory index current."""
        if not self.in_database(tx) and tx.workspace_id in self._loaded:
            self.index(tx).add(list(digests), vectors)

    def removed(self, tx: WorkspaceTx, digests: Sequence[str]) -> None:
        if not self.in_database(tx) and tx.workspace_id in self._loaded:
            self.index(tx).remove(digests)

    def reconcile(self, tx: WorkspaceTx) -> None:
        """Bring a loaded in-memory index level with the table (other processes' work)."""
        if self.in_database(tx) or tx.workspace_id not in self._loaded:
            return
        index = self.index(tx)
        stored = tx.search_index.vector_digests(self.provider.name)
        held = set(index.ids())
        index.remove(held - stored)
        digests, matrix = tx.search_index.vectors(self.provider.name, stored - held)
        if digests:
            index.add(digests, matrix)
