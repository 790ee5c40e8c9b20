"""What a test does when a tool it needs is missing: outside CI it skips (a developer without the
tool still runs the rest); under ``CI=true`` it fails, so CI never passes without it."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(reason: str, *, module: bool = False) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason, allow_module_level=module)
