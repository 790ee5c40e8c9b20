"""``fp commands``: the command table — every command, its arguments and options, the exit codes."""

from __future__ import annotations

from typing import Any

import click

from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output


@click.command(cls=FpCommand)
def commands() -> None:
    """The command table; as data with --json (--ndjson: one command per line)."""
    from fastpad.cli.command_table import command_table
    from fastpad.cli.main import cli

    out = Output()
    table = command_table(cli)

    def show(_: Any) -> None:
        out.table(["command", "does"], ([c["usage"], c["summary"]] for c in table["commands"]))

    out.result(table["commands"] if settings.ndjson else table, show)
