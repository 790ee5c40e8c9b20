"""Real servers for the HTTP tests: ``fp init`` + ``fp serve`` as uvicorn subprocesses.

One server per backend (SQLite, PostgreSQL), shared by the whole session; a module that
needs a server of its own (other settings, a model provider: ``ask_server``) starts it
with ``own_server``.
Tokens are minted with the real ``fp token create`` executable. The servers
run with shrunk body-timing windows (``--limits-json``) so the slow-body rule
can be exercised in a second rather than a minute.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from tests.chat_provider import ASK_KEY, ASK_KEY_ENV, ChatProvider, ask_config, provider  # noqa: F401 (a fixture)

FP = str(Path(sys.executable).with_name("fp"))
OWNER_EMAIL = "owner@example.com"
# Shrunk timing windows; sizes and counts keep their published defaults.
# A shared test server signs its people in far more often than 20 times a minute from one address;
# the sign-in and joining limits themselves are tried on servers of their own (tests/api/test_team.py).
TEST_LIMITS = {"body_grace_s": 0.3, "body_deadline_s": 4.0, "sign_in_per_window": 10_000, "join_per_window": 10_000}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_fp(*args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [FP, *args], capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})}
    )
    if check and result.returncode != 0:
        raise AssertionError(f"fp {' '.join(args)} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def wait_healthy(base_url: str, process: subprocess.Popen, log: Path, timeout: float = 30.0) -> None:
    """Poll /health until it answers 200 (no fixed sleeps), or fail with the server's log."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=1.0) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"server exited {process.returncode}:\n{log.read_text()}")
            try:
                if client.get(f"{base_url}/health").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    raise AssertionError(f"server did not become healthy in {timeout}s:\n{log.read_text()}")


@dataclass
class Server:
    backend: str
    base_url: str
    data_dir: Path
    workspace_id: str
    owner_email: str
    owner_password: str
    process: subprocess.Popen
    _tokens: dict[str, str] = field(default_factory=dict)

    def fp(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run_fp(*args, check=check)

    def mint(self, scopes: str, *extra: str) -> dict:
        """``fp token create --json`` → the printed object (``token`` holds the plaintext)."""
        result = run_fp("token", "create", "--data-dir", str(self.data_dir), "--scopes", scopes, *extra, "--json")
        return json.loads(result.stdout)

    def token(self, name: str) -> str:
        """Named tokens, minted once per server."""
        if name not in self._tokens:
            scopes, extra = NAMED_TOKENS[name]
            self._tokens[name] = self.mint(scopes, *extra)["token"]
        return self._tokens[name]

    def client(self, token: str | None = None, **headers: str) -> httpx.Client:
        if token:
            headers["authorization"] = f"Bearer {token}"
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30.0)


NAMED_TOKENS: dict[str, tuple[str, tuple[str, ...]]] = {
    # The owner's CLI credential: a person, so it writes directly (human_typed).
    "owner": ("notes:read,notes:write,notes:delete", ("--person", OWNER_EMAIL, "--label", "tests: owner")),
    "reader": ("notes:read", ("--label", "tests: reader")),
}


def start_server(tmp: Path, backend: str, database_url: str | None = None, *,
                 limits: dict[str, float] | None = None, config: dict[str, Any] | None = None,
                 env: dict[str, str] | None = None) -> Server:
    """``fp init`` then ``fp serve``. ``config`` adds settings to the new ``fastpad.json`` before the
    server reads it, as an operator edits the file (e.g. ``{"ask": {...}}``); ``env`` is added to the
    server's environment (e.g. the variable a provider's API key is read from)."""
    data_dir = tmp / "data"
    password = secrets.token_urlsafe(12)
    args = ["init", "--data-dir", str(data_dir), "--owner-email", OWNER_EMAIL, "--json"]
    if database_url:
        args += ["--database-url", database_url]
    init = json.loads(run_fp(*args, env={"FASTPAD_OWNER_PASSWORD": password}).stdout)
    if config:
        config_file = data_dir / "fastpad.json"
        config_file.write_text(json.dumps({**json.loads(config_file.read_text()), **config}, indent=2) + "\n")
    base_url, process = serve(data_dir, tmp / "server.log", limits=limits, env=env)
    return Server(backend, base_url, data_dir, init["workspace_id"], OWNER_EMAIL, password, process)


def serve(data_dir: Path, log: Path, *, limits: dict[str, float] | None = None,
          env: dict[str, str] | None = None) -> tuple[str, subprocess.Popen]:
    """``fp serve`` on an initialised data directory, on a free port, once healthy: (base URL, process).
    ``limits`` overrides some of TEST_LIMITS (``fastpad.api.limits.Limits`` field names)."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [FP, "serve", "--data-dir", str(data_dir), "--port", str(port), "--log-level", "warning",
         "--limits-json", json.dumps({**TEST_LIMITS, **(limits or {})})],
        stdout=log.open("a"), stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
    )
    try:
        wait_healthy(base_url, process, log)
    except BaseException:
        process.kill()
        raise
    return base_url, process


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def own_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, name: str,
               **options: Any) -> Iterator[Server]:
    """A server of a test module's own, for a fixture parametrized by backend (``request.param``:
    ``sqlite``, or ``postgres`` on a blank database of the session's cluster), stopped when the
    fixture ends. ``options`` are ``start_server``'s (limits, config, env)."""
    tmp = tmp_path_factory.mktemp(f"{name}-{request.param}")
    database_url = request.getfixturevalue("pg_cluster").blank_database() if request.param == "postgres" else None
    server = start_server(tmp, request.param, database_url, **options)
    try:
        yield server
    finally:
        stop(server.process)


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp(f"server-{request.param}")
    database_url = request.getfixturevalue("api_database_url") if request.param == "postgres" else None
    srv = start_server(tmp, request.param, database_url)
    yield srv
    stop(srv.process)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def ask_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
               provider: ChatProvider) -> Iterator[Server]:
    """A server of the module's own whose ``fastpad.json`` names the module's model provider
    (``tests/chat_provider.py``), so ``POST /v1/ask`` answers."""
    with own_server(request, tmp_path_factory, "ask", config=ask_config(provider), env={ASK_KEY_ENV: ASK_KEY}) as srv:
        yield srv


@pytest.fixture(scope="session")
def owner(server: Server) -> httpx.Client:
    with server.client(server.token("owner")) as client:
        yield client


@pytest.fixture(scope="module")
def signed_in(server: Server) -> Iterator[httpx.Client]:
    """A browser session over HTTP (the session cookie and its CSRF token): what a signed-in
    person's app sends, and the one credential for what no token may do."""
    with server.client() as client:
        answer = client.post("/v1/session", json={"email": server.owner_email, "password": server.owner_password})
        assert answer.status_code == 201, answer.text
        client.headers["x-csrf-token"] = answer.json()["csrf_token"]
        yield client
