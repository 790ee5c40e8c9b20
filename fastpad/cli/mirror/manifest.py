"""``DIR/.fastpad/``: what a mirror knows about its files.

* ``manifest.json`` — the server, and per note its file, the frontier it was
  pulled (or last pushed) at and the SHA-256 of the file as written then. A file
  whose hash still matches has no local edits.
* ``base/<note id>.md`` — the file exactly as pulled: what a push diffs the
  edited file against, offline.
* ``pending/<key>.json`` — a push sent but not yet acknowledged (the journal):
  replayed with the same idempotency key by the next push, so an answer lost
  on the way never applies an edit twice and never loses one.

Every write goes to a temporary name first and is renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fastpad.errors import Conflict, FieldError, ValidationFailed

FORMAT = 1
META_DIR = ".fastpad"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


@dataclass
class Entry:
    file: str
    frontier: str
    sha256: str


class Mirror:
    """One mirror directory and its ``.fastpad/`` state."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.meta = root / META_DIR
        self.server: str | None = None
        self.notes: dict[str, Entry] = {}
        self._load()

    def _load(self) -> None:
        path = self.meta / "manifest.json"
        if not path.exists():
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            self.server = data.get("server")
            self.notes = {note_id: Entry(**entry) for note_id, entry in data.get("notes", {}).items()}
        except (ValueError, TypeError, AttributeError) as exc:
            raise ValidationFailed(
                detail=f"{path} is damaged ({exc}); pull into a fresh directory",
                field_errors=[FieldError("DIR", "manifest", "unreadable .fastpad/manifest.json")],
            ) from None

    @property
    def exists(self) -> bool:
        return (self.meta / "manifest.json").exists()

    def check_server(self, server: str) -> None:
        if self.server is not None and self.server.rstrip("/") != server.rstrip("/"):
            raise Conflict(detail=f"{self.root} mirrors {self.server}, not {server}; use another directory",
                           extra={"reason": "other_server", "mirrors": self.server})

    def save(self, server: str) -> None:
        self.server = server
        data = {"format": FORMAT, "server": server,
                "notes": {note_id: asdict(entry) for note_id, entry in sorted(self.notes.items())}}
        write_atomically(self.meta / "manifest.json", (json.dumps(data, indent=2) + "\n").encode())

    # ------------------------------------------------------------------ files

    def path(self, name: str) -> Path:
        return self.root / name

    def edited(self, note_id: str) -> bool:
        """Whether the note's file differs from what was last pulled or pushed (a missing file counts)."""
        entry = self.notes[note_id]
        path = self.path(entry.file)
        return not path.exists() or sha256(path.read_bytes()) != entry.sha256

    def base(self, note_id: str) -> str:
        return (self.meta / "base" / f"{note_id}.md").read_text(encoding="utf-8")

    def record(self, note_id: str, name: str, text: str, frontier: str) -> None:
        """Write a note's file and base copy as the server has it, and remember them."""
        data = text.encode("utf-8")
        previous = self.notes.get(note_id)
        write_atomically(self.meta / "base" / f"{note_id}.md", data)
        write_atomically(self.path(name), data)
        if previous is not None and previous.file != name:
            self.path(previous.file).unlink(missing_ok=True)  # the title changed: the old name goes
        self.notes[note_id] = Entry(name, frontier, sha256(data))

    def forget(self, note_id: str) -> None:
        entry = self.notes.pop(note_id)
        self.path(entry.file).unlink(missing_ok=True)
        (self.meta / "base" / f"{note_id}.md").unlink(missing_ok=True)

    def untracked(self) -> list[Path]:
        """Markdown files in the directory that no note owns yet: new notes for a push."""
        owned = {entry.file for entry in self.notes.values()}
        return sorted(p for p in self.root.glob("*.md") if p.is_file() and p.name not in owned)

    # ------------------------------------------------------------------ the push journal

    def journal(self) -> list[dict[str, Any]]:
        directory = self.meta / "pending"
        if not directory.is_dir():
            return []
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(directory.glob("*.json"))]

    def journal_add(self, record: dict[str, Any]) -> None:
        write_atomically(self.meta / "pending" / f"{record['key']}.json", json.dumps(record).encode())

    def journal_done(self, key: str) -> None:
        (self.meta / "pending" / f"{key}.json").unlink(missing_ok=True)
