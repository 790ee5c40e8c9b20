"""Sending spooled captures: what ``fp capture``, ``--flush`` and every successful command share.

"The next successful command drains it" (spec › CLI › Capture never fails):
:func:`drain_after_success` runs once a command has finished and the server
answered it with this credential. It never waits for another drainer and
never changes the command's exit code.
"""

from __future__ import annotations

from typing import Any

from fastpad.cli.client import Api, RemoteProblem, ServerUnreachable, current
from fastpad.cli.output import Output
from fastpad.cli.profiles import Target, state_dir
from fastpad.cli.spool import DrainReport, Spool
from fastpad.errors import FastpadError, Unauthenticated

CAPTURE_PATH = "/v1/capture"


def spool_for(target: Target) -> Spool:
    return Spool(state_dir() / "spool" / target.spool_key)


def retry_later(error: FastpadError) -> bool:
    """Whether a capture that met ``error`` stays pending (True) or has failed for good."""
    if isinstance(error, (ServerUnreachable, Unauthenticated)):
        return True  # no network, or no credential yet: `fp login` and the next command deliver it
    if isinstance(error, RemoteProblem):
        # A credential the server did not take (401/403) can be replaced; 408, 429 and 5xx pass.
        return error.status in (401, 403, 408, 429) or error.status >= 500
    return False


def deliver(api: Api, *, wait_s: float = 0.0) -> DrainReport:
    def send(body: dict[str, Any]) -> dict[str, Any]:
        return api.request("POST", CAPTURE_PATH, json=body).json()

    return spool_for(api.target).drain(send, retry_later=retry_later, wait_s=wait_s)


def drain_after_success() -> None:
    api = current()
    if api is None or not api.answered:
        return
    spool = spool_for(api.target)
    if not spool.pending_count():
        return
    report = deliver(api)
    if report.delivered:
        Output().note(f"fp: delivered {len(report.delivered)} spooled capture(s)"
                      + (f"; {report.pending} still pending" if report.pending else ""))
    for entry in report.failed:
        Output().note(f"fp: the server refused spooled capture {entry.name}: {entry.data['error']['detail']}")
