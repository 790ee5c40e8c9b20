"""A real OpenAI-compatible chat-completions server on loopback, playing the model provider.

``fp serve`` is pointed at it through its ``fastpad.json`` (``ask.base_url``). It records every
request it is sent (path, headers, JSON body) and answers what the test tells it to
(:meth:`ChatProvider.answer`): by default a completion citing the first block id of the prompt.
It can also fail as a provider does: a status, a body that is not a completion, a connection it
drops, an answer it holds back until released, or no listening socket at all (:meth:`stop`).
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

ANCHOR = re.compile(r"\{#([0-9A-HJKMNP-TV-Z]{26})\}")
ASK_KEY_ENV = "FASTPAD_TEST_ASK_KEY"
ASK_KEY = "provider-key-" + secrets.token_hex(8)
PROVIDER_TIMEOUT_S = 2
MAX_COMPLETION_TOKENS = 64  # small, so a spending cap in a test holds a few questions' reservations


def ask_config(provider: "ChatProvider") -> dict[str, Any]:
    """The ``fastpad.json`` settings pointing a server at ``provider``; the key is read from
    ``ASK_KEY_ENV`` in the server's environment. Lexical search alone (no embedding model to load):
    tests open the deployment in-process too."""
    return {"ask": {"base_url": provider.base_url, "model": "fake-model", "api_key_env": ASK_KEY_ENV,
                    "timeout_s": PROVIDER_TIMEOUT_S, "max_completion_tokens": MAX_COMPLETION_TOKENS},
            "embeddings": {"provider": "none"}}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes

    @property
    def system(self) -> str:
        return next(m["content"] for m in self.body["messages"] if m["role"] == "system")

    @property
    def prompt(self) -> str:
        return next(m["content"] for m in self.body["messages"] if m["role"] == "user")

    @property
    def block_ids(self) -> list[str]:
        """The block anchors the prompt carried: what the model was given to cite."""
        return ANCHOR.findall(self.prompt)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False  # close the connection without answering
    hold: threading.Event | None = None  # answer only once this is set


def completion(text: str, total_tokens: int | None = 42) -> Reply:
    payload: dict[str, Any] = {"id": "chatcmpl-test", "object": "chat.completion", "model": "fake-model",
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": text}}]}
    if total_tokens is not None:
        payload["usage"] = {"prompt_tokens": total_tokens // 2, "completion_tokens": total_tokens - total_tokens // 2,
                            "total_tokens": total_tokens}
    return Reply(body=json.dumps(payload).encode())


def cite_first(received: Received) -> Reply:
    ids = received.block_ids
    return completion(f"From your notes [cite:{ids[0]}]." if ids else "Nothing to cite.")


class ChatProvider:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.answer: Callable[[Received], Reply] = cite_first
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.port = 0
        self.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        """Listen (again, on the same port after :meth:`stop`)."""
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                received = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw), raw)
                with provider._lock:
                    provider.received.append(received)
                    answer = provider.answer
                reply = answer(received)
                if reply.hold is not None:
                    reply.hold.wait(30)
                if reply.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                self.send_response(reply.status)
                self.send_header("content-type", reply.headers.pop("content-type", "application/json"))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Stop listening: the provider is down (connection refused)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def take(self) -> list[Received]:
        """What it was sent since the last take."""
        with self._lock:
            taken, self.received = self.received, []
        return taken


@pytest.fixture(scope="module")
def provider() -> Iterator[ChatProvider]:
    """One provider per test module (import this fixture into the module)."""
    fake = ChatProvider()
    yield fake
    fake.stop()
