"""``fp demo``: what ``make run`` runs — initialise, seed, mint a token, print how to connect, serve."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fastpad.cli.commands.common import data_dir_option
from fastpad.cli.commands.serve import base_url_for, run_server
from fastpad.cli.demo_content import NOTES
from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output
from fastpad.security.scopes import AGENT_DEFAULT_SCOPES

if TYPE_CHECKING:
    from fastpad.deployment import Deployment

OWNER_EMAIL = "owner@localhost"
AGENT_SCOPES = list(AGENT_DEFAULT_SCOPES)


@click.command(cls=FpCommand)
@data_dir_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option("--base-url", default=None, metavar="URL")
def demo(data_dir: Path, host: str, port: int, base_url: str | None) -> None:
    """Initialise DATA_DIR if needed, seed a demo workspace, mint an agent token, then serve."""
    from fastpad.deployment import init_deployment, open_deployment

    out = Output()
    base = (base_url or base_url_for(host, port)).rstrip("/")
    if settings.dry_run:
        plan = {"data_dir": str(data_dir.resolve()), "initialise": not (data_dir / "fastpad.json").exists(),
                "base_url": base, "agent_scopes": AGENT_SCOPES}
        out.result(plan, lambda p: out.text(
            f"Would {'initialise, ' if p['initialise'] else ''}seed and serve {p['data_dir']} at {p['base_url']}"))
        return
    password = None
    if not (data_dir / "fastpad.json").exists():
        password = init_deployment(data_dir, owner_email=OWNER_EMAIL).owner_password
    deployment = open_deployment(data_dir)
    try:
        workspace_id = deployment.workspace_id
        owner_email = deployment.config.get("owner_email", OWNER_EMAIL)
        seeded = _seed(deployment)
        token, info = deployment.tokens.create(
            workspace_id, scopes=AGENT_SCOPES, expires_in=timedelta(days=30), label="make run (demo)"
        )
    finally:
        deployment.close()

    mcp_config = {
        "mcpServers": {
            "fastpad": {"url": f"{base}/mcp", "headers": {"Authorization": f"Bearer {token}"}},
        }
    }
    stdio_config = {
        "mcpServers": {
            "fastpad": {"command": "fp", "args": ["mcp"], "env": {"FASTPAD_URL": base, "FASTPAD_TOKEN": token}},
        }
    }
    payload = {
        "base_url": base, "data_dir": str(data_dir.resolve()), "workspace_id": workspace_id,
        "seeded_notes": seeded, "owner_email": owner_email, "owner_password": password,
        "agent_token": token, "agent_scopes": AGENT_SCOPES, "mcp_config": mcp_config, "mcp_stdio_config": stdio_config,
    }
    out.result(payload, lambda _: out.text("\n".join([
        "",
        f"Fastpad is starting at {base}",
        f"  open        {base}/ in a browser to write",
        f"  data        {data_dir.resolve()}",
        f"  workspace   {workspace_id}" + (f"  ({seeded} demo notes seeded)" if seeded else ""),
        *([f"  sign in     {owner_email} / {password}   (generated; shown once)"] if password else []),
        "",
        f"Agent token (scopes {', '.join(AGENT_SCOPES)}; expires in 30 days):",
        f"FASTPAD_TOKEN={token}",
        "",
        "Try it:",
        f"  curl -H 'Authorization: Bearer {token}' {base}/v1/notes",
        "",
        "MCP client config (HTTP):",
        json.dumps(mcp_config, indent=2),
        "MCP client config (stdio):",
        json.dumps(stdio_config, indent=2),
        "",
        "Press Ctrl+C to stop.",
    ])))
    run_server(data_dir, host=host, port=port, base_url=base, log_level="warning")


def _seed(deployment: Deployment) -> int:
    """Seed the demo notes once, into an empty workspace, as the owner typing them."""
    owner = deployment.operator_principal()
    if deployment.notes.list(owner, limit=1, include_archived=True, include_trashed=True).items:
        return 0
    for markdown in NOTES:
        deployment.notes.create(owner, markdown=markdown)
    return len(NOTES)
