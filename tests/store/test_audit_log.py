"""The audit log's table on both backends: append-only for the application itself, and an
act and its entry commit together or not at all."""

from __future__ import annotations

import pytest

from fastpad.security.audit import TOKEN_MINT, AuditService
from fastpad.store.audit import AuditFilter
from tests.helpers_store import make_services


def test_entries_are_never_changed_or_removed(store, fast_hasher) -> None:
    svc = make_services(store, fast_hasher)
    ws = svc.workspace()
    svc.tokens.create(ws.id, scopes=["notes:read"], label="kept")
    errors = (*store.integrity_errors, Exception)
    for statement in ("UPDATE audit_log SET action = 'token.revoked' WHERE workspace_id = ?",
                      "DELETE FROM audit_log WHERE workspace_id = ?"):
        with pytest.raises(errors) as refused:
            with store.write(ws.id) as tx:
                tx._x(statement, (ws.id,))
        assert "append-only" in str(refused.value)
    entries = AuditService(store).page(ws.owner).entries
    assert [(e.action, e.details["label"]) for e in entries] == [(TOKEN_MINT, "kept")]


def test_an_act_that_rolls_back_leaves_no_entry(store, fast_hasher) -> None:
    svc = make_services(store, fast_hasher)
    ws = svc.workspace()
    with pytest.raises(RuntimeError):
        with store.write(ws.id) as tx:
            svc.tokens.create(ws.id, scopes=["notes:read"], label="never", within=tx)
            raise RuntimeError("the act this mint was for failed")
    with store.read(ws.id) as tx:
        assert tx.audit.page(AuditFilter(), before_seq=None, limit=10) == []
        assert tx.tokens() == []
