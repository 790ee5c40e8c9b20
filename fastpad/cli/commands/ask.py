"""``fp ask "QUESTION"``: an answer with block-level citations (``POST /v1/ask``).

Prints the answer, whose ``[n]`` marks cite the blocks it rests on, then each
citation: its note's title, ``NOTE_ID#BLOCK_ID`` (the block's ``{#BLOCK_ID}``
anchor in the note's Markdown, as ``fp pull`` writes it) and the API reference
that returns the block with the same credential. ``--json`` prints the whole
answer: text, citations, ``dropped_citations`` and the provider's usage.
Without a model provider on the server this prints ``provider-not-configured``
(exit 1); a token past its ``--ask-cap`` gets ``ask-cap-reached`` (exit 8).
"""

from __future__ import annotations

from typing import Any

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

    def show(a: dict[str, Any]) -> None:
        out.text(a["answer"])
        if a["citations"]:
            out.text("")
            for c in a["citations"]:
                out.text(f"[{c['n']}] {c['title'] or '(untitled)'}  {c['anchor']}  {c['ref']}")

    out.result(answer, show)
