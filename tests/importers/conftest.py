from __future__ import annotations

import pytest

from tests.helpers_store import Services, Workspace, make_services


@pytest.fixture
def svc(store, fast_hasher) -> Services:
    return make_services(store, fast_hasher)


@pytest.fixture
def ws(svc: Services) -> Workspace:
    return svc.workspace("Imports")
