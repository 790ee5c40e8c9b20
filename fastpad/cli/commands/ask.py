"""``fp ask "QUESTION"``: an answer with block-level citations (``POST /v1/ask``).

Until the deployment has a model provider, the server refuses with
``provider-not-configured`` and this prints that problem (exit 1).
"""

from __future__ import annotations

import click

from fastpad.cli.options import FpCommand
from fastpad.cli.output import Output


@click.command(cls=FpCommand)
@click.argument("question", nargs=-1, required=True)
def ask(question: tuple[str, ...]) -> None:
    """Ask a question; the answer cites the blocks it rests on."""
    from fastpad.cli.client import connect

    out = Output()
    answer = connect().request("POST", "/v1/ask", json={"question": " ".join(question)}).json()
    out.result(answer, lambda a: out.text(str(a.get("answer", a))))
