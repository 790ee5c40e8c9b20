"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1.

The server below is a real peer speaking the ``POST /v1/embeddings`` shape
(bearer auth, ``{"model", "input"}`` in, ``{"data": [{"index", "embedding"}]}``
out, deliberately out of order and not normalised); the provider under test
talks to it over a socket with its real httpx client.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from fastpad.search.embeddings import EmbeddingError, OpenAICompatibleProvider, provider_from_config

KEY = "sk-test-123"
DIMS = 8


def fake_vector(text: str) -> list[float]:
    """Deterministic, not unit length, so normalisation is observable."""
    rng = np.random.default_rng(abs(hash(text)) % (2**32))
    return (rng.standard_normal(DIMS) * 3.0).tolist()


class EmbeddingServer:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail_next: list[int] = []  # status codes to answer before succeeding
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                if self.path != "/v1/embeddings":
                    return self._send(404, {"error": {"message": "not found"}})
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self._send(401, {"error": {"message": "bad key"}})
                if server.fail_next:
                    return self._send(server.fail_next.pop(0), {"error": {"message": "try later"}}, {"Retry-After": "0"})
                inputs = body["input"]
                data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)} for i, t in enumerate(inputs)]
                data.reverse()  # servers may answer out of order: "index" is what counts
                self._send(200, {"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}})

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> "EmbeddingServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    with EmbeddingServer() as running:
        yield running


def test_embeds_over_http_in_input_order_normalised_and_batched(server):
    provider = OpenAICompatibleProvider(base_url=server.base_url + "/", model="text-embed-x", api_key=KEY, batch_size=3)
    texts = [f"text number {i}" for i in range(7)]
    vectors = provider.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (7, DIMS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    for text, vector in zip(texts, vectors):
        expected = np.array(fake_vector(text), dtype=np.float32)
        assert float(vector @ (expected / np.linalg.norm(expected))) > 0.99999
    assert [len(r["body"]["input"]) for r in server.requests] == [3, 3, 1]
    first = server.requests[0]
    assert first["path"] == "/v1/embeddings" and first["auth"] == f"Bearer {KEY}"
    assert first["body"]["model"] == "text-embed-x" and first["body"]["encoding_format"] == "float"
    assert "dimensions" not in first["body"]
    assert provider.dimensions == DIMS
    assert provider.embed([]).shape == (0, DIMS)
    provider.close()


def test_dimensions_are_learned_with_one_probe_when_not_configured(server):
    provider = OpenAICompatibleProvider(base_url=server.base_url, model="m", api_key=KEY)
    assert provider.dimensions == DIMS
    assert len(server.requests) == 1
    assert provider.dimensions == DIMS and len(server.requests) == 1


def test_transient_errors_are_retried_and_others_raise(server):
    provider = OpenAICompatibleProvider(base_url=server.base_url, model="m", api_key=KEY, dimensions=DIMS, max_retries=2, retry_backoff=0.01)
    server.fail_next = [503, 429]
    assert provider.embed(["a"]).shape == (1, DIMS)
    assert len(server.requests) == 3
    server.fail_next = [500, 500, 500]
    with pytest.raises(EmbeddingError, match="500"):
        provider.embed(["a"])
    wrong_key = OpenAICompatibleProvider(base_url=server.base_url, model="m", api_key="nope", dimensions=DIMS)
    with pytest.raises(EmbeddingError, match="401"):
        wrong_key.embed(["a"])
    wrong_dims = OpenAICompatibleProvider(base_url=server.base_url, model="m", api_key=KEY, dimensions=DIMS + 1)
    with pytest.raises(EmbeddingError, match="dimensions"):
        wrong_dims.embed(["a"])


def test_an_unreachable_server_raises_an_embedding_error():
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as placeholder:
        port = placeholder.server_address[1]
    provider = OpenAICompatibleProvider(base_url=f"http://127.0.0.1:{port}/v1", model="m", dimensions=4, max_retries=0, timeout=2)
    with pytest.raises(EmbeddingError, match="failed"):
        provider.embed(["a"])


def test_configured_from_config_with_the_key_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("FASTPAD_TEST_EMBED_KEY", KEY)
    provider = provider_from_config(
        {"provider": "openai", "base_url": server.base_url, "model": "m", "api_key_env": "FASTPAD_TEST_EMBED_KEY", "dimensions": DIMS, "request_dimensions": True}
    )
    assert isinstance(provider, OpenAICompatibleProvider)
    assert provider.embed(["hello"]).shape == (1, DIMS)
    assert server.requests[-1]["auth"] == f"Bearer {KEY}"
    assert server.requests[-1]["body"]["dimensions"] == DIMS
    with pytest.raises(ValueError):
        provider_from_config({"provider": "openai", "model": "m"})  # no base_url
