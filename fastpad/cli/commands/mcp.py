"""``fp mcp``: the local stdio MCP bridge for clients that launch a command
(``command: "fp"``, ``args: ["mcp"]``), and ``fp mcp --check``.

It refuses to run at an interactive terminal: stdio MCP is for a client to speak, and
a person typing at it would only see it wait. ``--check`` verifies the configured
credential (``FASTPAD_URL``/``FASTPAD_TOKEN``, or the stored profile) against the
server's ``/mcp`` and prints what it reaches: identity, scopes, and tools.

Both act as an agent: a person's credential is exchanged, on the first run, for an agent
token delegated from it (``fastpad/cli/broker.py``).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from fastpad.cli.options import FpCommand
from fastpad.cli.output import Output


@click.command(cls=FpCommand)
@click.option("--check", is_flag=True, help="Verify the credential and print what it reaches, then exit.")
def mcp(check: bool) -> None:
    """Speak MCP over stdio, bridged to your Fastpad server with your stored credential."""
    import anyio

    from fastpad.cli.broker import agent_target
    from fastpad.cli.profiles import Profiles
    from fastpad.mcp import bridge

    if not check and sys.stdin.isatty():
        raise click.UsageError(
            "fp mcp speaks MCP over stdio for an MCP client to launch (command: fp, args: [mcp]); "
            "it does not run at a prompt. Run fp mcp --check to verify your credential."
        )
    profiles = Profiles()
    target = agent_target(profiles, profiles.target())
    if check:
        out = Output()
        out.result(anyio.run(bridge.check, target), lambda found: _show(out, found))
        return
    anyio.run(bridge.serve_stdio, target)


def _show(out: Output, found: dict[str, Any]) -> None:
    identity = found.get("identity") or {}
    out.text(f"MCP endpoint {found['endpoint']} answers, with the credential from {found['credential']}.")
    out.text(f"  acting as: {identity.get('kind')} {identity.get('principal_id')} (token {identity.get('token_id')})")
    out.text(f"  scopes:    {', '.join(found.get('scopes') or []) or '(none)'}")
    out.text(f"  proposes:  {found.get('writable')}")
    out.text(f"  tools:     {', '.join(found.get('tools') or [])}")
