"""``fp user set-password``: the operator resets a member's password (the sign-in page points here).

There is no reset by email: a self-hosted server may send no mail, and whoever can read the
data directory can act as anyone in it already. The new password comes from stdin (its first
line) when stdin is not a terminal, from a hidden prompt asked twice at one, or is generated
with ``--generate`` and printed once.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

import click

from fastpad.cli.commands.common import data_dir_option
from fastpad.cli.options import FpGroup, settings
from fastpad.cli.output import Output
from fastpad.errors import NotFound


@click.group(cls=FpGroup)
def user() -> None:
    """Manage the people of the deployment's workspace."""


@user.command("set-password")
@data_dir_option
@click.argument("email", required=False)
@click.option("--generate", is_flag=True, help="Generate a password and print it once, instead of reading one.")
def set_password(data_dir: Path, email: str | None, generate: bool) -> None:
    """Set EMAIL's password (default: the workspace owner's): from stdin, a prompt, or --generate."""
    from fastpad.deployment import open_deployment
    from fastpad.security.people import normalize_email

    out = Output()
    deployment = open_deployment(data_dir)
    try:
        wanted = normalize_email(email) if email else deployment.config.get("owner_email")
        person = next((p for p in deployment.people.members(deployment.workspace_id) if p.email == wanted), None)
        if person is None:
            raise NotFound(detail=f"{wanted} is not a member of this deployment's workspace",
                           next_call=f"fp user set-password --data-dir {data_dir} EMAIL (a member's email)")
        if settings.dry_run:
            out.result({"email": person.email, "would_set": True},
                       lambda p: out.text(f"Would set the password of {p['email']}"))
            return
        password = secrets.token_urlsafe(12) if generate else _read_password()
        ended = deployment.people.set_password(deployment.workspace_id, person.id, password)
    finally:
        deployment.close()
    payload = {"email": person.email, "password": password if generate else None, "sessions_ended": ended}
    out.result(payload, lambda p: out.text(
        f"Password of {p['email']} set" + (f": {p['password']}   (generated; shown once)" if p["password"] else "")
        + f"; {p['sessions_ended']} web session{'' if p['sessions_ended'] == 1 else 's'} signed out"))


def _read_password() -> str:
    if sys.stdin.isatty():
        return click.prompt("New password", hide_input=True, confirmation_prompt=True, err=True)
    return sys.stdin.readline().rstrip("\r\n")
