"""TrashService: the end of the trash. Archive, trash and restore are note
writes (``NoteService``); purging — removing a trashed note's rows once it has
sat in the trash past the retention window — is maintenance, run by
``fp serve`` on a schedule (:class:`PurgeSchedule`) or by the operator
(``fp purge``), never by a principal (spec: Concepts › Trash, archive and
delete).

The same pass removes idempotency records past their 24 hours: a record keeps
the response it would replay, note text included, so it must not outlive the
note it shows — and nothing replays it after its day anyway.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.security.audit import NOTE_PURGE, SYSTEM, record
from fastpad.store import Store, utcnow
from fastpad.store.purge import TrashPurge

DEFAULT_RETENTION = timedelta(days=30)
PURGE_BATCH = 200  # notes per transaction, so a long backlog never holds the write lock for long
PURGE_INTERVAL = timedelta(hours=1)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PurgeReport:
    purged: list[str]  # note ids, oldest trash first within each batch
    cutoff: datetime  # notes trashed at or before this were purged
    idempotency_records: int = 0  # expired idempotency records removed
    workspaces: int = 1  # how many workspaces the pass went through

    def as_dict(self) -> dict[str, Any]:
        return {"purged": list(self.purged), "cutoff": self.cutoff.isoformat(),
                "idempotency_records": self.idempotency_records, "workspaces": self.workspaces}


class TrashService:
    def __init__(self, store: Store, *, retention: timedelta = DEFAULT_RETENTION,
                 clock: Callable[[], datetime] = utcnow, batch_size: int = PURGE_BATCH) -> None:
        if not isinstance(retention, timedelta) or retention < timedelta(0):
            raise ValidationFailed(detail="the trash retention window is a duration of zero or more",
                                   field_errors=[FieldError("trash_retention_days", "range", "zero or more days")])
        self.store = store
        self.retention = retention
        self.clock = clock
        self.batch_size = batch_size

    def purge_expired(self, workspace_id: str, now: datetime | None = None) -> PurgeReport:
        """Remove every note of the workspace that has been in the trash longer than
        the retention window (each purge appends a ``purge`` change, actor: system),
        then the workspace's expired idempotency records."""
        now = now or self.clock()
        cutoff = now - self.retention
        purged: list[str] = []
        while True:
            with self.store.write(workspace_id) as tx:
                batch = TrashPurge(tx).delete_trashed_before(cutoff, limit=self.batch_size)
                for note_id in batch:
                    tx.feed.append("purge", at=now, actor=None, note_id=note_id)
                    record(tx, SYSTEM, NOTE_PURGE, note_id=note_id, target=note_id,
                           details={"trashed_before": cutoff.isoformat()}, at=now)
            purged += batch
            if len(batch) < self.batch_size:
                break
        with self.store.write(workspace_id) as tx:
            swept = tx.idempotency.sweep(now)
        return PurgeReport(purged, cutoff, swept)


    def purge_everywhere(self, now: datetime | None = None) -> PurgeReport:
        """:meth:`purge_expired` in every workspace of the deployment (``fp purge``): one report."""
        now = now or self.clock()
        reports = [self.purge_expired(workspace_id, now) for workspace_id in self.store.workspace_ids()]
        return PurgeReport([note for r in reports for note in r.purged], now - self.retention,
                           sum(r.idempotency_records for r in reports), workspaces=len(reports))


class PurgeSchedule:
    """Runs ``TrashService.purge_expired`` in every workspace of the deployment when started
    and then every ``interval``, in a daemon thread, until stopped (``fp serve`` holds one).
    A workspace whose purge fails is logged and retried at the next pass; the others go on."""

    def __init__(self, trash: TrashService, *, interval: timedelta = PURGE_INTERVAL) -> None:
        self.trash = trash
        self.interval = interval
        self.passes = 0  # completed passes, for tests and reports
        self._stop = threading.Event()
        self._done = threading.Condition()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="fastpad-purge", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def wait_passes(self, count: int, timeout: float) -> bool:
        """Wait until ``count`` passes have completed (True) or ``timeout`` seconds pass."""
        with self._done:
            return self._done.wait_for(lambda: self.passes >= count, timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                workspace_ids = self.trash.store.workspace_ids()  # those created since the last pass too
            except Exception:  # noqa: BLE001 - a maintenance pass must not end the server's thread
                log.exception("listing the workspaces to purge failed")
                workspace_ids = []
            for workspace_id in workspace_ids:
                if self._stop.is_set():
                    break
                try:
                    self.trash.purge_expired(workspace_id)
                except Exception:  # noqa: BLE001 - one workspace's failure must not stop the others'
                    log.exception("purging the trash of workspace %s failed", workspace_id)
            with self._done:
                self.passes += 1
                self._done.notify_all()
            self._stop.wait(self.interval.total_seconds())
