"""``fp init``: create a deployment with one workspace and its owner."""

from __future__ import annotations

import os
from pathlib import Path

import click

from fastpad.cli.commands.common import data_dir_option, redact_url
from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output


@click.command(cls=FpCommand)
@data_dir_option
@click.option("--database-url", default=None, metavar="URL",
              help="postgresql://… for PostgreSQL; default: an SQLite file in the data directory.")
@click.option("--owner-email", default="owner@localhost", show_default=True,
              help="The workspace owner's sign-in email. Password: $FASTPAD_OWNER_PASSWORD if set.")
def init(data_dir: Path, database_url: str | None, owner_email: str) -> None:
    """Create a deployment: one workspace and its owner."""
    from fastpad.deployment import CONFIG_NAME, init_deployment

    out = Output()
    if settings.dry_run:
        exists = (data_dir / CONFIG_NAME).exists()
        plan = {"data_dir": str(data_dir.resolve()), "database_url": redact_url(database_url or "sqlite:fastpad.db"),
                "owner_email": owner_email, "would_create": not exists}
        out.result(plan, lambda p: out.text(
            f"Would initialise {p['data_dir']} ({p['database_url']}, owner {p['owner_email']})" if p["would_create"]
            else f"{p['data_dir']} already holds a deployment; init would refuse"))
        return
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
    out.result(payload, lambda _: _show(out, payload, result.owner_password))


def _show(out: Output, payload: dict, password: str | None) -> None:
    lines = [f"Initialised {payload['data_dir']}", f"  workspace  {payload['workspace_id']}",
             f"  owner      {payload['owner_email']}"]
    if password:
        lines.append(f"  password   {password}   (generated; shown once)")
    lines.append(f"  database   {payload['database_url']}")
    out.text("\n".join(lines))
