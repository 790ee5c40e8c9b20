"""``fp import PATH``: an Obsidian vault, a Notion Markdown & CSV export or a Markdown folder (a folder or a zip).

To the server you are logged in to: a folder is zipped into a temporary file
(the source is only read), uploaded in parts to ``/v1/imports`` and imported
there while a progress bar follows ``GET /v1/imports/{id}``. With
``--data-dir`` the import runs right here against that deployment instead —
no server needed. Either way the result is the ledger: a row for every item
the archive held. ``--json`` prints the import (its summary) and every ledger
row; ``--ndjson`` the import, then one row per line. Ctrl+C cancels: what
already landed stays, and the ledger says which items were not reached.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
import time
import uuid
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Callable

import click

from fastpad.cli import exit_codes
from fastpad.cli.options import FpCommand, settings
from fastpad.cli.output import Output
from fastpad.errors import FieldError, ValidationFailed

SOURCES = ("obsidian", "notion", "markdown")
PART_BYTES = 4 << 20
POLL_S = 0.3
LEDGER_PAGE = 1000


@click.command("import", cls=FpCommand)
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--source", type=click.Choice(SOURCES), default=None, help="What PATH is (default: detected).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Import into this deployment directly, without a server.")
def import_(path: Path, source: str | None, data_dir: Path | None) -> int:
    """Import PATH (a folder or a zip) and print its ledger: a row for every item, each skip with its reason."""
    out = Output()
    if settings.dry_run:
        return _dry_run(out, path, source)
    stop = _StopOnInterrupt()
    with stop, _ProgressBar(out) as bar:
        if data_dir is not None:
            view, ledger = _run_locally(data_dir, path, source, bar.update, stop)
        else:
            view, ledger = _run_remotely(out, path, source, bar, stop)
    _report(out, view, ledger)
    if view["status"] == "cancelled":
        return 130
    if view["status"] != "completed":
        problem = view.get("problem") or {}
        out.note(f"fp: the import {view['status']}: {problem.get('detail', '')}")
        return exit_codes.UNCLASSIFIED
    return exit_codes.OK


# ---------------------------------------------------------------------- here, against a data directory


def _run_locally(data_dir: Path, path: Path, source: str | None, progress: Callable[[dict[str, Any]], None],
                 stop: "_StopOnInterrupt") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from fastpad.deployment import open_deployment
    from fastpad.importers.service import ImportService, ledger_entry_dict

    deployment = open_deployment(data_dir)
    try:
        service = ImportService(deployment.store, deployment.notes, deployment.types)
        principal = deployment.operator_principal()
        view = service.run(principal, path, source=source, on_progress=progress, should_stop=stop.requested)
        rows, cursor = [], None
        while True:
            page = service.ledger(principal, view.id, cursor=cursor, limit=LEDGER_PAGE)
            rows += [ledger_entry_dict(e) for e in page.items]
            if page.next_cursor is None:
                return view.as_dict(), rows
            cursor = page.next_cursor
    finally:
        deployment.close()


# ---------------------------------------------------------------------- over HTTP


def _run_remotely(out: Output, path: Path, source: str | None, bar: "_ProgressBar",
                  stop: "_StopOnInterrupt") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from fastpad.cli.client import RemoteProblem, connect

    api = connect()
    with tempfile.TemporaryFile() as spooled, _archive_file(path, spooled) as (archive, name):
        size = archive.seek(0, os.SEEK_END)
        view = api.request("POST", "/v1/imports", json={"size": size, "source": source, "name": name,
                                                        "idempotencyKey": f"fp-import-{uuid.uuid4()}"}).json()
        offset = 0
        out.note(f"Uploading {name} ({size:,} bytes)…")
        while offset < size and not stop.requested():
            archive.seek(offset)
            part = archive.read(PART_BYTES)
            try:
                view = api.request("PUT", f"/v1/imports/{view['id']}/archive", params={"offset": offset},
                                   content=part, headers={"content-type": "application/octet-stream"}).json()
                offset += len(part)
            except RemoteProblem as problem:
                if problem.extra.get("reason") != "offset":
                    raise
                offset = int(problem.extra["received_bytes"])  # resume where the server is
    cancelled = False
    while not _finished(view):
        if stop.requested() and not cancelled:
            cancelled = True
            view = api.request("POST", f"/v1/imports/{view['id']}/cancel", json={}).json()
            continue
        bar.update(view.get("progress") or {})
        time.sleep(POLL_S)
        view = api.request("GET", f"/v1/imports/{view['id']}").json()
    bar.update(view.get("progress") or {})
    rows, cursor = [], None
    while True:
        params: dict[str, Any] = {"limit": LEDGER_PAGE, **({"cursor": cursor} if cursor else {})}
        page = api.request("GET", f"/v1/imports/{view['id']}/ledger", params=params).json()
        rows += page["items"]
        if not page["next_cursor"]:
            return view, rows
        cursor = page["next_cursor"]


def _finished(view: dict[str, Any]) -> bool:
    return view["status"] in ("completed", "cancelled", "failed", "interrupted")


@contextmanager
def _archive_file(path: Path, spooled: IO[bytes]) -> Iterator[tuple[IO[bytes], str]]:
    """The zip to upload: the file itself, or the folder zipped into ``spooled`` under its own name."""
    if path.is_file():
        with path.open("rb") as handle:
            yield handle, path.name
        return
    with zipfile.ZipFile(spooled, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in _walk(path):
            arcname = f"{path.name}/{file.relative_to(path).as_posix()}"
            if file.is_symlink():  # carried as a link (the server lists it, never follows it)
                info = zipfile.ZipInfo(arcname)
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                archive.writestr(info, os.readlink(file))
                continue
            try:
                if not file.is_file():
                    raise OSError(0, "not a regular file")
                archive.write(file, arcname)
            except OSError as exc:
                raise ValidationFailed(
                    detail=f"cannot read {file}: {exc.strerror or exc}; nothing was uploaded",
                    field_errors=[FieldError("path", "unreadable", f"{file}: {exc.strerror or exc}")],
                    next_call="fix the file, or import with --data-dir where the server runs to get a ledger "
                              "row for it",
                ) from None
    yield spooled, f"{path.name}.zip"


def _walk(folder: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        base = Path(root)
        found += [base / name for name in files]
        found += [base / name for name in dirs if (base / name).is_symlink()]
    return sorted(found)


# ---------------------------------------------------------------------- what is printed


def _report(out: Output, view: dict[str, Any], ledger: list[dict[str, Any]]) -> None:
    if settings.ndjson:
        out.line(view)
        for row in ledger:
            out.line(row)
        return
    if settings.json:
        out.result({"import": view, "ledger": ledger})
        return
    summary = view.get("summary") or {}
    out.text(f"{summary.get('text') or view['status']} ({view['label']}, {view['source']}; import {view['id']})")
    missed = [r for r in ledger if r["status"] not in ("imported", "stored", "defined", "unchanged")]
    if missed:
        out.table(["item", "status", "reason", "detail"],
                  ([r["item"] or "—", r["status"], r["reason"] or "", r["target"] or r["detail"]] for r in missed))
    reasons = summary.get("reasons") or {}
    if reasons:
        out.say("By reason: " + ", ".join(f"{reason} {count:,}" for reason, count in reasons.items()))


def _dry_run(out: Output, path: Path, source: str | None) -> int:
    from fastpad.importers.archive import open_archive
    from fastpad.importers.detect import detect_source

    archive = open_archive(path)
    try:
        plan = {"path": str(path), "label": archive.label, "source": detect_source(archive.entries, source),
                "files": len(archive.entries), "bytes": sum(e.size for e in archive.entries)}
    finally:
        archive.close()
    out.result(plan, lambda p: out.text(f"Would import {p['files']:,} files ({p['bytes']:,} bytes) from {p['path']} "
                                        f"as {p['source']}"))
    return exit_codes.OK


class _ProgressBar:
    """Notes imported so far, as a bar on a terminal (nothing otherwise)."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.bar: Any = None
        self.shown = 0

    def __enter__(self) -> "_ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def update(self, progress: dict[str, Any]) -> None:
        total, done = progress.get("notes_total"), progress.get("notes_done") or 0
        if not total:
            return
        if self.bar is None:
            self.bar = self.out.progress(total, "Importing notes").__enter__()
        self.bar.advance(done - self.shown)
        self.shown = done


class _StopOnInterrupt:
    """The first Ctrl+C asks the import to stop after the batch in flight; a second one is the default."""

    def __init__(self) -> None:
        self._asked = False
        self._previous: Any = None

    def requested(self) -> bool:
        return self._asked

    def __enter__(self) -> "_StopOnInterrupt":
        def ask(signum: int, frame: Any) -> None:
            self._asked = True
            signal.signal(signal.SIGINT, self._previous)
            Output().note("fp: stopping after the batch in flight (Ctrl+C again to abort at once)")

        self._previous = signal.signal(signal.SIGINT, ask)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)

