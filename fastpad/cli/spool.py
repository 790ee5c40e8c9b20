"""The capture spool: captures are written to disk before they are sent, and replayed until delivered.

A spool is a directory per login and server (``Target.spool_key``) under
``$XDG_STATE_HOME/fastpad/spool/``::

    pending/    waiting to be delivered, oldest first (the name starts with the time)
    attempts/   beside a pending entry: how often it was tried, and the last error
    delivered/  the server acknowledged them (the newest 200 are kept, for --status)
    failed/     the server refused them for good (e.g. 422); kept for a person to read
    .lock       held while draining, so cron, a shell hook and a capture never send twice at once

A capture is one JSON file written to a temporary name, fsync'd, renamed into
place and its directory fsync'd: once in ``pending/`` it survives a crash or a
power cut, and it is never rewritten there (attempts are noted beside it in
``attempts/``, without fsync: losing a count loses nothing). It carries its
idempotency key, so a replay of something the server already committed — the
answer was lost, say — is acknowledged by the server instead of captured
twice. An entry moves to ``delivered/`` only after a 2xx (not fsync'd: the
note is on the server, and a pending copy that survived a crash is replayed
and acknowledged); to ``failed/`` durably, since its text lives only there. A
network error, a 5xx, a rate limit or a credential the server did not take
leave it pending for the next attempt.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from fastpad.errors import FastpadError

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
KEEP_DELIVERED = 200
_LOCK_POLL_S = 0.05


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write(path: Path, payload: dict[str, Any], *, durable: bool) -> None:
    """Write a JSON file whole (a temporary name, then a rename); ``durable``: fsync'd, file and directory."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, ensure_ascii=False)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    os.replace(tmp, path)
    if durable:
        _fsync_dir(path.parent)


@dataclass
class Entry:
    name: str  # file name: <ns since epoch>-<uuid>.json; its order is capture order
    state: str
    data: dict[str, Any]

    @property
    def key(self) -> str:
        return self.data["idempotency_key"]

    @property
    def body(self) -> dict[str, Any]:
        return self.data["body"]

    def summary(self) -> dict[str, Any]:
        text = str(self.body.get("title") or self.body.get("text", "")).strip().split("\n", 1)[0]
        return {
            "id": self.name.removesuffix(".json"),
            "state": self.state,
            "idempotency_key": self.key,
            "captured_at": self.data.get("captured_at"),
            "preview": text[:80],
            "attempts": self.data.get("attempts", 0),
            **{k: self.data[k] for k in ("note_id", "delivered_at", "error", "last_error") if self.data.get(k)},
        }


@dataclass
class DrainReport:
    delivered: list[Entry] = field(default_factory=list)
    failed: list[Entry] = field(default_factory=list)
    errors: dict[str, FastpadError] = field(default_factory=dict)  # entry name -> why it failed
    pending: int = 0
    busy: bool = False  # another process held the lock
    stopped_by: FastpadError | None = None  # why entries stayed pending


class Spool:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _dir(self, state: str) -> Path:
        path = self.root / state
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        return path

    # ------------------------------------------------------------------ writing

    def add(self, body: dict[str, Any]) -> Entry:
        """Spool a capture (its ``idempotencyKey`` is minted here) durably, before any network."""
        key = f"fp-capture-{uuid.uuid4().hex}"
        name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.json"
        data = {"idempotency_key": key, "captured_at": _now(), "attempts": 0,
                "body": {**body, "idempotencyKey": key}}
        _write(self._dir(PENDING) / name, data, durable=True)
        return Entry(name, PENDING, data)

    # ------------------------------------------------------------------ reading

    def entries(self, state: str) -> list[Entry]:
        directory = self.root / state
        if not directory.is_dir():
            return []
        out = []
        for path in sorted(directory.glob("*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # a file written whole cannot be half there; anything else is not ours
            if state == PENDING:
                data.update(self._attempts(path.name))
            out.append(Entry(path.name, state, data))
        return out

    def _attempts(self, name: str) -> dict[str, Any]:
        try:
            return json.loads((self.root / "attempts" / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def find(self, name: str) -> tuple[str | None, dict[str, Any]]:
        """(state, data) of the entry called ``name``, wherever it is now."""
        for state in (DELIVERED, FAILED, PENDING):
            path = self.root / state / name
            try:
                return state, json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                continue
        return None, {}

    def pending_count(self) -> int:
        directory = self.root / PENDING
        return sum(1 for _ in directory.glob("*.json")) if directory.is_dir() else 0

    # ------------------------------------------------------------------ draining

    def drain(
        self,
        send: Callable[[dict[str, Any]], dict[str, Any]],
        *,
        retry_later: Callable[[FastpadError], bool],
        wait_s: float = 0.0,
    ) -> DrainReport:
        """Send pending entries oldest first until one cannot be sent now.

        ``send(body)`` returns the server's answer or raises; ``retry_later(error)``
        says whether an error leaves the entry pending (and stops the drain) or
        fails it for good. ``wait_s``: how long to wait for another drainer's lock.
        """
        report = DrainReport()
        lock = self._lock(wait_s)
        if lock is None:
            report.busy = True
            report.pending = self.pending_count()
            return report
        try:
            for entry in self.entries(PENDING):
                if (self.root / DELIVERED / entry.name).exists():  # delivered, then interrupted before the unlink
                    (self.root / PENDING / entry.name).unlink(missing_ok=True)
                    continue
                try:
                    answer = send(entry.body)
                except FastpadError as error:
                    if retry_later(error):
                        self._note_attempt(entry, error)
                        report.stopped_by = error
                        break
                    self._move(entry, FAILED, error=_error_record(error))
                    report.failed.append(entry)
                    report.errors[entry.name] = error
                    continue
                self._move(entry, DELIVERED, note_id=answer.get("note_id"), delivered_at=_now())
                report.delivered.append(entry)
            self._prune_delivered()
        finally:
            os.close(lock)
        report.pending = self.pending_count()
        return report

    def _lock(self, wait_s: float) -> int | None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return None
                time.sleep(_LOCK_POLL_S)

    def _note_attempt(self, entry: Entry, error: FastpadError) -> None:
        entry.data["attempts"] = entry.data.get("attempts", 0) + 1
        entry.data["last_error"] = _error_record(error)
        attempts = {"attempts": entry.data["attempts"], "last_error": entry.data["last_error"]}
        _write(self._dir("attempts") / entry.name, attempts, durable=False)

    def _move(self, entry: Entry, state: str, **updates: Any) -> None:
        entry.data["attempts"] = entry.data.get("attempts", 0) + 1
        entry.data.update(updates)
        _write(self._dir(state) / entry.name, entry.data, durable=state == FAILED)  # first the new home...
        (self.root / PENDING / entry.name).unlink(missing_ok=True)  # ...then out of pending
        (self.root / "attempts" / entry.name).unlink(missing_ok=True)
        entry.state = state

    def _prune_delivered(self) -> None:
        delivered = sorted((self.root / DELIVERED).glob("*.json")) if (self.root / DELIVERED).is_dir() else []
        for path in delivered[:-KEEP_DELIVERED]:
            path.unlink(missing_ok=True)


def _error_record(error: FastpadError) -> dict[str, Any]:
    return {"error": error.slug, "detail": str(error), "at": _now()}
