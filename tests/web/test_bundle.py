"""The committed browser bundle (fastpad/web/static) is exactly what web/build.mjs makes from
web/src and web/package-lock.json: a rebuild with the project's Node into a temp dir matches it
byte for byte, file for file. When this fails, run `make web` and commit the result."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import pytest

from tests import node as project_node

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
STATIC = ROOT / "fastpad" / "web" / "static"
GZIP_BUDGET = 400 * 1024  # JS + CSS, gzipped; the wasm is cached apart and not counted


@pytest.fixture(scope="module")
def rebuild(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The rebuilt directory and the build's report (its stdout)."""
    project_node.require("Rebuilding the browser bundle (web/build.mjs)")
    if not (WEB / "node_modules" / "esbuild").is_dir():
        project_node.npm_ci(WEB)
    out = tmp_path_factory.mktemp("static")
    done = subprocess.run([str(project_node.NODE), str(WEB / "build.mjs"), str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in directory.iterdir() if path.is_file()}


def test_the_rebuild_is_the_committed_bundle_byte_for_byte(rebuild: tuple[Path, str]) -> None:
    built, committed = files(rebuild[0]), files(STATIC)
    assert sorted(committed.keys() - built.keys()) == [], "committed but not built: stale, run `make web`"
    assert sorted(built.keys() - committed.keys()) == [], "built but not committed: run `make web` and commit"
    assert [name for name in built if built[name] != committed[name]] == [], "differs: run `make web` and commit"


def test_the_manifest_names_the_js_css_and_wasm_and_the_js_loads_that_wasm() -> None:
    manifest = json.loads((STATIC / "manifest.json").read_text())
    assert sorted(manifest) == ["loro_wasm_bg.wasm", "main.css", "main.js", "sw.js"]
    wasm = (STATIC / manifest["loro_wasm_bg.wasm"]).read_bytes()
    assert wasm.startswith(b"\0asm")
    assert manifest["loro_wasm_bg.wasm"].encode() in (STATIC / manifest["main.js"]).read_bytes()


def test_the_build_reports_sizes_and_js_plus_css_stay_under_the_gzip_budget(rebuild: tuple[Path, str]) -> None:
    out, report = rebuild
    manifest = json.loads((out / "manifest.json").read_text())
    reported = {line.split("\t")[0]: line for line in report.splitlines()}
    assert set(reported) == set(manifest.values()) and all("gzip" in line for line in reported.values())
    gzipped = sum(len(gzip.compress((out / manifest[name]).read_bytes(), 9)) for name in ("main.js", "main.css"))
    assert gzipped < GZIP_BUDGET, f"JS + CSS are {gzipped} B gzipped"
