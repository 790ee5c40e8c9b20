"""``fp user set-password``: the operator resets a member's password (the sign-in page points here);
``fp user invite``: the operator invites someone by email and passes the printed link on.

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
from fastpad.cli.commands.serve import base_url_for
from fastpad.cli.options import FpGroup, settings
from fastpad.cli.output import Output
from fastpad.errors import NotFound
from fastpad.security.invitations import INVITABLE_ROLES


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


@user.command("invite")
@data_dir_option
@click.argument("email")
@click.option("--role", type=click.Choice(INVITABLE_ROLES), default="member", show_default=True,
              help="The role the invitee joins with.")
@click.option("--base-url", default=None, metavar="URL",
              help="The server's public URL the link starts with. Default: fastpad.json's base_url, else "
                   f"{base_url_for('127.0.0.1', 8765)} (fp serve's default).")
def invite(data_dir: Path, email: str, role: str, base_url: str | None) -> None:
    """Invite EMAIL to the deployment's workspace: prints a single-use link, valid 7 days (mailed too when
    fastpad.json configures "mail")."""
    from fastpad.deployment import open_deployment

    out = Output()
    deployment = open_deployment(data_dir)
    try:
        base = base_url or deployment.config.get("base_url") or base_url_for("127.0.0.1", 8765)
        if settings.dry_run:
            out.result({"email": email, "role": role, "would_invite": True},
                       lambda p: out.text(f"Would invite {p['email']} as {p['role']}"))
            return
        issued = deployment.invitations.invite(deployment.operator_principal(), email, role=role, base_url=base)
    finally:
        deployment.close()
    out.result(issued.as_dict(), lambda p: out.text(
        f"Invited {p['email']} as {p['role']} (valid until {p['expires_at']}). Pass on this link; it works once "
        f"and is shown only now:\n{p['link']}"
        + ("\n(mailed)" if p["mailed"] else f"\n(not mailed: {p['mail_error']})" if p["mail_error"] else "")))


def _read_password() -> str:
    if sys.stdin.isatty():
        return click.prompt("New password", hide_input=True, confirmation_prompt=True, err=True)
    return sys.stdin.readline().rstrip("\r\n")
