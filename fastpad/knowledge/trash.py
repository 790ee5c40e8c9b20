"""TrashService: the end of the trash. Archive, trash and restore are note
writes (``NoteService``); purging — removing a trashed note's rows once it has
sat in the trash past the retention window — is maintenance, run by the
operator or a scheduler, never by a principal (spec: Concepts › Trash,
archive and delete).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.store import Store, utcnow
from fastpad.store.purge import TrashPurge

DEFAULT_RETENTION = timedelta(days=30)
PURGE_BATCH = 200  # notes per transaction, so a long backlog never holds the write lock for long


@dataclass(frozen=True)
class PurgeReport:
    purged: list[str]  # note ids, oldest trash first within each batch
    cutoff: datetime  # notes trashed at or before this were purged

    def as_dict(self) -> dict[str, Any]:
        return {"purged": list(self.purged), "cutoff": self.cutoff.isoformat()}


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
        the retention window. Each purge appends a ``purge`` change (actor: system)."""
        now = now or self.clock()
        cutoff = now - self.retention
        purged: list[str] = []
        while True:
            with self.store.write(workspace_id) as tx:
                batch = TrashPurge(tx).delete_trashed_before(cutoff, limit=self.batch_size)
                for note_id in batch:
                    tx.feed.append("purge", at=now, actor=None, note_id=note_id)
            purged += batch
            if len(batch) < self.batch_size:
                return PurgeReport(purged, cutoff)
