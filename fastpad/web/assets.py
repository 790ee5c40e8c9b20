"""The browser bundle's files as ``web/build.mjs`` wrote them: content-hashed names under
``fastpad/web/static``, found through its manifest. The app shell and the server-rendered pages
both link the same stylesheet from here, so every page a person opens has one look."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

STATIC = Path(str(resources.files("fastpad.web") / "static"))


@lru_cache(maxsize=1)
def manifest() -> dict[str, str]:
    """Logical asset name → hashed file name."""
    return json.loads((STATIC / "manifest.json").read_text())


def stylesheet() -> str:
    return f"/static/{manifest()['main.css']}"
