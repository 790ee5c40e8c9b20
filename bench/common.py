"""Shared benchmark plumbing: timing with repeats, and results written as JSON."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sqlite3
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


def machine_speed_ms() -> float:
    """How long this machine takes, now, for a fixed piece of single-core work (hashing
    and SQLite, median of five). The machines here are shared and their speed drifts
    between runs, so every result records it: two runs' figures compare once scaled
    by their calibrations."""
    def work() -> None:
        digest = b"fastpad"
        for _ in range(20_000):
            digest = hashlib.sha256(digest).digest()
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
        conn.executemany("INSERT INTO t (v) VALUES (?)", ((str(i) * 3,) for i in range(20_000)))
        conn.execute("SELECT count(*) FROM t WHERE v LIKE '%7%'").fetchone()
        conn.close()

    return timed(work)["median_ms"]


def write_result(name: str, figures: dict[str, Any], targets: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    document = {
        "benchmark": name,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "speed_ms": machine_speed_ms()},
        "figures": figures,
        "targets": targets,
    }
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path
