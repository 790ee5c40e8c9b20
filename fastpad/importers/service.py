"""ImportService: imports for a principal — run here and now, or uploaded and run in the background.

``run(principal, path)`` imports a folder or a zip and returns when it is done
(``fp import --data-dir``, the benchmark). Over HTTP an archive is uploaded
first — in one request, or in parts of at most ``MAX_PART_BYTES`` appended at
their offset, so a large archive streams in under the body limits and a broken
upload resumes where it stopped — and runs in a thread of the server once its
last byte arrived; ``status`` is its progress, ``ledger`` pages its rows,
``cancel`` stops it after the batch in flight (what committed stays).

Whatever is wrong with the archive as a whole (a Notion HTML export, a zip
bomb, an entry that climbs out of the archive, not a zip) is refused before
anything is written, as ``validation-failed`` naming the archive. Importing
needs ``notes:write`` (and ``notes:read``) on the whole workspace, plus
``schema:write`` when a Notion database is to become a type.
"""

from __future__ import annotations

import base64
import binascii
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from fastpad.errors import Conflict, FieldError, NotFound, ValidationFailed
from fastpad.importers import ledger as lg
from fastpad.importers.archive import Archive, ArchiveLimits, open_archive
from fastpad.importers.detect import SOURCES, detect_source
from fastpad.importers.notion import plan_notion
from fastpad.importers.plan import Plan
from fastpad.importers.runner import ImportRun, Writers
from fastpad.importers.uploads import UploadSpool
from fastpad.importers.vault import MARKDOWN, OBSIDIAN, plan_vault
from fastpad.knowledge.notes import NoteService
from fastpad.knowledge.types import TypeService
from fastpad.security.audit import IMPORT_FINISH, IMPORT_START, SYSTEM, record
from fastpad.notes import is_ulid, new_id
from fastpad.security.principals import Principal
from fastpad.security.scopes import NOTES_READ, NOTES_WRITE, SCHEMA_WRITE
from fastpad.store import Store, utcnow
from fastpad.store.imports import ImportRow, LedgerEntry

log = logging.getLogger(__name__)

MAX_PART_BYTES = 4 << 20  # well under the 8 MiB body limit of authenticated routes
MAX_UPLOAD_BYTES = 2 << 30
MAX_LEDGER_PAGE = 1000
STALE_AFTER = timedelta(minutes=10)  # a running import whose heartbeat is older was interrupted
INTERRUPTED = "interrupted"
_CURSOR_PREFIX = "l1:"
_PLANNERS: dict[str, Callable[[Archive], Plan]] = {
    OBSIDIAN: lambda archive: plan_vault(archive, OBSIDIAN),
    MARKDOWN: lambda archive: plan_vault(archive, MARKDOWN),
    "notion": plan_notion,
}


@dataclass(frozen=True)
class ImportView:
    id: str
    status: str  # uploading, queued, running, completed, cancelled, failed — or interrupted (not running anymore)
    source: str | None
    label: str
    archive_bytes: int | None
    received_bytes: int
    progress: dict[str, Any]
    summary: dict[str, Any] | None
    problem: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "cancelled", "failed", "interrupted")

    @classmethod
    def of(cls, row: ImportRow, now: datetime) -> "ImportView":
        status = row.status
        if status in ("queued", "running") and now - row.updated_at > STALE_AFTER:
            status = "interrupted"
        if status == "failed" and (row.problem or {}).get("type") == INTERRUPTED:
            status = INTERRUPTED  # stored as failed (the column's states), told apart by its problem
        return cls(row.id, status, row.source, row.label, row.archive_bytes, row.received_bytes, row.progress,
                   row.summary, row.problem, row.created_at, row.updated_at, row.started_at, row.finished_at)

    def as_dict(self) -> dict[str, Any]:
        iso = lambda t: None if t is None else t.isoformat()  # noqa: E731
        return {
            "id": self.id, "status": self.status, "source": self.source, "label": self.label,
            "archive_bytes": self.archive_bytes, "received_bytes": self.received_bytes,
            "progress": dict(self.progress), "summary": self.summary, "problem": self.problem,
            "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
            "started_at": iso(self.started_at), "finished_at": iso(self.finished_at),
        }


@dataclass(frozen=True)
class LedgerPage:
    items: list[LedgerEntry]
    next_cursor: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"items": [ledger_entry_dict(e) for e in self.items], "next_cursor": self.next_cursor}


def ledger_entry_dict(entry: LedgerEntry) -> dict[str, Any]:
    return {"seq": entry.seq, "item": entry.item, "kind": entry.kind, "status": entry.status,
            "reason": entry.reason, "detail": entry.detail, "note_id": entry.note_id, "target": entry.target,
            "count": entry.count}


class ImportService:
    def __init__(
        self,
        store: Store,
        notes: NoteService,
        types: TypeService,
        *,
        spool_dir: Path | None = None,
        clock: Callable[[], datetime] = utcnow,
        limits: ArchiveLimits = ArchiveLimits(),
        batch_size: int = 50,
    ) -> None:
        self.store = store
        self.writers = Writers(store, notes, types, clock)
        self.clock = clock
        self.limits = limits
        self.batch_size = batch_size
        self.spool = UploadSpool(spool_dir) if spool_dir is not None else None
        self._threads: dict[str, threading.Thread] = {}

    # ------------------------------------------------------------------ here and now

    def run(
        self,
        principal: Principal,
        path: Path,
        *,
        source: str | None = None,
        label: str | None = None,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> ImportView:
        """Import a folder or a zip; returns once it completed, was stopped (``should_stop``) or failed."""
        _authorize(principal, NOTES_WRITE)
        archive = open_archive(path, self.limits, label=label)
        try:
            source = self._check(principal, archive, source)
            import_id = self._insert(principal, "running", source=source, label=archive.label)
            self._execute(principal, import_id, archive, source, on_progress, should_stop)
        finally:
            archive.close()
        return self.status(principal, import_id)

    # ------------------------------------------------------------------ uploaded

    def begin_upload(self, principal: Principal, *, size: Any, source: Any = None, label: Any = "") -> ImportView:
        """An import waiting for its archive: ``size`` bytes, sent with ``append``."""
        _authorize(principal, NOTES_WRITE)
        errors = []
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_UPLOAD_BYTES:
            errors.append(FieldError("size", "range", f"the archive's size in bytes, 1 to {MAX_UPLOAD_BYTES:,}"))
        if source is not None and source not in SOURCES:
            errors.append(FieldError("source", "enum", "one of " + ", ".join(SOURCES) + ", or absent to detect it"))
        if not isinstance(label, str) or len(label) > 255:
            errors.append(FieldError("name", "max_length", "the archive's file name, at most 255 characters"))
        if errors:
            raise ValidationFailed(detail="the import cannot start", field_errors=errors)
        import_id = self._insert(principal, "uploading", source=source, label=_label(label), archive_bytes=size)
        self._spool().create(import_id)
        return self.status(principal, import_id)

    def upload(self, principal: Principal, data: bytes, *, source: Any = None, label: Any = "") -> ImportView:
        """An archive sent whole, in one request (as large as the body limit lets it be, 8 MiB):
        begun and appended in parts of ``MAX_PART_BYTES``, as a client uploading in parts would."""
        view = self.begin_upload(principal, size=len(data), source=source, label=label)
        for offset in range(0, len(data), MAX_PART_BYTES):
            view = self.append(principal, view.id, offset=offset, data=data[offset:offset + MAX_PART_BYTES])
        return view

    def append(self, principal: Principal, import_id: str, *, offset: int, data: bytes) -> ImportView:
        """Write one part of the archive at ``offset``. A part already received is acknowledged
        again; a gap is a Conflict naming ``received_bytes``. The last byte starts the import."""
        _authorize(principal, NOTES_WRITE)
        if len(data) > MAX_PART_BYTES:
            raise ValidationFailed(detail=f"a part is at most {MAX_PART_BYTES:,} bytes",
                                   field_errors=[FieldError("body", "max_bytes", f"at most {MAX_PART_BYTES:,}")],
                                   extra={"max_bytes": MAX_PART_BYTES})
        with self.store.write(principal.workspace_id) as tx:
            row = _row(tx.imports.get(import_id, for_update=True) if is_ulid(import_id) else None, import_id)
            end = offset + len(data)
            if end <= row.received_bytes:
                return ImportView.of(row, self.clock())  # already received: acknowledged, nothing to write
            if row.status != "uploading":
                raise Conflict(detail=f"the import is {row.status}; it takes no more of its archive",
                               extra={"reason": row.status}, next_call=f"GET /v1/imports/{import_id}")
            if offset != row.received_bytes or not data:
                raise Conflict(detail=f"the upload continues at byte {row.received_bytes:,}, not {offset:,}",
                               extra={"reason": "offset", "received_bytes": row.received_bytes},
                               next_call=f"PUT /v1/imports/{import_id}/archive?offset={row.received_bytes}")
            if end > (row.archive_bytes or 0):
                raise ValidationFailed(detail=f"the archive was announced as {row.archive_bytes:,} bytes",
                                       field_errors=[FieldError("body", "past_size", "past the announced size")])
            self._spool().write(import_id, offset, data)
            tx.imports.update(import_id, self.clock(), received_bytes=end)
        if end == row.archive_bytes:
            self._start(principal, import_id)
        return self.status(principal, import_id)

    def _start(self, principal: Principal, import_id: str) -> None:
        """Check the whole archive (a refusal marks the import failed and is raised), then run it in a thread."""
        with self.store.read(principal.workspace_id) as tx:
            row = _row(tx.imports.get(import_id), import_id)
        try:
            archive = open_archive(self._spool().path(import_id), self.limits, label=row.label)
            try:
                source = self._check(principal, archive, row.source)
            except BaseException:
                archive.close()
                raise
        except ValidationFailed as refusal:
            self._spool().discard(import_id)
            with self.store.write(principal.workspace_id) as tx:
                now = self.clock()
                tx.imports.update(import_id, now, status="failed", finished_at=now, problem={
                    "type": refusal.slug, "title": refusal.title, "detail": str(refusal),
                    "field_errors": [fe.as_dict() for fe in refusal.field_errors]})
            raise
        with self.store.write(principal.workspace_id) as tx:
            tx.imports.update(import_id, self.clock(), status="queued", source=source)
        thread = threading.Thread(target=self._background, args=(principal, import_id, archive, source),
                                  name=f"import-{import_id}", daemon=True)
        self._threads[import_id] = thread
        thread.start()

    def _background(self, principal: Principal, import_id: str, archive: Archive, source: str) -> None:
        try:
            self._execute(principal, import_id, archive, source, None, None)
        except Exception:  # noqa: BLE001 - a thread has no caller; _execute recorded the failure
            log.exception("import %s stopped", import_id)
        finally:
            archive.close()
            self._spool().discard(import_id)
            self._threads.pop(import_id, None)

    def join(self, import_id: str, timeout: float | None = None) -> None:
        """Wait for an uploaded import's thread in this process (tests; a clean shutdown)."""
        thread = self._threads.get(import_id)
        if thread is not None:
            thread.join(timeout)

    # ------------------------------------------------------------------ reading and cancelling

    def status(self, principal: Principal, import_id: str) -> ImportView:
        _authorize(principal, NOTES_READ)
        with self.store.read(principal.workspace_id) as tx:
            row = _row(tx.imports.get(import_id) if is_ulid(import_id) else None, import_id)
        if self._orphaned(row):
            row = self._interrupted(principal, import_id)
        return ImportView.of(row, self.clock())

    def _orphaned(self, row: ImportRow) -> bool:
        """An uploaded import that says it runs, though no thread of this process runs it: the server
        that ran it stopped (killed, crashed, restarted). Uploaded imports run only in the server's
        own threads (one server per database); an import of a folder runs in the process that
        asked for it, and is judged by its heartbeat instead (``STALE_AFTER``)."""
        return (row.status in ("queued", "running") and row.archive_bytes is not None
                and row.id not in self._threads)

    def _interrupted(self, principal: Principal, import_id: str) -> ImportRow:
        """Mark an orphaned import interrupted, with a ledger row for every item of its archive
        (still in the spool) that its ledger does not account for yet: ``imported`` for a note
        created before the stop, ``not_reached`` for the rest."""
        items = self._planned_items(import_id)
        with self.store.write(principal.workspace_id) as tx:
            row = _row(tx.imports.get(import_id, for_update=True), import_id)
            if not self._orphaned(row):
                return row  # another request got here first
            accounted, seq = set(), 0
            while batch := tx.imports.ledger(import_id, after_seq=seq, limit=MAX_LEDGER_PAGE):
                accounted.update(entry.item for entry in batch)
                seq = batch[-1].seq
            unrecorded = [(item, kind) for item, kind in items.items() if item not in accounted]
            # A note is created before its batch's rows are written: one the server created and then
            # stopped before recording is there, under the id this import minted for it.
            minted = {m.item_path: m.note_id for m in tx.imports.minted(item for item, _ in unrecorded)}
            created = tx.imports.existing_notes(minted.values())
            entries = [LedgerEntry(seq + n, item, kind, lg.IMPORTED, None, "created just before the server stopped",
                                   minted[item], None, None) if minted.get(item) in created else
                       LedgerEntry(seq + n, item, kind, lg.NOT_REACHED, None,
                                   "the server stopped before the import reached it", None, None, None)
                       for n, (item, kind) in enumerate(unrecorded, start=1)]
            unreached = [entry for entry in entries if entry.status == lg.NOT_REACHED]
            tx.imports.append_ledger(import_id, entries)
            now = self.clock()
            tx.imports.update(import_id, now, status="failed", finished_at=now, problem={
                "type": INTERRUPTED, "title": "The import was interrupted",
                "detail": f"the server stopped while it ran; {len(unreached):,} item(s) were never reached",
                "retryable": True, "next": "import the archive again: what committed is kept, and nothing is "
                                           "created twice"})
            record(tx, SYSTEM, IMPORT_FINISH, target=import_id, details={"status": INTERRUPTED}, at=now)
            row = _row(tx.imports.get(import_id), import_id)
        self._spool().discard(import_id)
        return row

    def _planned_items(self, import_id: str) -> dict[str, str]:
        """Every item of a spooled archive, with its kind, as its import planned it (empty when
        the spool no longer holds it)."""
        path = self._spool().path(import_id)
        if not path.exists():
            return {}
        archive = open_archive(path, self.limits)
        try:
            plan = _PLANNERS[detect_source(archive.entries, None)](archive)
        finally:
            archive.close()
        return {**{row.item: row.kind for row in plan.rows}, **plan.to_write()}

    def ledger(self, principal: Principal, import_id: str, *, cursor: str | None = None, limit: int = 100) -> LedgerPage:
        """A page of the import's ledger, in order; follow ``next_cursor``."""
        _authorize(principal, NOTES_READ)
        self.status(principal, import_id)  # an orphaned import's ledger is completed first
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LEDGER_PAGE:
            raise ValidationFailed(detail=f"limit is between 1 and {MAX_LEDGER_PAGE}",
                                   field_errors=[FieldError("limit", "range", f"between 1 and {MAX_LEDGER_PAGE}")])
        after = _decode_cursor(cursor) if cursor is not None else 0
        with self.store.read(principal.workspace_id) as tx:
            _row(tx.imports.get(import_id) if is_ulid(import_id) else None, import_id)
            entries = tx.imports.ledger(import_id, after_seq=after, limit=limit + 1)
        page = entries[:limit]
        return LedgerPage(page, _encode_cursor(page[-1].seq) if len(entries) > limit else None)

    def cancel(self, principal: Principal, import_id: str) -> ImportView:
        """Stop the import: at once while it waits for its archive, else after the batch in flight."""
        _authorize(principal, NOTES_WRITE)
        with self.store.write(principal.workspace_id) as tx:
            row = _row(tx.imports.get(import_id, for_update=True) if is_ulid(import_id) else None, import_id)
            now = self.clock()
            if row.status in ("completed", "cancelled", "failed"):
                raise Conflict(detail=f"the import already {row.status if row.status != 'failed' else 'stopped'}",
                               extra={"reason": row.status}, next_call=f"GET /v1/imports/{import_id}/ledger")
            if row.status == "uploading":
                tx.imports.update(import_id, now, status="cancelled", cancel_requested=True, finished_at=now)
            else:
                tx.imports.update(import_id, now, cancel_requested=True)
        if row.status == "uploading":
            self._spool().discard(import_id)
        return self.status(principal, import_id)

    # ------------------------------------------------------------------ internals

    def _check(self, principal: Principal, archive: Archive, source: str | None) -> str:
        source = detect_source(archive.entries, source)
        if source == "notion" and any(e.suffix == "csv" for e in archive.entries):
            principal.require(SCHEMA_WRITE)  # its databases become types
        return source

    def _insert(self, principal: Principal, status: str, *, source: str | None, label: str,
                archive_bytes: int | None = None) -> str:
        now = self.clock()
        import_id = new_id()
        row = ImportRow(import_id, status, source, label, archive_bytes, 0, False, {}, None, None, principal.kind,
                        principal.principal_id, principal.token_id, now, now, now if status == "running" else None,
                        None)
        with self.store.write(principal.workspace_id) as tx:
            tx.imports.insert(row)
        return import_id

    def _execute(self, principal: Principal, import_id: str, archive: Archive, source: str,
                 on_progress: Callable[[dict[str, Any]], None] | None,
                 should_stop: Callable[[], bool] | None) -> None:
        with self.store.write(principal.workspace_id) as tx:
            now = self.clock()
            tx.imports.update(import_id, now, status="running", started_at=now,
                              progress={"phase": "reading", "items_total": len(archive.entries), "items_done": 0})
            record(tx, principal, IMPORT_START, target=import_id, details={"source": source}, at=now)
        try:
            plan = _PLANNERS[source](archive)
        except Exception as exc:
            with self.store.write(principal.workspace_id) as tx:
                now = self.clock()
                tx.imports.update(import_id, now, status="failed", finished_at=now,
                                  problem={"type": "internal", "title": "The archive could not be read",
                                           "detail": str(exc) or type(exc).__name__})
                record(tx, principal, IMPORT_FINISH, target=import_id, details={"status": "failed"}, at=now)
            raise
        ImportRun(self.writers, principal, import_id, archive, plan, batch_size=self.batch_size,
                  on_progress=on_progress, should_stop=should_stop).execute()

    def _spool(self) -> UploadSpool:
        if self.spool is None:
            raise RuntimeError("uploads need a spool folder (ImportService(spool_dir=…))")
        return self.spool


def _authorize(principal: Principal, scope: str) -> None:
    principal.require(*dict.fromkeys((NOTES_READ, scope)))
    principal.require_whole_workspace("imports are for credentials that reach the whole workspace")


def _row(row: ImportRow | None, import_id: str) -> ImportRow:
    if row is None:
        raise NotFound(detail=f"no import {import_id}", extra={"import_id": import_id}, next_call="POST /v1/imports")
    return row


def _label(name: str) -> str:
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    return name[:-4] if name.lower().endswith(".zip") else name


def _encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{seq}".encode()).rstrip(b"=").decode()


def _decode_cursor(cursor: str) -> int:
    bad = ValidationFailed(detail="cursor is not one this server returned",
                           field_errors=[FieldError("cursor", "malformed_cursor", "pass next_cursor back unchanged")])
    if not isinstance(cursor, str) or len(cursor) > 64:
        raise bad
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise bad from None
    if not raw.startswith(_CURSOR_PREFIX) or not raw[len(_CURSOR_PREFIX):].isdigit():
        raise bad
    return int(raw[len(_CURSOR_PREFIX):])
