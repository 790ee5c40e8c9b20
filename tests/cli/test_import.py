"""`fp import` as a real subprocess: to a real server over HTTP, and straight into a data directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.api.conftest import run_fp
from tests.cli.conftest import CliServer, Fp
from tests.importers.fixtures import NOTION, NOTION_ROOT, OBSIDIAN, write_tree, zip_tree


def test_import_a_folder_over_http_prints_the_summary_and_every_row(fp: Fp, cli_server: CliServer,
                                                                     person_env: dict[str, str], tmp_path: Path):
    vault = write_tree(tmp_path / "Cli vault", OBSIDIAN)
    result = fp("import", str(vault), "--json", env=person_env)
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["import"]["status"] == "completed" and printed["import"]["label"] == "Cli vault"
    assert printed["import"]["summary"]["text"] == "imported 5 of 8 notes, and here is each of the 3 we did not"
    assert {row["item"] for row in printed["ledger"] if row["kind"] != "link"} == set(OBSIDIAN)

    lines = fp("import", str(vault), "--ndjson", env=person_env)
    assert lines.returncode == 0, lines.stderr
    first, *rows = [json.loads(line) for line in lines.stdout.splitlines()]
    assert first["summary"]["notes"]["unchanged"] == 5 and len(rows) == len(printed["ledger"])

    text = fp("import", str(vault), env=person_env)
    assert text.returncode == 0 and text.stdout.startswith("imported 5 of 8 notes")
    assert "Latin.md\tskipped\tparse_error" in text.stdout


def test_import_refusals_and_exit_codes(fp: Fp, person_env: dict[str, str], tmp_path: Path):
    html = zip_tree(tmp_path / "html.zip", {"Page 0123456789abcdef0123456789abcdef.html": "<html/>"}, top="x")
    refused = fp("import", str(html), "--json", env=person_env)
    assert refused.returncode == 2 and refused.stdout == ""
    problem = json.loads(refused.stderr.splitlines()[-1])
    assert problem["error"] == "validation-failed" and problem["field_errors"][0]["code"] == "notion_html_export"

    odd = write_tree(tmp_path / "odd", {"ok.md": "fine"})
    os.mkfifo(odd / "pipe.md")
    unreadable = fp("import", str(odd), env=person_env)
    assert unreadable.returncode == 2 and "not a regular file" in unreadable.stderr
    assert fp("import", str(tmp_path / "absent"), env=person_env).returncode == 2

    dry = fp("import", str(write_tree(tmp_path / "dry", OBSIDIAN)), "--dry-run", "--json", env=person_env)
    assert dry.returncode == 0 and json.loads(dry.stdout) == {
        "path": str(tmp_path / "dry"), "label": "dry", "source": "obsidian", "files": len(OBSIDIAN),
        "bytes": sum(len(v.encode() if isinstance(v, str) else v) for v in OBSIDIAN.values())}


def test_import_into_a_data_directory_without_a_server(fp: Fp, tmp_path: Path):
    data_dir = tmp_path / "data"
    run_fp("init", "--data-dir", str(data_dir), "--json")
    export = zip_tree(tmp_path / "notion.zip", NOTION, top=NOTION_ROOT)
    result = fp("import", str(export), "--data-dir", str(data_dir), "--json")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["import"]["source"] == "notion"
    assert printed["import"]["summary"]["notes"] == {"total": 8, "imported": 8, "unchanged": 0, "not_imported": 0}
    reasons = {row["reason"] for row in printed["ledger"]}
    assert {"comments_not_in_export", "path_too_long", "database_view", "unsupported_attachment"} <= reasons
