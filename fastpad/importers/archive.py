"""Reading what an import is given — a folder or a zip — without trusting it and without changing it.

``open_archive(path)`` lists every file as an ``Entry`` with a path relative to
the archive's root ('/'-separated; a single top-level folder that holds
everything, like a vault's own folder or Notion's ``Export-…``, is the root).
Whole-archive problems are refused before anything is read, with a
``ValidationFailed`` naming the archive: a zip bomb (more uncompressed bytes
than ``ArchiveLimits`` allow, or an entry that inflates past the allowed
ratio), a path that climbs out of the archive (``../``, an absolute path), too
many entries, or something that is not a zip. Problems of one file — a path
too long or too deep, an encrypted zip entry, a symbolic link, a file the
operating system will not let us read — become that entry's ``problem`` and a
ledger row later; they never stop the rest.

Notion splits big exports into ``…-Part-N.zip`` files inside the zip it
hands out: an archive made only of zips is read through them.

The source is only ever opened for reading: files with ``open(…, "rb")``,
zips in mode ``"r"``; a zip inside a zip is copied to a temporary file first.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import IO, Protocol

from fastpad.errors import FieldError, ValidationFailed

MAX_PATH_CHARS = 4096  # spec › Import › path_too_long: a file's own path…
MAX_PATH_DEPTH = 256  # …or its depth, past which it is not read
_READ_CHUNK = 1 << 16
_DRIVE = re.compile(r"^[A-Za-z]:[/\\]")


@dataclass(frozen=True)
class ArchiveLimits:
    max_total_bytes: int = 4 << 30  # uncompressed, all entries together
    max_entries: int = 200_000
    max_ratio: int = 200  # uncompressed / compressed, per entry larger than ratio_floor_bytes
    ratio_floor_bytes: int = 1 << 20


@dataclass(frozen=True)
class Entry:
    path: str
    size: int
    problem: str | None = None  # why it cannot be read: path_too_long, encrypted, symlink, unreadable
    detail: str = ""

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def suffix(self) -> str:
        name = self.name
        return name.rsplit(".", 1)[-1].lower() if "." in name.lstrip(".") else ""


class EntryUnreadable(Exception):
    """Reading one entry failed; the message says why (it becomes the entry's ledger detail)."""


class Archive(Protocol):
    label: str  # the folder's or the zip's name, for titles and the summary
    entries: list[Entry]

    def read(self, path: str) -> bytes: ...

    def close(self) -> None: ...


_REFUSALS = {
    "not_found": "no such folder or file",
    "not_a_zip": "not a zip file",
    "too_many_entries": "too many files",
    "archive_too_large": "too large once uncompressed",
    "compression_ratio": "inflates like a zip bomb",
    "path_traversal": "an entry points outside the archive",
    "notion_html_export": "a Notion HTML export: export as Markdown & CSV instead",
    "unknown_source": "not a source this server imports",
}


def refuse(code: str, message: str) -> ValidationFailed:
    """The whole archive is refused (nothing was written): field ``archive``, ``code`` says why."""
    return ValidationFailed(detail=message, field_errors=[FieldError("archive", code, _REFUSALS[code])],
                            extra={"reason": code})


def open_archive(path: Path, limits: ArchiveLimits = ArchiveLimits(), *, label: str | None = None) -> Archive:
    """A folder or a zip file, listed and checked (see the module docstring). ``label``
    names it for people (default: the folder's name, or the zip's without ``.zip``)."""
    path = Path(path)
    if path.is_dir():
        archive: Archive = FolderArchive(path)
    elif path.is_file():
        archive = ZipArchive(path, limits)
    else:
        raise refuse("not_found", f"{path} is neither a folder nor a file")
    if label:
        archive.label = label
    return archive


# ---------------------------------------------------------------------- folders


class FolderArchive:
    """A folder, walked without following symbolic links. The folder is the root: its
    paths are the ones a zip of it would have once the zip's top folder is taken off."""

    def __init__(self, root: Path) -> None:
        self.label = root.resolve().name
        self.root = root
        self.entries = list(_walk(root, ""))

    def read(self, path: str) -> bytes:
        target = self.root.joinpath(*path.split("/"))
        try:
            with open(target, "rb") as handle:  # read-only: importing never modifies its source
                return handle.read()
        except OSError as exc:
            raise EntryUnreadable(f"could not be read: {exc.strerror or exc}") from None

    def close(self) -> None:
        return None


def _walk(folder: Path, prefix: str) -> Iterator[Entry]:
    try:
        with os.scandir(folder) as listing:
            children = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        yield Entry(prefix.rstrip("/") or ".", 0, "unreadable", f"folder could not be read: {exc.strerror or exc}")
        return
    for child in children:
        rel = prefix + child.name
        if len(rel) > MAX_PATH_CHARS or rel.count("/") + 1 > MAX_PATH_DEPTH:
            yield Entry(rel[:MAX_PATH_CHARS], 0, "path_too_long", _too_long_detail(rel))
            continue
        try:
            if child.is_symlink():
                yield Entry(rel, 0, "symlink", "a symbolic link; not followed")
            elif child.is_dir(follow_symlinks=False):
                yield from _walk(Path(child.path), rel + "/")
            elif child.is_file(follow_symlinks=False):
                yield Entry(rel, child.stat(follow_symlinks=False).st_size)
            else:
                yield Entry(rel, 0, "unreadable", "not a regular file")
        except OSError as exc:
            yield Entry(rel, 0, "unreadable", f"could not be read: {exc.strerror or exc}")


def _common_folder(entries: list[Entry]) -> str | None:
    """The one top-level folder every entry is inside, if there is one."""
    if not entries or any("/" not in e.path for e in entries):
        return None
    tops = {e.path.split("/", 1)[0] for e in entries}
    return tops.pop() if len(tops) == 1 else None


# ---------------------------------------------------------------------- zips


class ZipArchive:
    """A zip (or a zip of zips, as Notion's multi-part exports are), checked before any entry is read."""

    def __init__(self, path: Path, limits: ArchiveLimits) -> None:
        self.label = path.stem
        self._limits = limits
        self._budget = limits.max_total_bytes
        self._open: list[zipfile.ZipFile] = []
        self._temps: list[IO[bytes]] = []
        self._where: dict[str, tuple[zipfile.ZipFile, zipfile.ZipInfo]] = {}
        try:
            outer = self._zip(path)
            members = self._members(outer)
            if members and all(info.filename.lower().endswith(".zip") for info in members):
                entries = []
                for info in members:
                    entries += self._list(self._zip(self._copy(outer, info)))
            else:
                entries = self._list(outer)
        except BaseException:
            self.close()
            raise
        top = _common_folder(entries)
        if top is not None:
            self._where = {path[len(top) + 1:]: where for path, where in self._where.items()}
            entries = [replace(e, path=e.path[len(top) + 1:]) for e in entries]
        self.entries = entries

    def read(self, path: str) -> bytes:
        where = self._where.get(path)
        if where is None:
            raise EntryUnreadable("not in the archive")
        archive, info = where
        out = bytearray()
        try:
            with archive.open(info) as handle:
                while chunk := handle.read(_READ_CHUNK):
                    out += chunk
                    if len(out) > info.file_size:  # never trust the header beyond what it declared
                        raise EntryUnreadable("inflates past its declared size")
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError) as exc:
            raise EntryUnreadable(f"could not be read: {exc}") from None
        return bytes(out)

    def close(self) -> None:
        for archive in self._open:
            archive.close()
        for temp in self._temps:
            temp.close()
        self._open, self._temps = [], []

    # ------------------------------------------------------------------ internals

    def _zip(self, source: Path | IO[bytes]) -> zipfile.ZipFile:
        try:
            archive = zipfile.ZipFile(source, "r")
        except (zipfile.BadZipFile, OSError) as exc:
            raise refuse("not_a_zip", f"the archive is not a zip file ({exc})") from None
        self._open.append(archive)
        return archive

    def _members(self, archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
        infos = [info for info in archive.infolist() if not info.is_dir()]
        if len(infos) > self._limits.max_entries:
            raise refuse("too_many_entries",
                         f"the archive holds {len(infos):,} files; an import takes at most "
                         f"{self._limits.max_entries:,}")
        for info in archive.infolist():
            _check_traversal(info.filename)
        total = sum(info.file_size for info in infos)
        if total > self._budget:
            raise refuse("archive_too_large",
                         f"the archive inflates to {total:,} bytes; an import takes at most "
                         f"{self._limits.max_total_bytes:,} bytes uncompressed")
        self._budget -= total
        for info in infos:
            if (info.file_size > self._limits.ratio_floor_bytes
                    and info.file_size > self._limits.max_ratio * max(info.compress_size, 1)):
                raise refuse("compression_ratio",
                              f"{info.filename} inflates {info.file_size // max(info.compress_size, 1):,}-fold "
                              f"(at most {self._limits.max_ratio}-fold is accepted): a zip bomb, or close to one")
        return infos

    def _copy(self, outer: zipfile.ZipFile, info: zipfile.ZipInfo) -> IO[bytes]:
        temp = tempfile.TemporaryFile()
        self._temps.append(temp)
        written = 0
        with outer.open(info) as handle:
            while chunk := handle.read(_READ_CHUNK):
                written += len(chunk)
                if written > info.file_size:
                    raise refuse("archive_too_large", f"{info.filename} inflates past its declared size")
                temp.write(chunk)
        temp.seek(0)
        return temp

    def _list(self, archive: zipfile.ZipFile) -> list[Entry]:
        entries = []
        for info in self._members(archive):
            path = info.filename.replace("\\", "/")
            if path in self._where:
                entries.append(Entry(path, info.file_size, "duplicate", "the archive holds this path twice; "
                                                                          "the first copy was read"))
                continue
            problem, detail = None, ""
            mode = info.external_attr >> 16
            if len(path) > MAX_PATH_CHARS or path.count("/") + 1 > MAX_PATH_DEPTH:
                problem, detail = "path_too_long", _too_long_detail(path)
                path = path[:MAX_PATH_CHARS]
            elif info.flag_bits & 0x1:
                problem, detail = "encrypted", "the zip entry is encrypted"
            elif stat.S_ISLNK(mode):
                problem, detail = "symlink", "a symbolic link; not followed"
            self._where[path] = (archive, info)
            entries.append(Entry(path, info.file_size, problem, detail))
        return entries


def _check_traversal(name: str) -> None:
    """Refuse an entry that would land outside the archive if it were extracted."""
    path = name.replace("\\", "/")
    parts = PurePosixPath(path).parts
    if path.startswith("/") or _DRIVE.match(path) or ".." in parts or "\0" in path:
        raise refuse("path_traversal",
                      f"the archive holds an entry named {name!r}, which points outside the archive; "
                      "nothing was imported")


def _too_long_detail(path: str) -> str:
    return (f"its path is {len(path):,} characters and {path.count('/') + 1} levels deep; files past "
            f"{MAX_PATH_CHARS:,} characters or {MAX_PATH_DEPTH} levels are not read")
