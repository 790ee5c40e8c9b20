"""Fastpad as a package: the wheel built from this tree, installed where no checkout is near."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
# What a wheel is built from: the project's metadata and its package, nothing else of the checkout.
SOURCES = ("pyproject.toml", "README.md", "fastpad")


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path

    @property
    def fp(self) -> Path:
        return self.venv / "bin" / "fp"


def run(command: list[str | Path], **options) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=600, **options)
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}{done.stderr[-4000:]}"
    return done


def build_wheel(into: Path) -> Path:
    """The wheel of this working tree, built from a copy (a build writes build/ and *.egg-info
    beside its sources; the checkout stays as it is)."""
    source = into / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, source / name)
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", into / "dist", f"{source}/"])
    (wheel,) = (into / "dist").glob("fastpad-*.whl")
    return wheel


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """The wheel in a fresh venv of its own (no site packages, nothing of the checkout's venv),
    installed with pip from the registry, pinned by constraints.txt as `make install` pins."""
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(tmp)
    venv = tmp / "venv"
    run([sys.base_prefix + "/bin/python3", "-m", "venv", venv])
    run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "-c", CONSTRAINTS, wheel])
    yield Installed(wheel, venv)
