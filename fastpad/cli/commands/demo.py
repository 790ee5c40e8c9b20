"""``fp demo``: what ``make run`` runs — initialise, seed, keep one agent token, print how to connect, serve.

Everything it prints works as printed: the MCP client configs name this interpreter's own ``fp``
by its absolute path (``make run`` never puts ``.venv/bin`` on anyone's PATH), and the agent
token is the one a previous run minted while it lives, kept in ``DATA_DIR/demo-agent-token``
(mode 0600, beside ``fastpad.json``, which holds the server's secret already).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
DEMO_TOKEN_FILE = "demo-agent-token"
DEMO_TOKEN_LABEL = "make run (demo)"
DEMO_TOKEN_DAYS = 30
# A kept token this close to expiring is replaced, so a printed token never dies mid-session.
RENEW_WITHIN = timedelta(days=1)


@click.command(cls=FpCommand)
@data_dir_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option("--base-url", default=None, metavar="URL")
def demo(data_dir: Path, host: str, port: int, base_url: str | None) -> None:
    """Initialise DATA_DIR if needed, seed a demo workspace, keep one agent token, then serve."""
    from fastpad.deployment import init_deployment, open_deployment

    out = Output()
    data_dir = data_dir.absolute()
    base = (base_url or base_url_for(host, port)).rstrip("/")
    if settings.dry_run:
        plan = {"data_dir": str(data_dir), "initialise": not (data_dir / "fastpad.json").exists(),
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
        token, token_reused = _demo_token(deployment)
    finally:
        deployment.close()

    fp = fp_command()
    payload = {
        "base_url": base, "data_dir": str(data_dir), "workspace_id": workspace_id,
        "seeded_notes": seeded, "owner_email": owner_email, "owner_password": password,
        "reset_password": shlex.join([*fp, "user", "set-password", "--data-dir", str(data_dir), owner_email]),
        "agent_token": token, "agent_token_reused": token_reused, "agent_scopes": AGENT_SCOPES,
        "review_url": f"{base}/inbox", "mcp_configs": mcp_configs(fp, base, token),
    }
    out.result(payload, lambda p: out.text(_render(p)))
    run_server(data_dir, host=host, port=port, base_url=base, log_level="warning")


def fp_command() -> list[str]:
    """How to launch this installation's ``fp`` from anywhere: the ``fp`` script beside this
    interpreter (a venv's or pipx's bin directory) by its absolute path, else this interpreter
    running the package. The path is made absolute, not resolved: a venv's python is a symlink
    whose target knows nothing of the venv."""
    interpreter = os.path.abspath(sys.executable)
    script = os.path.join(os.path.dirname(interpreter), "fp")
    return [script] if os.access(script, os.X_OK) else [interpreter, "-m", "fastpad.cli"]


def mcp_configs(fp: list[str], base: str, token: str) -> dict[str, Any]:
    """The MCP client configs, one per client, each launching ``fp mcp`` with this token.
    Claude Desktop and Cursor read the same ``mcpServers`` shape; VS Code names it ``servers``
    with a ``type``; Claude Code is configured by a command."""
    env = {"FASTPAD_URL": base, "FASTPAD_TOKEN": token}
    stdio = {"command": fp[0], "args": [*fp[1:], "mcp"], "env": env}
    claude_code = ["claude", "mcp", "add", "fastpad", "--scope", "user",
                   *[part for key, value in env.items() for part in ("--env", f"{key}={value}")], "--", *fp, "mcp"]
    return {
        "claude_desktop": {"mcpServers": {"fastpad": stdio}},
        "cursor": {"mcpServers": {"fastpad": stdio}},
        "vscode": {"servers": {"fastpad": {"type": "stdio", **stdio}}},
        "claude_code": shlex.join(claude_code),
        "http": {"mcpServers": {"fastpad": {"url": f"{base}/mcp", "headers": {"Authorization": f"Bearer {token}"}}}},
    }


def _render(p: dict[str, Any]) -> str:
    base, token, configs = p["base_url"], p["agent_token"], p["mcp_configs"]
    sign_in = (f"  sign in     {p['owner_email']} / {p['owner_password']}   (generated; shown this once)"
               if p["owner_password"] else
               f"  sign in     {p['owner_email']} (the password the first run printed)")
    kept = "the one the last run printed" if p["agent_token_reused"] else "new"
    return "\n".join([
        "",
        f"Fastpad is starting at {base}",
        f"  open        {base}/ in a browser: that is the app",
        sign_in,
        f"  forgot it?  {p['reset_password']}",
        f"  data        {p['data_dir']}",
        f"  workspace   {p['workspace_id']}" + (f"  ({p['seeded_notes']} demo notes seeded)" if p["seeded_notes"] else ""),
        "",
        f"Agent token ({kept}; expires in at most {DEMO_TOKEN_DAYS} days; every `make run` reuses it):",
        f"FASTPAD_TOKEN={token}",
        f"  It may read notes, search and follow links ({', '.join(p['agent_scopes'])}), and propose:",
        "  a change or a new note it sends waits for you, and nothing it writes exists until you accept it",
        f"  in the Inbox, {p['review_url']}. It cannot edit, archive or delete a note itself.",
        "",
        "Try it:",
        f"  curl -H 'Authorization: Bearer {token}' {base}/v1/notes",
        f"  curl -H 'Authorization: Bearer {token}' -H 'Content-Type: text/markdown' \\",
        f"       --data-binary '# Proposed by curl' {base}/v1/notes     # 202: a proposal, now in your Inbox",
        "",
        "MCP client config for Claude Desktop (claude_desktop_config.json):",
        json.dumps(configs["claude_desktop"], indent=2),
        "MCP client config for Cursor (~/.cursor/mcp.json):",
        json.dumps(configs["cursor"], indent=2),
        "MCP client config for VS Code (.vscode/mcp.json):",
        json.dumps(configs["vscode"], indent=2),
        "Claude Code (run once):",
        f"  {configs['claude_code']}",
        "Any client that speaks Streamable HTTP:",
        json.dumps(configs["http"], indent=2),
        "",
        "Press Ctrl+C to stop.",
    ])


def _demo_token(deployment: Deployment) -> tuple[str, bool]:
    """The demo agent token: the one kept from an earlier run while it lives (and is not about to
    expire), else a new one, kept for the next run. True when it was kept."""
    from fastpad.errors import Unauthenticated
    from fastpad.store import utcnow

    kept_at = deployment.data_dir / DEMO_TOKEN_FILE
    if kept_at.is_file():
        kept = kept_at.read_text(encoding="utf-8").strip()
        try:
            principal = deployment.tokens.authenticate(kept, workspace_id=deployment.workspace_id)
        except Unauthenticated:
            principal = None  # revoked or expired: mint another below
        if principal is not None:
            info = deployment.tokens.get(deployment.workspace_id, principal.token_id)
            if info.expires_at - utcnow() > RENEW_WITHIN:
                return kept, True
    token, _ = deployment.tokens.create(deployment.workspace_id, scopes=AGENT_SCOPES,
                                        expires_in=timedelta(days=DEMO_TOKEN_DAYS), label=DEMO_TOKEN_LABEL)
    fd = os.open(kept_at, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token, False


def _seed(deployment: Deployment) -> int:
    """Seed the demo notes once, into an empty workspace, as the owner typing them."""
    owner = deployment.operator_principal()
    if deployment.notes.list(owner, limit=1, include_archived=True, include_trashed=True).items:
        return 0
    for markdown in NOTES:
        deployment.notes.create(owner, markdown=markdown)
    return len(NOTES)
