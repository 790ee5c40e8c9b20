"""``fp init``: create a deployment with one workspace and its owner."""

from __future__ import annotations

import os
from pathlib import Path

import click

from fastpad.cli.commands.common import data_dir_option, redact_url
from fastpad.cli.output import Output, json_option


@click.command()
@data_dir_option
@click.option("--database-url", default=None, metavar="URL",
              help="postgresql://… for PostgreSQL; default: an SQLite file in the data directory.")
@click.option("--owner-email", default="owner@localhost", show_default=True,
              help="The workspace owner's sign-in email. Password: $FASTPAD_OWNER_PASSWORD if set.")
@json_option
def init(data_dir: Path, database_url: str | None, owner_email: str, as_json: bool) -> None:
    """Create a deployment: one workspace and its owner."""
    from fastpad.deployment import init_deployment

    out = Output(as_json)
    result = init_deployment(
        data_dir,
        database_url=database_url,
        owner_email=owner_email,
        owner_password=os.environ.get("FASTPAD_OWNER_PASSWORD") or None,
    )
    payload = {
        "data_dir": str(data_dir.resolve()),
        "workspace_id": result.workspace_id,
        "owner_id": result.owner_id,
        "owner_email": result.owner_email,
        "database_url": redact_url(result.database_url),
        # Set only when init generated the password: shown this once, never stored in plaintext.
        "owner_password": result.owner_password,
    }
    if as_json:
        out.data(payload)
    else:
        out.say(f"Initialised {payload['data_dir']}")
        out.say(f"  workspace  {result.workspace_id}")
        out.say(f"  owner      {result.owner_email}")
        if result.owner_password:
            out.say(f"  password   {result.owner_password}   (generated; shown once)")
        out.say(f"  database   {payload['database_url']}")
