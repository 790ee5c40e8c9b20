"""``fp token create|list|revoke``: operator commands for API tokens.

``create`` mints an agent token by default; with ``--person EMAIL`` a CLI
credential held by that person (its writes are ``human_typed``). The
plaintext is printed once and stored only as a hash.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from fastpad.cli.commands.common import data_dir_option
from fastpad.cli.durations import Duration
from fastpad.cli.options import FpGroup, settings
from fastpad.cli.output import Output
from fastpad.errors import FieldError, ValidationFailed


def _csv(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


@click.group(cls=FpGroup)
def token() -> None:
    """Mint, list and revoke API tokens."""


@token.command("create")
@data_dir_option
@click.option("--scopes", required=True, metavar="S1,S2", help="Comma-separated scopes, e.g. notes:read,search:read.")
@click.option("--notes", "note_ids", default=None, metavar="ID,…", help="Limit the token to these notes (resolved now).")
@click.option("--expires", default="30d", show_default=True, type=Duration(), help="Lifetime: 30m, 12h, 7d, 4w, 1y (max 365d).")
@click.option("--auto-apply", is_flag=True, help="Let the token's edits land without review (they stay marked unreviewed).")
@click.option("--person", "person_email", default=None, metavar="EMAIL", help="A CLI credential held by this person, not an agent token.")
@click.option("--label", default="", help="A name to recognise the token by in `fp token list`.")
@click.option("--rate-limit", type=click.IntRange(1, 100_000), default=None, metavar="N",
              help="Requests per minute (default 120 for an agent; a person's tokens share 1,200).")
@click.option("--ask-cap", type=click.IntRange(1, 10**12), default=None, metavar="N",
              help="Spending cap on questions (fp ask, POST /v1/ask): at most N provider tokens, as the model "
                   "provider reports them in each answer's usage.total_tokens. Once spent, questions are "
                   "refused with ask-cap-reached. Default: no cap.")
def create(
    data_dir: Path,
    scopes: str,
    note_ids: str | None,
    expires: timedelta,
    auto_apply: bool,
    person_email: str | None,
    label: str,
    rate_limit: int | None,
    ask_cap: int | None,
) -> None:
    """Mint a token and print it (shown once)."""
    from fastpad.deployment import open_deployment
    from fastpad.notes.ids import is_ulid
    from fastpad.security.scopes import ordered, parse_scopes

    out = Output()
    notes = _csv(note_ids) if note_ids is not None else None
    bad = [n for n in notes or [] if not is_ulid(n)]
    if bad:
        raise ValidationFailed(
            detail="--notes takes note ULIDs",
            field_errors=[FieldError("--notes", "ulid", f"{n!r} is not a ULID") for n in bad],
        )
    if settings.dry_run:
        plan = {"scopes": ordered(parse_scopes(_csv(scopes))), "note_ids": notes, "expires_in_s": int(expires.total_seconds()),
                "auto_apply": auto_apply, "person_email": person_email, "label": label, "ask_cap": ask_cap,
                "minted": False}
        out.result(plan, lambda p: out.text(f"Would mint a {'person' if person_email else 'agent'} token with "
                                            f"{', '.join(p['scopes'])}"))
        return
    deployment = open_deployment(data_dir)
    try:
        kwargs: dict[str, Any] = dict(
            scopes=_csv(scopes), note_ids=notes, expires_in=expires, auto_apply=auto_apply,
            person_email=person_email, label=label, ask_cap=ask_cap,
        )
        if rate_limit is not None:
            kwargs["rate_limit_per_minute"] = rate_limit
        plaintext, info = deployment.tokens.create(deployment.workspace_id, **kwargs)
    finally:
        deployment.close()
    payload = {"token": plaintext, **token_info(info)}

    def show(_: Any) -> None:  # the token alone on stdout, so TOKEN=$(fp token create …) works; the rest on stderr
        out.text(plaintext)
        out.note(f"id {payload['id']} · scopes {', '.join(payload['scopes'])} · expires {payload['expires_at']}")
        out.note("This token is shown once. Store it now.")

    out.result(payload, show)


@token.command("list")
@data_dir_option
def list_tokens(data_dir: Path) -> None:
    """List tokens (never their secrets)."""
    from fastpad.deployment import open_deployment

    out = Output()
    deployment = open_deployment(data_dir)
    try:
        infos = [token_info(i) for i in deployment.tokens.list(deployment.workspace_id)]
    finally:
        deployment.close()
    out.result(infos, lambda _: out.table(
        ["id", "label", "kind", "prefix", "scopes", "expires", "last used", "revoked"],
        ([i["id"], i["label"], i["kind"], i["prefix"], ",".join(i["scopes"]), i["expires_at"],
          i["last_used_at"] or "never", i["revoked_at"] or ""] for i in infos),
        title="Tokens",
    ))


@token.command("revoke")
@data_dir_option
@click.argument("token_id")
def revoke(data_dir: Path, token_id: str) -> None:
    """Revoke TOKEN_ID and every token delegated from it."""
    from fastpad.deployment import open_deployment
    from fastpad.notes.ids import is_ulid

    out = Output()
    if not is_ulid(token_id):
        raise ValidationFailed(detail="TOKEN_ID is a ULID (see `fp token list`)",
                               field_errors=[FieldError("TOKEN_ID", "ulid", "must be a ULID")])
    deployment = open_deployment(data_dir)
    try:
        if settings.dry_run:
            info = token_info(deployment.tokens.get(deployment.workspace_id, token_id))
            out.result({"would_revoke": token_id, "token": info},
                       lambda _: out.text(f"Would revoke {token_id} ({info['label'] or 'no label'}) and its delegates"))
            return
        result = deployment.tokens.revoke(deployment.workspace_id, token_id)
    finally:
        deployment.close()
    revoked = sorted(result)
    out.result({"revoked": revoked}, lambda _: out.text(
        f"Revoked {', '.join(revoked)}" if revoked else f"{token_id} was already revoked"))


def token_info(info: Any) -> dict[str, Any]:
    """A TokenInfo as JSON-ready data (never the secret)."""
    data = info.as_dict() if hasattr(info, "as_dict") else dict(vars(info))
    for key, value in list(data.items()):
        if hasattr(value, "isoformat"):
            data[key] = value.isoformat()
        elif isinstance(value, (set, frozenset, tuple)):
            data[key] = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    return data
