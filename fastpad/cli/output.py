"""What a command prints: data on stdout, prose on stderr in ``--json`` mode.

Every command that takes ``--json`` routes its output through :class:`Output`
so prose never reaches stdout in JSON mode; rich formatting is used only
when stdout is a terminal.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable

import click
from rich.console import Console
from rich.table import Table

_state = {"json": False}


def json_mode() -> bool:
    return _state["json"]


def _remember_json(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        _state["json"] = True
    return value


json_option = click.option(
    "--json", "as_json", is_flag=True, callback=_remember_json, is_eager=True,
    help="Machine-readable output on stdout; no prose there.",
)


class Output:
    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.out = Console(highlight=False, soft_wrap=True)
        self.err = Console(stderr=True, highlight=False, soft_wrap=True)

    def data(self, payload: Any) -> None:
        """The command's result. In JSON mode, one JSON document on stdout."""
        sys.stdout.write(json.dumps(payload, indent=2, default=str) + "\n")
        sys.stdout.flush()

    def say(self, text: str) -> None:
        """Prose for a person: stdout normally, stderr in JSON mode."""
        (self.err if self.as_json else self.out).print(text)

    def table(self, columns: list[str], rows: Iterable[list[Any]], *, title: str | None = None) -> None:
        rows = list(rows)
        if self.out.is_terminal:
            table = Table(*columns, title=title)
            for row in rows:
                table.add_row(*("" if cell is None else str(cell) for cell in row))
            self.out.print(table)
        else:  # plain tab-separated lines for pipes
            sys.stdout.write("\t".join(columns) + "\n")
            for row in rows:
                sys.stdout.write("\t".join("" if cell is None else str(cell) for cell in row) + "\n")
