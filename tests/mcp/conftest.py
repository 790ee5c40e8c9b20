"""Real servers for the MCP tests, and the clients that talk to them.

The servers are ``fp serve`` processes started with the HTTP tests' own helpers
(``tests/api/conftest.py``), once per test session: SQLite for every test, PostgreSQL
too for the end-to-end flow. Fixture data — notes and tokens — is written through the
deployment's services from the test process (the server sees it at once: same
database, and every write indexes in its own transaction).

Clients are the real ones: the official Python SDK (``mcp``) in both protocol eras,
``fp mcp`` over stdio, and the official TypeScript SDK under ``tests/mcp/js``.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager as AsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
import pytest
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from fastpad.deployment import CONFIG_NAME, Deployment, open_deployment
from fastpad.errors import Conflict, ValidationFailed
from tests import node as project_node
from tests.api.conftest import FP, OWNER_EMAIL, run_fp, serve, stop

JS = Path(__file__).parent / "js"
NODE22 = project_node.NODE  # the conformance suite needs Node >= 22; tools/node.py pins 22
T = TypeVar("T")

# Named tokens every test can use (scopes, options of TokenService.create). The shared ones make far
# more than an agent's 120 calls a minute across the suite, and the limit is exact over any rolling
# minute, so they get a high one; "limited" is the token the rate limit itself is tried with.
_SHARED = {"rate_limit_per_minute": 10_000}
TOKENS: dict[str, tuple[str, dict[str, Any]]] = {
    "reader": ("notes:read", _SHARED),
    "searcher": ("notes:read,search:read", _SHARED),
    "agent": ("notes:read,notes:propose,search:read,graph:read", _SHARED),
    "acceptor": ("notes:read,notes:propose,search:read,turns:accept", _SHARED),
    "autoapply": ("notes:read,notes:propose", {**_SHARED, "auto_apply": True}),
    "limited": ("notes:read", {"rate_limit_per_minute": 3}),
}


def run(scenario: Callable[[], Awaitable[T]]) -> T:
    """Run an async test body (the SDK clients are async; the tests stay plain functions)."""
    return anyio.run(scenario)


@dataclass
class McpServer:
    backend: str
    base_url: str
    data_dir: Path
    deployment: Deployment
    process: subprocess.Popen
    tokens: dict[str, str] = field(default_factory=dict)
    token_ids: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"{self.base_url}/mcp"

    def mint(self, name: str, scopes: str, **options: Any) -> str:
        plaintext, info = self.deployment.tokens.create(self.deployment.workspace_id, scopes=scopes, label=name,
                                                        expires_in=timedelta(days=1), **options)
        self.tokens[name], self.token_ids[name] = plaintext, info.id
        return plaintext

    def note(self, markdown: str) -> Any:
        """A note written by the workspace owner (human_typed): its NoteView."""
        return self.deployment.notes.create(self.deployment.operator_principal(), markdown=markdown)

    def client(self, token: str, mode: str = "2026-07-28",
               transport: httpx2.AsyncBaseTransport | None = None) -> AsyncContextManager["Agent"]:
        return sdk_agent(self.url, token, mode, transport)

    def stdio(self, token: str, tmp: Path) -> StdioServerParameters:
        """``fp mcp`` as a local client launches it, with the credential in its environment."""
        return StdioServerParameters(command=FP, args=["mcp"], env=fp_env(self.base_url, token, tmp))


@asynccontextmanager
async def sdk_agent(url: str, token: str, mode: str = "2026-07-28",
                    transport: httpx2.AsyncBaseTransport | None = None) -> AsyncIterator["Agent"]:
    """The official Python SDK's client on the server's ``/mcp``, as an agent holding ``token``
    (``transport``: one that also records what crossed the wire)."""
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30, transport=transport)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield Agent(client)


def fp_env(base_url: str, token: str, tmp: Path) -> dict[str, str]:
    """The environment ``fp`` runs in: this server and token, and no profile of the person running the tests."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TIKTOKEN_CACHE_DIR")}
    return {**keep, "FASTPAD_URL": base_url, "FASTPAD_TOKEN": token, "XDG_CONFIG_HOME": str(tmp / "config"),
            "XDG_STATE_HOME": str(tmp / "state")}


class Agent:
    """An SDK client plus the session ``fastpad_capabilities`` mints; every result is checked
    against the tool's declared output schema, failures included."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.schemas: dict[str, Draft202012Validator] = {}
        self.session = ""

    async def start(self) -> "Agent":
        listed = await self.client.list_tools()
        self.schemas = {t.name: Draft202012Validator(t.output_schema) for t in listed.tools if t.output_schema}
        self.session = (await self.ok("fastpad_capabilities"))["session"]
        return self

    async def call(self, name: str, **arguments: Any) -> Any:
        result = await self.client.call_tool(name, arguments)
        if name in self.schemas:
            self.schemas[name].validate(result.structured_content)
        if result.structured_content is not None:
            assert json.loads(result.content[0].text) == result.structured_content
        return result

    async def ok(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.call(name, **arguments)
        assert not result.is_error, result.structured_content
        return result.structured_content

    async def problem(self, name: str, slug: str, **arguments: Any) -> dict[str, Any]:
        """The call fails as ``slug``: an isError result carrying the problem document."""
        result = await self.call(name, **arguments)
        assert result.is_error, result.structured_content
        document = result.structured_content
        assert document["type"].endswith(f"/errors/{slug}"), document
        assert document["docs_url"] == document["type"] and document["next"], document
        return document

    async def read(self, note_id: str, **arguments: Any) -> dict[str, Any]:
        """``fastpad_fetch`` of one note with handles: its entry."""
        found = await self.ok("fastpad_fetch", session=self.session, note_ids=[note_id], with_handles=True,
                              **arguments)
        return found["notes"][0]


def start_mcp_server(tmp: Path, backend: str, database_url: str | None) -> McpServer:
    """``fp init`` + ``fp serve``, with dense search off: the MCP layer does not care how search ranks,
    results stay deterministic, and no embedding batch holds up the server's shutdown."""
    data_dir = tmp / "data"
    args = ["init", "--data-dir", str(data_dir), "--owner-email", OWNER_EMAIL, "--json"]
    run_fp(*args, *(["--database-url", database_url] if database_url else []),
           env={"FASTPAD_OWNER_PASSWORD": secrets.token_urlsafe(12)})
    config = data_dir / CONFIG_NAME
    config.write_text(json.dumps({**json.loads(config.read_text()), "embeddings": {"provider": "none"}}))
    base_url, process = serve(data_dir, tmp / "server.log")
    deployment = open_deployment(data_dir, pool_size=2)
    server = McpServer(backend, base_url, data_dir, deployment, process)
    for name, (scopes, options) in TOKENS.items():
        server.mint(name, scopes, **options)
    return server


def stop_mcp_server(server: McpServer) -> None:
    server.deployment.close()
    stop(server.process)


@pytest.fixture(scope="session")
def sqlite_mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpServer]:
    server = start_mcp_server(tmp_path_factory.mktemp("mcp-sqlite"), "sqlite", None)
    yield server
    stop_mcp_server(server)


@pytest.fixture(scope="session")
def postgres_mcp(tmp_path_factory: pytest.TempPathFactory, pg_cluster: Any) -> Iterator[McpServer]:
    server = start_mcp_server(tmp_path_factory.mktemp("mcp-postgres"), "postgres", pg_cluster.blank_database())
    yield server
    stop_mcp_server(server)


@pytest.fixture(params=["sqlite", "postgres"])
def mcp_server(request: pytest.FixtureRequest) -> McpServer:
    """Both backends: for the end-to-end flow."""
    return request.getfixturevalue(f"{request.param}_mcp")


@pytest.fixture
def mcp(sqlite_mcp: McpServer) -> McpServer:
    """SQLite: for everything the MCP layer does the same way on either backend."""
    return sqlite_mcp


@pytest.fixture(scope="module")
def typed(sqlite_mcp: McpServer) -> McpServer:
    """The SQLite server with the types the typed tools read: ``Event`` (the calendar) and ``Sighting``."""
    owner = sqlite_mcp.deployment.operator_principal()
    for name, properties in (("Event", [{"name": "start", "kind": "datetime"}, {"name": "end", "kind": "datetime"},
                                        {"name": "all_day", "kind": "checkbox"}]),
                             ("Sighting", [{"name": "species", "kind": "text"}, {"name": "count", "kind": "number"}])):
        try:
            sqlite_mcp.deployment.types.define(owner, name=name, properties=properties)
        except (Conflict, ValidationFailed):
            pass  # defined by an earlier module of this session
    return sqlite_mcp


@pytest.fixture(scope="session")
def js_clients() -> Path:
    """``tests/mcp/js`` with its pinned packages installed (``npm ci`` once)."""
    project_node.require("The TypeScript SDK client and the conformance suite", optional=False)
    if not (JS / "node_modules" / "@modelcontextprotocol" / "sdk").exists():
        project_node.npm_ci(JS)
    return JS
