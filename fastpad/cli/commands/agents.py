"""``fp agents``: the workspace's agent principals — scopes, autonomy, last seen (``GET /v1/agents``)."""

from __future__ import annotations

from typing import Any

import click

from fastpad.cli.options import FpCommand
from fastpad.cli.output import Output


@click.command(cls=FpCommand)
def agents() -> None:
    """Agent principals: their scopes, autonomy and when they were last seen."""
    from fastpad.cli.client import connect

    out = Output()
    items = connect().request("GET", "/v1/agents").json()["items"]

    def show(rows: list[dict[str, Any]]) -> None:
        if not rows:
            out.say("No agents yet: mint a token with fp token create, or connect one with MCP.")
            return
        out.table(["agent", "name", "scopes", "autonomy", "last seen", "live tokens"],
                  ([a["id"], a["name"], ",".join(a["scopes"]), _autonomy(a["autonomy"]), a["last_seen_at"] or "never",
                    sum(1 for t in a["tokens"] if not t["revoked_at"])] for a in rows))

    out.result(items, show)


def _autonomy(autonomy: dict[str, bool]) -> str:
    granted = [name for name, on in (("accept", autonomy["accept"]), ("auto-apply", autonomy["auto_apply"])) if on]
    return ", ".join(granted) or "propose only"
