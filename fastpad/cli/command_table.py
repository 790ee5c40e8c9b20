"""The command table as data: what ``fp commands --json`` prints, and ``--help`` in a JSON mode.

Built from the click commands themselves, so it cannot drift from what the
parser accepts.
"""

from __future__ import annotations

from typing import Any

import click

from fastpad.cli.options import GLOBAL_OPTION_NAMES


def _param(param: click.Parameter) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": param.name, "required": param.required, "type": param.type.name}
    if isinstance(param, click.Option):
        entry["flags"] = [*param.opts, *param.secondary_opts]
        entry["is_flag"] = param.is_flag
        entry["help"] = param.help or ""
        if isinstance(param.default, (str, int, float)) and not param.is_flag:
            entry["default"] = param.default
    else:
        entry["kind"] = "argument"
        entry["variadic"] = param.nargs == -1
    if isinstance(param.type, click.Choice):
        entry["choices"] = list(param.type.choices)
    return entry


def describe(command: click.Command, path: str) -> dict[str, Any]:
    """One command: its usage, summary, arguments and own options (the global ones are listed once, apart)."""
    ctx = click.Context(command, info_name=path.rsplit(" ", 1)[-1])
    own = [p for p in command.params
           if not (isinstance(p, click.Option) and set(p.opts) & {*GLOBAL_OPTION_NAMES, "--help"})]
    entry: dict[str, Any] = {
        "name": path.removeprefix("fp ").strip() or "fp",
        "usage": f"{path} {' '.join(command.collect_usage_pieces(ctx))}".strip(),
        "summary": command.get_short_help_str(limit=200),
        "help": (command.help or "").strip(),
        "arguments": [_param(p) for p in own if isinstance(p, click.Argument)],
        "options": [_param(p) for p in own if isinstance(p, click.Option)],
    }
    if isinstance(command, click.Group):
        entry["subcommands"] = [describe(sub, f"{path} {name}")
                                for name in command.list_commands(ctx)
                                if (sub := command.get_command(ctx, name)) is not None]
    return entry


def command_table(root: click.Group) -> dict[str, Any]:
    from fastpad.cli import exit_codes

    ctx = click.Context(root, info_name="fp")
    globals_ = [_param(p) for p in root.params if isinstance(p, click.Option) and set(p.opts) & set(GLOBAL_OPTION_NAMES)]
    return {
        "commands": [describe(command, f"fp {name}") for name in root.list_commands(ctx)
                     if (command := root.get_command(ctx, name)) is not None],
        "global_options": globals_,
        "exit_codes": [{"code": code, "means": meaning} for code, meaning in exit_codes.MEANINGS.items()],
    }
