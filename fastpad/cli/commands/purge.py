"""``fp purge``: run the retention pass now (``fp serve`` also runs it every hour).

Removes, in every workspace of the deployment, the notes that have sat in the trash past the retention window
(``trash_retention_days`` in fastpad.json, 30 by default) and the idempotency
records past their 24 hours. For a cron job, or a deployment whose server is
not running.
"""

from __future__ import annotations

from pathlib import Path

import click

from fastpad.cli.commands.common import data_dir_option
from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output


@click.command(cls=FpCommand)
@data_dir_option
def purge(data_dir: Path) -> None:
    """Purge the expired trash and idempotency records now."""
    from fastpad.deployment import open_deployment

    out = Output()
    deployment = open_deployment(data_dir)
    try:
        if settings.dry_run:
            plan = {"retention_days": deployment.trash.retention.days, "would_purge": True}
            out.result(plan, lambda p: out.text(f"Would purge notes trashed more than {p['retention_days']} days ago"))
            return
        report = deployment.trash.purge_everywhere()
    finally:
        deployment.close()
    out.result(report.as_dict(), lambda r: out.text(
        f"Purged {len(r['purged'])} note(s) trashed before {r['cutoff']} and "
        f"{r['idempotency_records']} expired idempotency record(s) in {r['workspaces']} workspace(s)"))
