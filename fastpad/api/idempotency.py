"""Idempotency keys on every mutation.

The key comes from the body's ``idempotencyKey`` or the ``Idempotency-Key``
header (both may be sent; they must agree). Records live in the store, per
(workspace, credential, key) — the credential with its principal and what it
may reach (``Caller.idempotency_principal``), so a replay never answers a
request another token made:

* same key, same request → the first response replayed verbatim (status,
  body, ``content-type`` and ``location``), marked ``Idempotent-Replayed: true``;
* same key, different request → 409 ``idempotency-conflict``;
* only a response that took effect (2xx) is recorded: a refused request
  changed nothing, so retrying it under the same key — after re-reading the
  note for a ``stale-frontier``, say — runs it again.

Concurrent requests with one key are serialised in this process, so the
second waits for and replays the first instead of racing it.

The key is claimed in the transaction of the write it guards (``store/claims.py``): while the
call runs, every write transaction it commits also writes the key's claim row, so no write
commits without its key. The response replaces the claim once the call returns — any response,
once a write has committed under the key, since the request then took effect. A claim that was
never filled (the process was killed between the commit and the response, or the call failed
after its write) is answered by the route's ``recover``, which rebuilds the response from what
the claim records was written; a route without one answers a ``200`` naming what was written
(``recovered_response``). Either way the retry writes nothing, and the rebuilt answer is
recorded, so every later replay is that same answer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from fastapi.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from fastpad.errors import FieldError, IdempotencyConflict, ValidationFailed
from fastpad.store.claims import CLAIMED, Claim, claiming, written_in
from fastpad.store.records import IdempotencyRecord

HEADER = "idempotency-key"
REPLAYED_HEADER = "idempotent-replayed"
_REPLAYED_HEADERS = ("content-type", "location", "cache-control")  # no-store stays no-store

# What the claim records was written — one ``[kind, note_id, subject_id]`` per change-feed row,
# oldest first — turned back into the response the first call would have given (None: it cannot
# be, and the retry gets ``recovered_response``).
Recover = Callable[[list[list[str | None]]], "Response | None"]


def request_hash(method: str, path: str, content_type: str, body: Any) -> str:
    """What "the same request" means: method, path and body (JSON compared as data)."""
    if isinstance(body, (bytes, bytearray)):
        payload = bytes(body)
    else:
        payload = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    digest = hashlib.sha256()
    for part in (method.upper().encode(), path.encode(), content_type.split(";")[0].strip().lower().encode()):
        digest.update(part + b"\0")
    digest.update(payload)
    return digest.hexdigest()


def key_from(request: Request, body_key: str | None) -> str | None:
    header_key = request.headers.get(HEADER)
    if header_key is not None:
        header_key = header_key.strip()
        if not header_key or len(header_key) > 255 or not header_key.isascii() or not header_key.isprintable():
            raise ValidationFailed(
                detail="Idempotency-Key must be 1–255 printable ASCII characters",
                field_errors=[FieldError("header.idempotency-key", "invalid", "1–255 printable ASCII characters")],
            )
    if header_key and body_key and header_key != body_key:
        raise ValidationFailed(
            detail="The Idempotency-Key header and the body's idempotencyKey differ",
            field_errors=[FieldError("idempotencyKey", "mismatch", "must equal the Idempotency-Key header when both are sent")],
        )
    return body_key or header_key


class _KeyLocks:
    """One lock per key in flight, dropped when nobody holds it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[tuple[str, str, str], tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, ident: tuple[str, str, str]) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(ident, (threading.Lock(), 0))
            self._locks[ident] = (lock, users + 1)
        lock.acquire()
        try:
            yield
        finally:
            lock.release()
            with self._guard:
                lock, users = self._locks[ident]
                if users <= 1:
                    del self._locks[ident]
                else:
                    self._locks[ident] = (lock, users - 1)


class Idempotency:
    """The HTTP side of idempotency; ``records`` is the store (lookup/save)."""

    def __init__(self, records: Any) -> None:
        self.records = records
        self._locks = _KeyLocks()

    async def run(
        self,
        *,
        workspace_id: str,
        principal_key: str,
        key: str | None,
        fingerprint: str,
        execute: Callable[[], Response],
        recover: Recover | None = None,
    ) -> Response:
        """Run ``execute`` (sync, in a worker thread) at most once per key."""
        if key is None:
            return await run_in_threadpool(execute)
        claim = Claim(workspace_id, principal_key, key, fingerprint)
        return await run_in_threadpool(self._run_sync, claim, execute, recover)

    def _run_sync(self, claim: Claim, execute: Callable[[], Response], recover: Recover | None) -> Response:
        workspace_id, principal_key, key = claim.workspace_id, claim.principal_key, claim.key
        with self._locks.hold((workspace_id, principal_key, key)):
            record = self.records.idempotency_lookup(workspace_id, principal_key, key)
            if record is not None:
                if record.request_hash != claim.request_hash:
                    raise IdempotencyConflict(
                        detail=f"Idempotency key {key!r} was first used with a different request.",
                        extra={"idempotency_key": key},
                    )
                if record.status != CLAIMED:
                    return _replay(record)
                written = written_in(record.body)
                response = (recover and recover(written)) or recovered_response(written)
                self.records.idempotency_save(workspace_id, principal_key, key, _record(claim.request_hash, response))
                response.headers[REPLAYED_HEADER] = "true"
                return response
            return self._execute(claim, execute)

    def _execute(self, claim: Claim, execute: Callable[[], Response]) -> Response:
        with claiming(claim):
            response = execute()
        # Outside the claim: this save replaces the claim row rather than claiming again.
        if claim.committed or 200 <= response.status_code < 300:
            self.records.idempotency_save(claim.workspace_id, claim.principal_key, claim.key,
                                          _record(claim.request_hash, response))
        return response


def recovered_response(written: list[list[str | None]]) -> Response:
    """The answer to a retry whose first call committed but never answered, for a route that
    cannot rebuild its own: the request took effect, and this is what it wrote."""
    rows = [{"kind": kind, "note_id": note_id, "subject_id": subject_id} for kind, note_id, subject_id in written]
    return JSONResponse({"recovered": True, "written": rows})


def _record(fingerprint: str, response: Response) -> IdempotencyRecord:
    headers = {name: response.headers[name] for name in _REPLAYED_HEADERS if name in response.headers}
    return IdempotencyRecord(
        request_hash=fingerprint, status=response.status_code, headers=headers, body=bytes(response.body)
    )


def _replay(record: IdempotencyRecord) -> Response:
    headers = dict(record.headers or {})
    headers[REPLAYED_HEADER] = "true"
    body = record.body if isinstance(record.body, (bytes, bytearray)) else str(record.body).encode()
    return Response(content=bytes(body), status_code=record.status, headers=headers)
