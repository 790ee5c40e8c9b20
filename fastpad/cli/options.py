"""The flags every ``fp`` command takes, and the command classes that add them.

``--json``, ``--ndjson``, ``--quiet``, ``--dry-run``, ``--profile`` and
``--timeout`` work on every command (spec › CLI › Commands), before or after
the command name: each command class adds them, and their values land in one
process-wide :data:`settings` (a flag given anywhere stays on). ``main`` also
reads the two output flags from the raw arguments before click parses them,
so even a usage error or ``--help`` knows to answer as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import click

DEFAULT_TIMEOUT_S = 30.0


@dataclass
class Settings:
    json: bool = False
    ndjson: bool = False
    quiet: bool = False
    dry_run: bool = False
    profile: str | None = None
    timeout: float = DEFAULT_TIMEOUT_S

    @property
    def machine(self) -> bool:
        """Either JSON mode: stdout carries data only."""
        return self.json or self.ndjson


settings = Settings()


def preset_from_argv(args: Sequence[str]) -> None:
    """The output flags, read before click parses (everything after ``--`` is an argument)."""
    for arg in args:
        if arg == "--":
            break
        if arg == "--json":
            settings.json = True
        elif arg == "--ndjson":
            settings.ndjson = True
        elif arg in ("--quiet", "-q"):
            settings.quiet = True


def _flag(name: str) -> Any:
    def remember(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            setattr(settings, name, True)

    return remember


def _remember_profile(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        settings.profile = value


def _remember_timeout(ctx: click.Context, param: click.Parameter, value: float | None) -> None:
    if value is not None:
        settings.timeout = value


def global_params() -> list[click.Parameter]:
    """Fresh instances of the six global options (a click Parameter belongs to one command)."""
    return [
        click.Option(["--json"], is_flag=True, expose_value=False, is_eager=True, callback=_flag("json"),
                     help="Print one JSON document on stdout; prose and errors go to stderr."),
        click.Option(["--ndjson"], is_flag=True, expose_value=False, is_eager=True, callback=_flag("ndjson"),
                     help="Print one JSON object per line (lists stream item by item)."),
        click.Option(["--quiet", "-q"], is_flag=True, expose_value=False, is_eager=True, callback=_flag("quiet"),
                     help="No prose: only results and errors."),
        click.Option(["--dry-run"], is_flag=True, expose_value=False, callback=_flag("dry_run"),
                     help="Show what would happen; change nothing."),
        click.Option(["--profile"], metavar="NAME", expose_value=False, callback=_remember_profile,
                     help="Which stored login to use (default: $FASTPAD_PROFILE, else the default profile)."),
        click.Option(["--timeout"], type=click.FloatRange(0.1, 3600), metavar="SECONDS", expose_value=False,
                     callback=_remember_timeout, help=f"Network timeout (default {DEFAULT_TIMEOUT_S:g})."),
    ]


GLOBAL_OPTION_NAMES = ("--json", "--ndjson", "--quiet", "--dry-run", "--profile", "--timeout")


def _json_help(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    if settings.machine:
        from fastpad.cli.command_table import describe
        from fastpad.cli.output import Output

        Output().result(describe(ctx.command, ctx.command_path))
    else:
        click.echo(ctx.get_help(), color=ctx.color)
    ctx.exit(0)


class _GlobalOptions:
    """Mixin: the global options on every command, and ``--help`` as data in JSON mode."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["params"] = [*(kwargs.get("params") or []), *global_params()]
        kwargs.setdefault("context_settings", {}).setdefault("help_option_names", ["-h", "--help"])
        super().__init__(*args, **kwargs)

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        names = self.get_help_option_names(ctx)
        if not names or not self.add_help_option:
            return None
        if self._help_option is None:  # cached: click orders callbacks by object identity
            self._help_option = click.Option(names, is_flag=True, is_eager=True, expose_value=False,
                                             callback=_json_help, help="Show this help (as JSON with --json) and exit.")
        return self._help_option


class FpCommand(_GlobalOptions, click.Command):
    pass


class FpGroup(_GlobalOptions, click.Group):
    command_class = FpCommand

    # Subgroups made with @group.group() are FpGroups too.
    group_class = type

