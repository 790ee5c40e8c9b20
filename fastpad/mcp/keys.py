"""Idempotency keys for the tools that write through a service keeping no key of its own
(``fastpad_turn``'s abandon and accept; ``fastpad_propose``'s turn is its service's, once per key).

The first answer's data — before the outbound path, which runs again on a replay as on the first
answer — is recorded per credential and key in the same records as the HTTP API's, under a name of
its own (``mcp:…``) so a tool's answer never replays an HTTP response or the reverse. The same key
with the same arguments (the session aside: a reconnect opens a new one) answers the first result;
with other arguments, ``idempotency-conflict``. Only an answer that took effect is recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from fastpad.api.idempotency import request_hash
from fastpad.errors import IdempotencyConflict
from fastpad.mcp.tool import Call, ToolOutput
from fastpad.store.records import IdempotencyRecord

KEY_ARGUMENT = "idempotency_key"
_NOT_THE_REQUEST = ("session", KEY_ARGUMENT)


def once(call: Call, write: Callable[[], ToolOutput]) -> tuple[ToolOutput, bool]:
    """``write`` at most once per ``idempotency_key`` (when the call carries one): (its output,
    whether this is a replay). The output must be plain data (no items or notes the budget cuts):
    that is what is recorded."""
    key = call.args.get(KEY_ARGUMENT)
    if key is None:
        return write(), False
    principal, records = call.principal, call.deployment.idempotency
    whose = f"mcp:{principal.key}"
    arguments = {name: value for name, value in call.args.items() if name not in _NOT_THE_REQUEST}
    fingerprint = request_hash("CALL", call.tool.name, "application/json", arguments)
    record = records.idempotency_lookup(principal.workspace_id, whose, key)
    if record is not None:
        if record.request_hash != fingerprint:
            raise IdempotencyConflict(
                detail=f"idempotency_key {key!r} was first used with other arguments of {call.tool.name}.",
                extra={"idempotency_key": key}, next_call=f"{call.tool.name} again under a new idempotency_key")
        return ToolOutput(json.loads(bytes(record.body))), True
    output = write()
    records.idempotency_save(principal.workspace_id, whose, key, IdempotencyRecord(
        request_hash=fingerprint, status=200, headers={}, body=json.dumps(output.data).encode()))
    return output, False
