"""``fp``: the command line. Operator commands (init, serve, token, demo) live here."""

from fastpad.cli.main import cli, main

__all__ = ["cli", "main"]
