"""The embedding worker: a background thread that gives every chunk a vector.

Text is searchable the instant it commits (lexically, in the write's own
transaction); meaning catches up here. The worker sleeps on a condition and
wakes when

* a write commits in a workspace (``wake``, fed by the store's commit signal),
* the slow sweep is due (every ``sweep_interval`` seconds), or
* it is stopped.

Each pass over a workspace embeds the chunks whose digest has no vector from
the provider yet: it reads the note and re-chunks it (the chunk table holds
digests, not text; ``indexing.note_chunks`` gives the text behind them), embeds
outside any transaction, and stores the vectors in a short write transaction.
A note whose stored chunks no longer match its blocks — written before chunks
existed, or by an older chunker — has its chunk rows rebuilt first. The sweep
also deletes vectors no chunk refers to any more and reconciles the in-memory
index with what other processes stored.

``catch_up(workspace_id)`` runs one pass synchronously (the benchmark and
``fp`` commands use it); ``wait_caught_up`` blocks until a pass that started
after the last wake has found nothing left to embed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from fastpad.search.embeddings import EmbeddingProvider
from fastpad.search.indexing import note_chunks
from fastpad.search.vectors import StoredVectors
from fastpad.store import Store, utcnow
from fastpad.store.feed_signal import feed_commits

log = logging.getLogger(__name__)


@dataclass
class _Progress:
    requested: int = 0  # bumped by every wake
    done: int = 0  # the `requested` value the last complete pass started from
    failure: str | None = None


class EmbeddingWorker:
    def __init__(
        self,
        store: Store,
        vectors: StoredVectors,
        *,
        sweep_interval: float = 300.0,
        notes_per_batch: int = 16,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.provider: EmbeddingProvider = vectors.provider
        self.sweep_interval = sweep_interval
        self.notes_per_batch = notes_per_batch
        self.clock = clock
        self.embedded = 0  # chunks embedded by this worker, for reports
        self._progress: dict[str, _Progress] = {}
        self._dirty: set[str] = set()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._unlisten: Callable[[], None] | None = None

    # ------------------------------------------------------------------ control

    def start(self) -> None:
        """Start the thread, woken by every commit this process makes (the store's commit signal)."""
        if self._thread is not None:
            return
        self._stopping = False
        self._unlisten = feed_commits.listen(self.wake)
        self._thread = threading.Thread(target=self._run, name="fastpad-embedding-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def watch(self, workspace_id: str) -> None:
        """Include a workspace in the periodic sweep (without waking the worker)."""
        with self._cond:
            self._progress.setdefault(workspace_id, _Progress())

    def wake(self, workspace_id: str) -> None:
        """Something committed in ``workspace_id``: look for chunks to embed. Cheap,
        callable from any thread (it runs on the committing one)."""
        with self._cond:
            self._progress.setdefault(workspace_id, _Progress()).requested += 1
            self._dirty.add(workspace_id)
            self._cond.notify_all()

    def wait_caught_up(self, workspace_id: str, timeout: float) -> bool:
        """Block until every chunk committed before this call has a vector (True),
        or ``timeout`` seconds pass (False). Wakes the worker itself."""
        self.wake(workspace_id)
        with self._cond:
            target = self._progress[workspace_id].requested
            return self._cond.wait_for(lambda: self._progress[workspace_id].done >= target, timeout)

    def failure(self, workspace_id: str) -> str | None:
        """Why the last pass over the workspace stopped short, if it did."""
        with self._cond:
            progress = self._progress.get(workspace_id)
            return None if progress is None else progress.failure

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        next_sweep = 0.0  # the first round is a sweep: pick up what the last run left
        while True:
            with self._cond:
                timeout = max(0.0, next_sweep - time.monotonic())
                self._cond.wait_for(lambda: self._stopping or bool(self._dirty), timeout)
                if self._stopping:
                    return
                sweep = time.monotonic() >= next_sweep
                workspaces = sorted(self._progress) if sweep else sorted(self._dirty)
                self._dirty.clear()
            for workspace_id in workspaces:
                if self._stopping:
                    return
                self._pass(workspace_id, sweep=sweep)
            if sweep:
                next_sweep = time.monotonic() + self.sweep_interval

    def _pass(self, workspace_id: str, *, sweep: bool) -> None:
        with self._cond:
            started_at = self._progress.setdefault(workspace_id, _Progress()).requested
        try:
            self.catch_up(workspace_id, sweep=sweep)
            failure = None
        except Exception as exc:  # a provider or database failure: retried at the next wake or sweep
            failure = f"{type(exc).__name__}: {exc}"[:300]
            if failure != self.failure(workspace_id):  # once per distinct failure, not once per commit
                log.exception("embedding pass over workspace %s failed", workspace_id)
        with self._cond:
            progress = self._progress[workspace_id]
            progress.failure = failure
            if failure is None:
                progress.done = max(progress.done, started_at)
            self._cond.notify_all()

    # ------------------------------------------------------------------ one pass

    def catch_up(self, workspace_id: str, *, sweep: bool = False) -> int:
        """Embed every chunk of the workspace that has no vector yet; returns how many.
        With ``sweep``, also backfill notes without chunks, delete vectors no chunk
        uses and reconcile the in-memory index."""
        if sweep:
            self._backfill(workspace_id)
        total = 0
        given_up: set[str] = set()
        while not self._stopping:  # a server shutting down waits for one batch, not for the whole backlog
            with self.store.read(workspace_id) as tx:
                pending = [n for n in tx.search_index.notes_missing_vectors(
                    self.provider.name, limit=self.notes_per_batch + len(given_up)) if n not in given_up]
            if not pending:
                break
            batch = pending[: self.notes_per_batch]
            done = self._embed_notes(workspace_id, batch)
            if not done:
                given_up.update(batch)  # nothing to embed after all (a write raced this pass): next pass
            total += done
        if sweep:
            with self.store.write(workspace_id) as tx:
                self.vectors.removed(tx, tx.search_index.sweep_vectors(self.provider.name))
                self.vectors.reconcile(tx)
        return total

    def _embed_notes(self, workspace_id: str, note_ids: list[str]) -> int:
        """Embed the digests of these notes' chunks that have no vector; returns how many.

        The text comes from re-chunking the note as it is now. If that no longer
        matches the stored chunk rows (written before chunks existed, or by an
        older chunker) the rows are rebuilt from it first, so what gets a vector
        is always what the table says."""
        texts: dict[str, str] = {}
        outdated = []
        with self.store.read(workspace_id) as tx:
            for note_id in note_ids:
                row = tx.note(note_id)
                if row is None:
                    continue
                current = note_chunks(row, tx.blocks(note_id))
                if [c for c, _ in current] != tx.search_index.note_chunks(note_id):
                    outdated.append(note_id)
                missing = tx.search_index.missing_digests(self.provider.name, (c.digest for c, _ in current))
                texts.update({c.digest: chunk.embed_text for c, chunk in current if c.digest in missing})
        if outdated:
            self._rebuild(workspace_id, outdated)
        if not texts:
            return 0
        digests = sorted(texts)
        vectors = self.provider.embed([texts[d] for d in digests])
        with self.store.write(workspace_id) as tx:
            tx.search_index.put_vectors(self.provider.name, digests, vectors, self.clock(),
                                        pgvector=self.vectors.fills_pgvector(tx))
            self.vectors.added(tx, digests, vectors)
        self.embedded += len(digests)
        return len(digests)

    def _backfill(self, workspace_id: str) -> None:
        """Chunk the notes that have text but no chunk rows (written before version 6)."""
        tried: set[str] = set()
        while True:
            with self.store.read(workspace_id) as tx:
                missing = [n for n in tx.search_index.notes_without_chunks(limit=100 + len(tried)) if n not in tried]
            if not missing:
                return
            batch = missing[:100]
            tried.update(batch)  # a note whose text chunks to nothing (only blank blocks) stays without rows
            self._rebuild(workspace_id, batch)

    def _rebuild(self, workspace_id: str, note_ids: list[str]) -> None:
        """Rewrite chunk rows from the notes' current blocks (derived data, no note change)."""
        with self.store.write(workspace_id) as tx:
            for note_id in note_ids:
                row = tx.note(note_id)
                if row is not None:
                    tx.search_index.replace_chunks(note_id, [c for c, _ in note_chunks(row, tx.blocks(note_id))])
