"""``fp query TEXT``: text search, one page (``POST /v1/search``); ``--ndjson`` streams one hit per line.

Structured filters are MCP-only (``fastpad_query``).
"""

from __future__ import annotations

from typing import Any

import click

from fastpad.cli.options import FpCommand
from fastpad.cli.output import Output


@click.command(cls=FpCommand)
@click.argument("text", nargs=-1, required=True)
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True, help="Hits on the page.")
@click.option("--archived", is_flag=True, help="Include archived notes.")
def query(text: tuple[str, ...], limit: int, archived: bool) -> None:
    """Search your notes for TEXT: one page of hits, best first."""
    from fastpad.cli.client import connect

    out = Output()
    results = connect().request("POST", "/v1/search", json={"q": " ".join(text), "limit": limit,
                                                            "includeArchived": archived}).json()

    def show(hits: list[dict[str, Any]]) -> None:
        if not hits:
            out.say("No matches.")
            return
        for hit in hits:
            out.text(f"{hit['rank']:>2}. {hit['title'] or '(untitled)'}  {hit['note_id']}")
            if hit.get("snippet"):
                out.text(f"    {' '.join(hit['snippet'].split())}")

    out.result(results["hits"], show)
