"""``fp watch``: the workspace change feed as a pipe (``GET /v1/changes``, long-polled).

Each change is one line — a JSON object with ``--json``/``--ndjson`` — written
and flushed as it commits. By default the feed starts now; ``--from-start``
replays it from the beginning and ``--cursor`` resumes after a change a
previous run printed. ``--once`` prints what is there and stops.
"""

from __future__ import annotations

from typing import Any

import click

from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output

WAIT_MS = 25_000  # the server's long poll; the request's own timeout is longer
PAGE = 200


@click.command(cls=FpCommand)
@click.option("--cursor", default=None, metavar="CURSOR", help="Resume after this change (a cursor printed before).")
@click.option("--from-start", is_flag=True, help="Replay the whole feed first.")
@click.option("--once", is_flag=True, help="Print what is there now, then stop.")
def watch(cursor: str | None, from_start: bool, once: bool) -> None:
    """Print the workspace's changes as they happen, one per line."""
    from fastpad.cli.client import connect

    api = connect()
    out = Output()
    if cursor is None and not from_start:
        cursor = _skip_history(api)
    while True:
        params: dict[str, Any] = {"limit": PAGE, "wait_ms": 0 if once else WAIT_MS}
        if cursor:
            params["cursor"] = cursor
        page = api.request("GET", "/v1/changes", params=params,
                           timeout=settings.timeout + (0 if once else WAIT_MS / 1000)).json()
        for change in page["items"]:
            out.line(change if settings.machine else _describe(change))
        cursor = page["next_cursor"]
        if once and not page["has_more"]:
            return


def _skip_history(api: Any) -> str:
    """The cursor at the end of the feed: what comes after it is new."""
    return api.request("GET", "/v1/changes", params={"start": "latest"}).json()["next_cursor"]


def _describe(change: dict[str, Any]) -> str:
    actor = change.get("actor") or {}
    who = f"{actor.get('kind')}:{actor.get('id')}" if actor else "-"
    blocks = change.get("blocks_touched")
    touched = f" ({blocks} block{'s' if blocks != 1 else ''})" if blocks else ""
    return f"{change['at']}  {change['kind']:<10} {change.get('note_id') or '-'}  {who}{touched}  {change['cursor']}"
