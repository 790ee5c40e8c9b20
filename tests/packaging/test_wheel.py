"""`pip install fastpad` from the built wheel, outside the checkout: a working `fp` with the web app,
the migrations and everything it serves inside the wheel, and the optional extras optional.

Every command runs from a fresh directory with the venv's bin alone on PATH besides the system's,
so nothing can be found through the checkout.
"""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

import httpx

from tests.api.conftest import free_port, stop, wait_healthy
from tests.packaging.conftest import ROOT, Installed, run


def _env(installed: Installed, home: Path) -> dict[str, str]:
    return {"PATH": f"{installed.venv / 'bin'}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}


def test_the_wheel_carries_the_app_the_migrations_and_no_checkout_files(installed: Installed):
    names = zipfile.ZipFile(installed.wheel).namelist()
    shipped = {n for n in names if not n.endswith(".py")}
    web = sorted(p.name for p in (ROOT / "fastpad" / "web" / "static").iterdir())
    assert {f"fastpad/web/static/{name}" for name in web} <= shipped
    for backend in ("sqlite", "postgres"):
        migrations = sorted(p.name for p in (ROOT / "fastpad" / "store" / "migrations" / backend).glob("*.sql"))
        assert migrations and {f"fastpad/store/migrations/{backend}/{m}" for m in migrations} <= shipped
    assert not [n for n in names if n.startswith(("tests/", "web/", "tools/", "bench/")) or "__pycache__" in n]
    metadata = zipfile.ZipFile(installed.wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    extras = set(re.findall(r"^Provides-Extra: (\S+)$", metadata, re.M))
    assert {"postgres", "embeddings"} <= extras
    core = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert not [line for line in core if re.search(r"psycopg|onnx|tokenizers", line)], "extras stay optional"


def test_the_installed_fp_inits_and_serves_the_app_with_no_checkout(installed: Installed, tmp_path: Path):
    work = tmp_path / "somewhere"
    work.mkdir()
    env = _env(installed, tmp_path)
    version = run(["fp", "--version"], cwd=work, env=env)
    assert version.stdout.strip() == "fp, version 0.1.0"
    where = run([installed.venv / "bin" / "python", "-c", "import fastpad; print(fastpad.__file__)"], cwd=work, env=env)
    assert where.stdout.startswith(str(installed.venv)) and str(ROOT) not in where.stdout
    init = json.loads(run(["fp", "init", "--data-dir", "data", "--json"], cwd=work, env=env).stdout)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    process = subprocess.Popen(["fp", "serve", "--data-dir", "data", "--port", str(port)], cwd=work, env=env,
                               stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        wait_healthy(base, process, log)
        with httpx.Client(base_url=base, timeout=10) as browser:
            assert browser.get("/health").status_code == 200
            assert browser.get("/signin").status_code == 200
            signed_in = browser.post("/v1/session", json={"email": init["owner_email"],
                                                          "password": init["owner_password"]})
            assert signed_in.status_code == 201, signed_in.text
            page = browser.get("/")
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text)
            assert any(a.endswith(".js") for a in assets), page.text
            for asset in assets:
                assert browser.get(asset).status_code == 200, asset
            # Without the embeddings extra dense search is off, and search says which extra brings it.
            found = browser.get("/v1/search", params={"q": "anything"}).json()
            assert "fastpad[embeddings]" in found["unavailable"]["dense"]
    finally:
        stop(process)


def test_a_missing_extra_is_named_when_it_is_needed(installed: Installed, tmp_path: Path):
    env = _env(installed, tmp_path)
    done = subprocess.run(["fp", "init", "--data-dir", "pg", "--database-url", "postgresql://fp@127.0.0.1:9/fp",
                           "--json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    problem = json.loads(done.stderr)
    assert problem["error"] == "validation-failed" and problem["missing_extra"] == "postgres"
    assert problem["next"] == "pip install 'fastpad[postgres]'"
    assert not (tmp_path / "pg" / "fastpad.json").exists(), "nothing half-written"
    local = tmp_path / "local"
    run(["fp", "init", "--data-dir", local, "--json"], cwd=tmp_path, env=env)
    config = local / "fastpad.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "embeddings": {"provider": "local"}}))
    asked = subprocess.run(["fp", "serve", "--data-dir", local, "--port", str(free_port())], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    assert asked.returncode == 2 and "pip install 'fastpad[embeddings]'" in asked.stderr, asked.stderr
