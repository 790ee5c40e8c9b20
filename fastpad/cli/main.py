"""The ``fp`` group, and the one place errors become exit codes and messages."""

from __future__ import annotations

import json
import sys
from typing import Sequence

import click

from fastpad import __version__
from fastpad.cli import exit_codes
from fastpad.cli.output import json_mode
from fastpad.errors import FastpadError


def _print_exit_codes(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    for code, meaning in exit_codes.MEANINGS.items():
        click.echo(f"{code}\t{meaning}")
    ctx.exit(0)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fp")
@click.option("--exit-codes", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_exit_codes, help="Print the exit-code contract and exit.")
def cli() -> None:
    """Fastpad: notes for people who work with AI agents."""


def _register() -> None:
    from fastpad.cli.commands import demo, init, serve, token

    cli.add_command(init.init)
    cli.add_command(serve.serve)
    cli.add_command(token.token)
    cli.add_command(demo.demo)


_register()


def report(error: FastpadError, code: int) -> None:
    """An error on stderr: a JSON object in ``--json`` mode, one readable line otherwise."""
    if json_mode():
        payload = {
            "error": error.slug,
            "title": error.title,
            "detail": str(error),
            "exit_code": code,
            "field_errors": [fe.as_dict() for fe in error.field_errors],
            **{k: v for k, v in error.extra.items() if k not in {"error", "exit_code"}},
        }
        sys.stderr.write(json.dumps(payload, default=str) + "\n")
        return
    click.echo(f"fp: {error.slug}: {error}", err=True)
    for fe in error.field_errors:
        click.echo(f"  {fe.field}: {fe.message}", err=True)
    if error.next_call:
        click.echo(f"  next: {error.next_call}", err=True)


def main(argv: Sequence[str] | None = None) -> None:
    try:
        result = cli.main(args=list(argv) if argv is not None else None, prog_name="fp", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        exc.show()
        sys.exit(exit_codes.USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code if exc.exit_code != 1 else exit_codes.UNCLASSIFIED)
    except click.Abort:
        click.echo("Aborted!", err=True)
        sys.exit(exit_codes.UNCLASSIFIED)
    except FastpadError as exc:
        code = exit_codes.for_error(exc)
        report(exc, code)
        sys.exit(code)
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(result if isinstance(result, int) else exit_codes.OK)
