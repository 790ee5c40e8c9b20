"""The container image's steps (Dockerfile, compose.yaml) performed without a container runtime,
by tests/packaging/container.sh: SQLite as `docker run` gives it, then PostgreSQL as compose does."""

from __future__ import annotations

import subprocess

from tests.packaging.conftest import ROOT


def test_the_image_steps_serve_the_app_on_sqlite_and_on_postgres(pg_cluster):
    done = subprocess.run(["sh", str(ROOT / "tests" / "packaging" / "container.sh"), pg_cluster.blank_database()],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    assert "the image's steps work, on SQLite and on PostgreSQL" in done.stdout


def test_the_dockerfile_and_compose_file_run_only_those_steps():
    """What the shell test mirrors is what the image runs: every RUN, the entrypoint and the
    healthcheck are fastpad.sh commands (useradd aside: the test runs under that uid instead)."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    runs = [line for line in dockerfile.splitlines() if line.startswith(("RUN ", "ENTRYPOINT ", "HEALTHCHECK "))]
    assert runs and all("fastpad.sh" in line for line in runs), runs
    assert "USER 10001" in dockerfile and "VOLUME /data" in dockerfile and "python:3.11-slim" in dockerfile
    steps = (ROOT / "tests" / "packaging" / "container.sh").read_text()
    for step in ("wheel", "install", "volume", "start", "health"):
        assert f"fastpad.sh {step}" in dockerfile or f'fastpad.sh", "{step}"' in dockerfile, step
        assert f'fastpad.sh" {step}' in steps, step
    compose = (ROOT / "compose.yaml").read_text()
    assert "FASTPAD_DATABASE_URL: postgresql://" in compose and "pgvector/pgvector" in compose
