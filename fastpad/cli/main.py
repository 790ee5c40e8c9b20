"""The ``fp`` group, and the one place errors become exit codes and messages.

Commands are imported only when they run (``LazyGroup``): ``fp --version``
and an offline ``fp capture`` load click and little else (bench/cli.py
measures them). Heavy imports — fastapi, loro, onnxruntime, numpy, tiktoken —
happen inside the commands that need them.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any, Sequence

import click

from fastpad import __version__
from fastpad.cli import exit_codes
from fastpad.cli.options import FpGroup, preset_from_argv, settings
from fastpad.cli.output import Output
from fastpad.errors import FastpadError

# The command table, in the order `fp --help` and `fp commands` list it: name -> "module:attribute".
COMMANDS: dict[str, str] = {
    "capture": "fastpad.cli.commands.capture:capture",
    "add": "fastpad.cli.commands.capture:add",
    "ask": "fastpad.cli.commands.ask:ask",
    "query": "fastpad.cli.commands.query:query",
    "watch": "fastpad.cli.commands.watch:watch",
    "turns": "fastpad.cli.commands.turns:turns",
    "diff": "fastpad.cli.commands.turns:diff",
    "turn-abandon": "fastpad.cli.commands.turns:turn_abandon",
    "accept": "fastpad.cli.commands.turns:accept",
    "pull": "fastpad.cli.commands.mirror:pull",
    "push": "fastpad.cli.commands.mirror:push",
    "agents": "fastpad.cli.commands.agents:agents",
    "commands": "fastpad.cli.commands.command_list:commands",
    "login": "fastpad.cli.commands.login:login",
    "import": "fastpad.cli.commands.importing:import_",
    "mcp": "fastpad.cli.commands.mcp:mcp",
    # operator commands: act on a data directory, no server needed
    "init": "fastpad.cli.commands.init:init",
    "serve": "fastpad.cli.commands.serve:serve",
    "token": "fastpad.cli.commands.token:token",
    "user": "fastpad.cli.commands.user:user",
    "purge": "fastpad.cli.commands.purge:purge",
    "demo": "fastpad.cli.commands.demo:demo",
}


class LazyGroup(FpGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attribute = target.split(":")
        return getattr(importlib.import_module(module), attribute)


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    out = Output()
    out.result({"version": __version__}, lambda v: out.text(f"fp, version {v['version']}"))
    ctx.exit(0)


def _print_exit_codes(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    out = Output()
    table = [{"code": code, "means": meaning} for code, meaning in exit_codes.MEANINGS.items()]
    out.result(table, lambda rows: out.text("\n".join(f"{r['code']}\t{r['means']}" for r in rows)))
    ctx.exit(0)


@click.group(cls=LazyGroup)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Print the version and exit.")
@click.option("--exit-codes", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_exit_codes, help="Print the exit-code contract and exit.")
def cli() -> None:
    """Fastpad: notes for people who work with AI agents."""


def report(error: FastpadError, code: int) -> None:
    """An error on stderr: the problem document in a JSON mode, one readable line otherwise."""
    if settings.machine:
        document = getattr(error, "document", None)
        payload: dict[str, Any] = dict(document) if isinstance(document, dict) else {
            "title": error.title,
            "detail": str(error),
            "retryable": bool(error.retryable),
            "field_errors": [fe.as_dict() for fe in error.field_errors],
            **({"next": error.next_call} if error.next_call else {}),
            **{k: v for k, v in error.extra.items() if k not in {"error", "exit_code"}},
        }
        payload["error"] = error.slug
        payload["exit_code"] = code
        sys.stderr.write(json.dumps(payload, default=str) + "\n")
        return
    click.echo(f"fp: {error.slug}: {error}", err=True)
    for fe in error.field_errors:
        click.echo(f"  {fe.field}: {fe.message}", err=True)
    if error.next_call:
        click.echo(f"  next: {error.next_call}", err=True)


def _usage(error: click.UsageError) -> None:
    if settings.machine:
        payload = {"error": "usage", "title": "Usage error", "detail": error.format_message(),
                   "exit_code": exit_codes.USAGE}
        sys.stderr.write(json.dumps(payload) + "\n")
    else:
        error.show()


def _run(args: list[str]) -> int:
    try:
        result = cli.main(args=args, prog_name="fp", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        _usage(exc)
        return exit_codes.USAGE
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code if exc.exit_code != 1 else exit_codes.UNCLASSIFIED
    except click.Abort:
        click.echo("Aborted!", err=True)
        return exit_codes.UNCLASSIFIED
    except FastpadError as exc:
        code = exit_codes.for_error(exc)
        report(exc, code)
        return code
    except KeyboardInterrupt:
        return 130
    return result if isinstance(result, int) else exit_codes.OK


def main(argv: Sequence[str] | None = None) -> None:
    args = list(argv) if argv is not None else sys.argv[1:]
    preset_from_argv(args)
    code = _run(args)
    if code == exit_codes.OK:
        from fastpad.cli.delivery import drain_after_success

        try:
            drain_after_success()
        except FastpadError:
            pass  # the command succeeded; whatever stayed in the spool is sent next time
    sys.exit(code)
