"""``fp serve``: serve a deployment over HTTP with uvicorn (127.0.0.1 by default)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from fastpad.cli.commands.common import data_dir_option
from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output

LIMITS_ENV = "FASTPAD_LIMITS_JSON"


def base_url_for(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"  # IPv6 literal
    return f"http://{shown}:{port}"


@click.command(cls=FpCommand)
@data_dir_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option("--base-url", default=None, metavar="URL",
              help="Public base URL (error type URIs, metadata). Default: http://HOST:PORT.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@click.option("--limits-json", default=None, hidden=True, envvar=LIMITS_ENV,
              help="Tests only: JSON object overriding fastpad.api.Limits fields.")
def serve(data_dir: Path, host: str, port: int, base_url: str | None, log_level: str, limits_json: str | None) -> None:
    """Serve the deployment in DATA_DIR."""
    if settings.dry_run:
        from fastpad.deployment import CONFIG_NAME

        plan = {"data_dir": str(data_dir.resolve()), "configured": (data_dir / CONFIG_NAME).exists(),
                "bind": f"{host}:{port}", "base_url": base_url or base_url_for(host, port)}
        out = Output()
        out.result(plan, lambda p: out.text(f"Would serve {p['data_dir']} on {p['bind']} as {p['base_url']}"
                                            + ("" if p["configured"] else " (no deployment there yet: fp init)")))
        return
    run_server(data_dir, host=host, port=port, base_url=base_url, log_level=log_level, limits_json=limits_json)


def run_server(
    data_dir: Path, *, host: str, port: int, base_url: str | None, log_level: str = "info",
    limits_json: str | None = None,
) -> None:
    import uvicorn

    from fastpad.api import Limits, create_app
    from fastpad.api.header_deadline import header_deadline_protocol
    from fastpad.deployment import open_deployment

    try:
        limits = Limits.from_json(limits_json or os.environ.get(LIMITS_ENV))
    except (ValueError, TypeError) as exc:
        raise click.BadParameter(str(exc), param_hint="--limits-json") from exc
    deployment = open_deployment(data_dir)
    try:
        app = create_app(deployment, base_url=base_url or base_url_for(host, port), limits=limits)
        uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=log_level == "debug",
                    proxy_headers=False, server_header=False, http=header_deadline_protocol(limits.header_timeout_s))
    finally:
        deployment.close()
