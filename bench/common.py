"""Shared benchmark plumbing: timing with repeats, and results written as JSON."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Callable

RESULTS = Path(__file__).resolve().parent / "results"


def timed(fn: Callable[[], Any], repeats: int = 5) -> dict[str, float]:
    """Milliseconds over several runs: the median is the figure, the spread is reported."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return {"median_ms": round(statistics.median(samples), 3), "min_ms": round(min(samples), 3), "max_ms": round(max(samples), 3)}


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {"p50_ms": at(0.50), "p95_ms": at(0.95), "n": len(ordered)}


def write_result(name: str, figures: dict[str, Any], targets: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    document = {
        "benchmark": name,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "figures": figures,
        "targets": targets,
    }
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path
