"""What a command prints: results on stdout, prose where it cannot get in the way.

* ``--json``: a command's result is one JSON document on stdout.
* ``--ndjson``: one compact JSON object per line; a list streams item by item.
* otherwise: the command renders the result for a person.

Prose (hints, progress, "delivered 3 captures") goes to stdout only in text
mode and to stderr in either JSON mode, and nowhere with ``--quiet``; so in a
JSON mode stdout parses, always. rich is imported only when a terminal will
see its formatting.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Iterable

from fastpad.cli.options import settings


def json_mode() -> bool:
    return settings.machine


def _dumps(payload: Any, *, compact: bool) -> str:
    if compact:
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=str)
    return json.dumps(payload, indent=2, ensure_ascii=False, default=str)


class Output:
    @property
    def machine(self) -> bool:
        return settings.machine

    # ------------------------------------------------------------------ results

    def result(self, payload: Any, render: Callable[[Any], None] | None = None) -> None:
        """The command's result: JSON in a JSON mode (a list is one line per item with
        ``--ndjson``), else ``render(payload)`` for a person."""
        if settings.ndjson:
            for item in payload if isinstance(payload, list) else [payload]:
                self.line(item)
        elif settings.json:
            sys.stdout.write(_dumps(payload, compact=False) + "\n")
            sys.stdout.flush()
        elif render is not None:
            render(payload)

    def line(self, item: Any) -> None:
        """One item of a stream, written and flushed at once (a pipe sees it immediately).
        Both JSON modes stream this way; a person gets ``str(item)``."""
        text = _dumps(item, compact=True) if settings.machine else str(item)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def text(self, text: str) -> None:
        """Plain result text for a person (never in a JSON mode: use :meth:`result`)."""
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()

    def table(self, columns: list[str], rows: Iterable[list[Any]], *, title: str | None = None) -> None:
        """Rows for a person: a rich table on a terminal, tab-separated lines in a pipe."""
        rows = [["" if cell is None else str(cell) for cell in row] for row in rows]
        if sys.stdout.isatty():
            from rich.console import Console
            from rich.table import Table

            table = Table(*columns, title=title)
            for row in rows:
                table.add_row(*row)
            Console(highlight=False, soft_wrap=True).print(table)
            return
        sys.stdout.write("\t".join(columns) + "\n")
        for row in rows:
            sys.stdout.write("\t".join(cell.replace("\t", " ").replace("\n", " ") for cell in row) + "\n")
        sys.stdout.flush()

    # ------------------------------------------------------------------ prose

    def say(self, text: str) -> None:
        """Prose for a person: stdout in text mode, stderr in a JSON mode, nowhere with --quiet."""
        if settings.quiet:
            return
        stream = sys.stderr if settings.machine else sys.stdout
        stream.write(text + "\n")
        stream.flush()

    def note(self, text: str) -> None:
        """A remark beside the result (always stderr), unless --quiet."""
        if not settings.quiet:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def progress(self, total: int, description: str) -> Any:
        """A progress bar on stderr when it is a terminal and prose is wanted; else a no-op."""
        if settings.quiet or settings.machine or not sys.stderr.isatty() or total < 2:
            return _NoProgress()
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                       console=Console(stderr=True), transient=True)
        return _Progress(bar, total, description)


class _NoProgress:
    def __enter__(self) -> "_NoProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def advance(self, step: int = 1) -> None:
        return None


class _Progress:
    def __init__(self, bar: Any, total: int, description: str) -> None:
        self._bar = bar
        self._total = total
        self._description = description

    def __enter__(self) -> "_Progress":
        self._bar.__enter__()
        self._task = self._bar.add_task(self._description, total=self._total)
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.__exit__(*exc)

    def advance(self, step: int = 1) -> None:
        self._bar.advance(self._task, step)
