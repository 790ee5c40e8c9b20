"""Imports: the two real archives in the shared corpora and a generated 5,000-note vault.

    python bench/import.py [DIR]     (DIR: the shared corpora; default ../shared/corpora)

Each import runs in a child process of its own (so its peak memory is its
own), into a fresh SQLite deployment with embeddings off, through
``ImportService.run`` — the same path ``fp import --data-dir`` takes. Reported
per archive: notes/s, the ledger's counts by status and reason, the share of
the archive's files the ledger accounts for, and the child's peak RSS. The
Notion HTML export is offered too and must be refused before anything is
written. The generated vault is imported on PostgreSQL as well, for comparison.

Targets: the real vault's ledger accounts for 100% of its files; 5,000 notes
import at ≥ 200 notes/s without embeddings.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import write_result  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GENERATED_NOTES = 5_000
TARGET_NOTES_PER_S = 200
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 2000


def generate_vault(root: Path, notes: int = GENERATED_NOTES, documents: Sequence[tuple[str, str]] = ()) -> Path:
    """An Obsidian-like vault: folders, frontmatter with tags and aliases, headings, lists, wikilinks
    (with aliases and headings, 1% pointing nowhere), embedded images and a settings folder.
    ``documents`` (name, text) give the first notes their names and their text in place of
    words drawn from a small vocabulary (the names must be distinct and fit a file name)."""
    rng = random.Random(9)
    names = [name for name, _ in documents[:notes]] + [f"Note {i:05d}" for i in range(len(documents), notes)]
    words = ("retrieval", "graph", "ledger", "import", "vault", "canvas", "agent", "review", "search", "block")
    (root / ".obsidian").mkdir(parents=True)
    (root / ".obsidian" / "app.json").write_text("{}")
    (root / "assets").mkdir()
    for i in range(10):
        (root / "assets" / f"figure {i}.png").write_bytes(PNG + bytes([i]))
    for i, name in enumerate(names):
        folder = root / f"Area {i % 50:02d}"
        folder.mkdir(exist_ok=True)
        links = []
        for _ in range(3):
            target = rng.choice(names)
            links.append(rng.choice([f"[[{target}]]", f"[[{target}|see this]]", f"[[{target}#Details]]"]))
        if rng.random() < 0.01:
            links.append(f"[[Missing {i}]]")
        text = documents[i][1] if i < len(documents) else " ".join(rng.choice(words) for _ in range(40))
        front = f"---\ntags: [area{i % 50}, {rng.choice(words)}]\naliases: [Alias {i}]\n---\n" if i % 3 == 0 else ""
        embed = f"\n\n![[figure {i % 10}.png]]" if i % 25 == 0 else ""
        (folder / f"{name}.md").write_text(
            f"{front}# {name}\n\n{text}\n\n## Details\n\n- first {rng.choice(words)}\n- second {rng.choice(words)}\n"
            f"- links: {' '.join(links)}\n\n{text[:120]}{embed}\n", encoding="utf-8")
    return root


def run_case(path: str, database_url: str | None) -> dict:
    """One import into a fresh deployment (in this process); its figures."""
    from fastpad.deployment import CONFIG_NAME, init_deployment, open_deployment
    from fastpad.errors import ValidationFailed
    from fastpad.importers.service import ImportService

    with tempfile.TemporaryDirectory(prefix="fastpad-bench-import-") as tmp:
        data_dir = Path(tmp) / "data"
        init_deployment(data_dir, database_url)
        config_path = data_dir / CONFIG_NAME
        config = json.loads(config_path.read_text())
        config["embeddings"] = {"provider": "none"}  # the import alone: no embedding model loaded or run
        config_path.write_text(json.dumps(config))
        deployment = open_deployment(data_dir)
        try:
            service = ImportService(deployment.store, deployment.notes, deployment.types)
            principal = deployment.operator_principal()
            start = time.perf_counter()
            try:
                view = service.run(principal, Path(path))
            except ValidationFailed as refusal:
                notes = deployment.notes.list(principal, limit=1, include_trashed=True).items
                return {"refused": True, "code": refusal.field_errors[0].code, "detail": str(refusal),
                        "notes_written": len(notes)}
            seconds = time.perf_counter() - start
            rows, cursor = [], None
            while True:
                page = service.ledger(principal, view.id, cursor=cursor, limit=1000)
                rows += page.items
                if page.next_cursor is None:
                    break
                cursor = page.next_cursor
        finally:
            deployment.close()
    summary = view.summary or {}
    items = {r.item for r in rows if r.kind not in ("link", "links_more", "links_left_out", "comments")
             and "#row " not in r.item}
    created = summary["notes"]["imported"]
    return {
        "refused": False, "status": view.status, "seconds": round(seconds, 3),
        "notes_per_s": round(created / seconds, 1) if seconds else None,
        "summary": summary["text"], "notes": summary["notes"], "attachments": summary["attachments"],
        "ledger_rows": len(rows), "by_status": dict(Counter(r.status for r in rows)),
        "by_reason": dict(Counter(r.reason for r in rows if r.reason)),
        "link_rows": summary["link_rows"], "archive_items_in_ledger": len(items),
        "unresolved_link_targets": sorted({r.target for r in rows if r.reason == "unresolved_wikilink"}),
    }


def child(path: Path, database_url: str | None = None) -> dict:
    """``run_case`` in a child process, with the child's peak resident memory."""
    command = [sys.executable, __file__, "--case", str(path)] + ([database_url] if database_url else [])
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def files_in(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def main(corpora: Path) -> None:
    from bench.servers import postgres

    vault = corpora / "obsidian" / "tasks-demo-vault"
    notion = corpora / "notion" / "obsidian-importer__Notion.Test.Export.zip"
    html = corpora / "notion" / "obsidian-importer__notion-testspace.HTML.zip"
    figures: dict = {}
    figures["obsidian_tasks_demo_vault"] = child(vault)
    figures["obsidian_tasks_demo_vault"]["files_in_folder"] = files_in(vault)
    figures["obsidian_tasks_demo_vault"]["ledger_accounts_for_pct"] = round(
        100 * figures["obsidian_tasks_demo_vault"]["archive_items_in_ledger"] / files_in(vault), 2)
    figures["notion_markdown_csv_export"] = child(notion)
    figures["notion_html_export"] = child(html)
    with tempfile.TemporaryDirectory(prefix="fastpad-bench-vault-") as tmp:
        generated = generate_vault(Path(tmp) / "Generated vault")
        figures["generated_5000_sqlite"] = child(generated)
        figures["generated_5000_sqlite"]["files_in_folder"] = files_in(generated)
        with postgres() as url:
            figures["generated_5000_postgres"] = child(generated, url)
    real = figures["obsidian_tasks_demo_vault"]
    fast = figures["generated_5000_sqlite"]
    targets = {
        "real_vault_ledger_accounts_for_pct": {"target": 100, "actual": real["ledger_accounts_for_pct"],
                                               "met": real["ledger_accounts_for_pct"] == 100},
        "generated_5000_notes_per_s_sqlite": {"target": TARGET_NOTES_PER_S, "actual": fast["notes_per_s"],
                                              "met": fast["notes_per_s"] >= TARGET_NOTES_PER_S},
        "notion_html_export_refused": {"target": True, "actual": figures["notion_html_export"]["refused"],
                                       "met": figures["notion_html_export"]["refused"]
                                       and figures["notion_html_export"]["notes_written"] == 0},
    }
    print(json.dumps({"figures": figures, "targets": targets}, indent=2))
    print(write_result("import", figures, targets))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--case":
        result = run_case(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
        result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        print(json.dumps(result))
    else:
        main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpora")
