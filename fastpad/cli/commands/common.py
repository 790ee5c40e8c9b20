"""Options and helpers the operator commands share."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import click

data_dir_option = click.option(
    "--data-dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The deployment's directory (holds fastpad.json and, by default, the SQLite file).",
)


def redact_url(url: str) -> str:
    """A database URL without its password, safe to print."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
