"""The client CLI under test: the real ``fp`` executable against a real ``fp serve``.

One SQLite server for the client-command tests (session-scoped), started with
a one-second device-login poll interval so ``fp login`` completes quickly.
Every test gets its own config and state directories (``XDG_CONFIG_HOME``,
``XDG_STATE_HOME``), so profiles and spools never leak between tests.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from tests.api.conftest import FP, OWNER_EMAIL, TEST_LIMITS, free_port, run_fp, stop, wait_healthy

CLI_LIMITS = {**TEST_LIMITS, "device_poll_interval_s": 1}


@dataclass
class CliServer:
    base_url: str
    port: int
    data_dir: Path
    log: Path
    workspace_id: str
    owner_password: str
    process: subprocess.Popen | None = None
    _minted: dict[tuple[str, ...], str] = field(default_factory=dict)

    def start(self) -> None:
        self.process = subprocess.Popen(
            [FP, "serve", "--data-dir", str(self.data_dir), "--port", str(self.port), "--log-level", "warning",
             "--limits-json", json.dumps(CLI_LIMITS)],
            stdout=self.log.open("a"), stderr=subprocess.STDOUT,
        )
        try:
            wait_healthy(self.base_url, self.process, self.log)
        except BaseException:
            self.process.kill()
            raise

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None

    def mint(self, scopes: str, *extra: str) -> str:
        """A token with these scopes (minted once per server: ``fp token create`` is slow to start)."""
        key = (scopes, *extra)
        if key not in self._minted:
            result = run_fp("token", "create", "--data-dir", str(self.data_dir), "--scopes", scopes, *extra, "--json")
            self._minted[key] = json.loads(result.stdout)["token"]
        return self._minted[key]

    def person_token(self, scopes: str = "notes:read,notes:write,notes:delete,search:read,export") -> str:
        return self.mint(scopes, "--person", OWNER_EMAIL, "--label", "tests: cli person")

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=10.0)


def _init_server(tmp: Path) -> CliServer:
    password = secrets.token_urlsafe(12)
    data_dir = tmp / "data"
    init = json.loads(run_fp("init", "--data-dir", str(data_dir), "--owner-email", OWNER_EMAIL, "--json",
                             env={"FASTPAD_OWNER_PASSWORD": password}).stdout)
    port = free_port()
    return CliServer(f"http://127.0.0.1:{port}", port, data_dir, tmp / "server.log", init["workspace_id"], password)


@pytest.fixture(scope="session")
def cli_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliServer]:
    server = _init_server(tmp_path_factory.mktemp("cli-server"))
    server.start()
    yield server
    server.stop()


@dataclass
class Fp:
    """``fp`` with this test's own config and state directories."""

    env: dict[str, str]
    home: Path

    def __call__(self, *args: str, input: str | None = None, env: dict[str, str] | None = None,
                 timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([FP, *args], capture_output=True, text=True, timeout=timeout, input=input,
                              stdin=None if input is not None else subprocess.DEVNULL,
                              env={**self.env, **(env or {})})

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen([FP, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**self.env, **(env or {})})

    def json(self, *args: str, **kwargs) -> dict:
        result = self(*args, "--json", **kwargs)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def fp(tmp_path: Path) -> Fp:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FASTPAD_")}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_STATE_HOME": str(home / ".state")})
    return Fp(env, home)


@pytest.fixture
def person_env(cli_server: CliServer) -> dict[str, str]:
    """A person CLI credential of the server's owner, from the environment."""
    return {"FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": cli_server.person_token()}
