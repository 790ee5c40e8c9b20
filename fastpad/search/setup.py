"""Search for a deployment: the service and its embedding worker, from ``fastpad.json``.

The ``embeddings`` object of ``fastpad.json`` configures the provider
(``embeddings.provider_from_config`` documents the keys), plus:

``sweep_interval``  seconds between the worker's slow sweeps (default 300)
``pgvector``        false: keep dense KNN in memory even where pgvector exists

Absent, the local all-MiniLM-L6-v2 model is used when its weights are
installed. ``{"provider": "none"}`` turns dense search off; so does a provider
that cannot be built (logged), and search then says why in ``unavailable``.
The server's embedder runs onnxruntime on one thread unless ``threads`` says
otherwise, so embedding in the background leaves the other cores to requests.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastpad.search.embeddings import WeightsError, local_runtime_installed, provider_from_config
from fastpad.search.hybrid import NO_PROVIDER
from fastpad.search.service import SearchService
from fastpad.search.vectors import StoredVectors
from fastpad.search.worker import EmbeddingWorker
from fastpad.store import Store

log = logging.getLogger(__name__)

BACKGROUND_THREADS = 1


def build_search(store: Store, config: Mapping[str, Any] | None, *,
                 redaction_key: bytes | None = None) -> tuple[SearchService, EmbeddingWorker | None]:
    settings = dict(config or {})
    settings.setdefault("threads", BACKGROUND_THREADS)
    try:
        provider = provider_from_config(settings)
    except (ValueError, WeightsError) as exc:
        log.error("dense search is off: %s", exc)
        return SearchService(store, dense_off_reason=f"embedding provider not usable: {exc}", redaction_key=redaction_key), None
    if provider is None:
        explicit = str(settings.get("provider", "")).strip().lower() in ("none", "off", "disabled", "false")
        reason = (NO_PROVIDER if explicit else
                  "no embedding provider configured (the local model needs pip install 'fastpad[embeddings]')"
                  if not local_runtime_installed() else
                  "no embedding provider configured (the local model's weights are not installed)")
        return SearchService(store, dense_off_reason=reason, redaction_key=redaction_key), None
    vectors = StoredVectors(store, provider, use_pgvector=bool(settings.get("pgvector", True)))
    worker = EmbeddingWorker(store, vectors, sweep_interval=float(settings.get("sweep_interval", 300.0)))
    return SearchService(store, vectors=vectors, on_search=worker.watch, redaction_key=redaction_key), worker
