"""An idempotency key claimed inside the transaction of the write it guards.

A request run under an idempotency key sets a :class:`Claim` for the duration of the call
(:func:`claiming`). Every write transaction that commits while it is set — whichever service
opened it, through ``Store.write`` — writes the key's claim row in that same transaction, just
before COMMIT (:func:`record_in`). So the write and the fact that this key made it are one
commit: a process killed right after the commit leaves the claim behind, and a retry under the
key finds it instead of writing a second time.

The claim row is an ``idempotency_keys`` row with ``status`` 0 (no HTTP status is 0): the
request hash, and as its body what the request's transactions appended to the change feed —
``[kind, note_id, subject_id]`` per row — so a retry can rebuild the answer from what was
written (``api/idempotency.py``). When the call returns, its response replaces the claim
(``tx.idempotency.put``); a claim that is never filled means the process died, or the
call failed, after its write committed.

The claim belongs to the store layer because the transaction does; it knows nothing of HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastpad.store.base import WorkspaceTx

CLAIMED = 0  # the status of a claim row: committed under the key, no response recorded yet


@dataclass
class Claim:
    """A key some request holds: whose, which, for which request."""

    workspace_id: str
    principal_key: str
    key: str
    request_hash: str
    written: list[list[str | None]] = field(default_factory=list)  # feed rows its commits appended
    committed: bool = False  # a transaction holding the claim row has committed


_current: ContextVar[Claim | None] = ContextVar("fastpad_idempotency_claim", default=None)


@contextmanager
def claiming(claim: Claim) -> Iterator[Claim]:
    """Every write transaction committed in this context (this thread or task) holds ``claim``."""
    token = _current.set(claim)
    try:
        yield claim
    finally:
        _current.reset(token)


def record_in(tx: WorkspaceTx) -> Callable[[], None]:
    """Write the current claim's row in ``tx``, a write transaction about to commit; returns what
    to call once the COMMIT has happened (the claim then knows its row is durable)."""
    claim = _current.get()
    if claim is None or claim.workspace_id != tx.workspace_id:
        return _nothing
    written = claim.written + [list(row) for row in tx.feed.written]
    tx.idempotency.claim(claim.principal_key, claim.key, claim.request_hash, _body(written))

    def committed() -> None:
        claim.written = written
        claim.committed = True

    return committed


def _nothing() -> None:
    return None


def _body(written: list[list[str | None]]) -> bytes:
    return json.dumps({"written": written}, separators=(",", ":")).encode()


def written_in(body: bytes) -> list[list[str | None]]:
    """The feed rows a claim row records (its body), oldest first."""
    try:
        return list(json.loads(bytes(body) or b"{}").get("written", []))
    except (ValueError, AttributeError):
        return []
