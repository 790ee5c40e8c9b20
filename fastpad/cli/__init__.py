"""``fp``: the command line — the client commands that talk to a server, and the operator commands."""

from fastpad.cli.main import cli, main

__all__ = ["cli", "main"]
