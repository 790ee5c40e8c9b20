"""Test helpers for search: a small deterministic embedding provider.

``WordHashProvider`` stands in for a real model where the model is not what a
test is about (SQL tracing, the worker's bookkeeping): each word hashes to a
few dimensions, so texts sharing words are near each other. Tests of retrieval
quality use the real local model (the ``minilm`` fixture).
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Sequence

import numpy as np

from fastpad.search.embeddings import l2_normalize


class WordHashProvider:
    name = "test:word-hash"
    min_similarity = None

    def __init__(self, dimensions: int = 64) -> None:
        self.dimensions = dimensions
        self.calls = 0
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.calls += 1
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.casefold()):
                digest = hashlib.sha256(word.encode()).digest()
                out[row, digest[0] % self.dimensions] += 1.0
                out[row, digest[1] % self.dimensions] += 0.5
            out[row, 0] += 1e-3  # never the zero vector
        return l2_normalize(out)
