"""Real servers for benchmarks: a throwaway PostgreSQL (pgserver) and `fp serve` processes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx

ROOT = Path(__file__).resolve().parent.parent
FP = str(Path(sys.executable).with_name("fp"))
OWNER = "owner@bench.local"


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    """A database URL on a throwaway PostgreSQL 16 (durability off: it is a benchmark)."""
    import pgserver

    root = Path(tempfile.mkdtemp(prefix="fastpad-bench-pg-"))
    server = pgserver.get_server(root / "data", cleanup_mode="delete")
    try:
        import psycopg

        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                conn.execute(f"ALTER SYSTEM SET {setting} = off")
            conn.execute("SELECT pg_reload_conf()")
            conn.execute("CREATE DATABASE fastpad_bench")
        yield urlunsplit(urlsplit(server.get_uri())._replace(path="/fastpad_bench"))
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class Server:
    base_url: str
    data_dir: Path
    process: subprocess.Popen

    def token(self, scopes: str, *extra: str) -> str:
        done = subprocess.run(
            [FP, "token", "create", "--data-dir", str(self.data_dir), "--scopes", scopes, *extra, "--json"],
            capture_output=True, text=True, check=True,
        )
        return json.loads(done.stdout)["token"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def initialised(database_url: str | None = None, *, kept_at: Path | None = None) -> Iterator[Path]:
    """A data dir made by `fp init` (SQLite unless a database URL is given); removed on exit,
    unless ``kept_at`` names where it lives (made there if it holds no deployment yet)."""
    data_dir = kept_at or Path(tempfile.mkdtemp(prefix="fastpad-bench-"))
    init = [FP, "init", "--data-dir", str(data_dir), "--owner-email", OWNER, "--json"]
    if database_url:
        init += ["--database-url", database_url]
    try:
        if kept_at is None or not (kept_at / "fastpad.json").exists():
            subprocess.run(init, capture_output=True, check=True,
                           env={**os.environ, "FASTPAD_OWNER_PASSWORD": "bench-password"})
        yield data_dir
    finally:
        if kept_at is None:
            shutil.rmtree(data_dir, ignore_errors=True)


@contextlib.contextmanager
def serving(data_dir: Path) -> Iterator[Server]:
    """`fp serve` on a free port, healthy before it is handed out; stopped on exit."""
    port = _free_port()
    serve = [FP, "serve", "--data-dir", str(data_dir), "--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base_url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("fp serve did not become healthy")
            time.sleep(0.05)  # polling a child process's readiness: there is no signal to wait on
        yield Server(base_url, data_dir, process)
    finally:
        process.terminate()
        process.wait(timeout=10)


def server_ms(response: httpx.Response) -> float:
    """The server's own time from its Server-Timing header."""
    return float(response.headers["server-timing"].split("dur=")[1])
