"""Reading archives without trusting them: refusals, per-file problems, and the source left untouched (pure)."""

from __future__ import annotations

import hashlib
import os
import stat
import zipfile
from pathlib import Path

import pytest

from fastpad.errors import ValidationFailed
from fastpad.importers.archive import ArchiveLimits, EntryUnreadable, open_archive
from fastpad.importers.detect import detect_source
from tests.importers.fixtures import NOTION, OBSIDIAN, write_tree, zip_tree


def mark_encrypted(path: Path, name: str) -> None:
    """Set an entry's "encrypted" flag (zipfile cannot write encrypted entries) in both of its headers."""
    data = bytearray(path.read_bytes())
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        while at != -1:
            name_at = at + (30 if signature == b"PK\x03\x04" else 46)
            if data[name_at:name_at + len(name)] == name.encode():
                data[at + flag_at] |= 0x1
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))


def refusal(excinfo: pytest.ExceptionInfo[ValidationFailed]) -> str:
    return excinfo.value.field_errors[0].code


def test_a_zip_is_read_below_its_one_top_folder_and_a_folder_from_itself(tmp_path: Path) -> None:
    archive = open_archive(zip_tree(tmp_path / "v.zip", {"a.md": "x", "b/c.md": "y"}, top="My vault"))
    assert [e.path for e in archive.entries] == ["a.md", "b/c.md"] and archive.label == "v"
    assert archive.read("b/c.md") == b"y"
    archive.close()
    folder = open_archive(write_tree(tmp_path / "folder", {"only/a.md": "x"}))
    assert [e.path for e in folder.entries] == ["only/a.md"] and folder.label == "folder"


def test_a_zip_bomb_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("vault/zeros.md", b"\0" * (8 << 20))
    with pytest.raises(ValidationFailed) as ratio:
        open_archive(bomb)
    assert refusal(ratio) == "compression_ratio"
    with pytest.raises(ValidationFailed) as total:
        open_archive(zip_tree(tmp_path / "big.zip", {"a.md": "x" * 5000}), ArchiveLimits(max_total_bytes=4096))
    assert refusal(total) == "archive_too_large"
    with pytest.raises(ValidationFailed) as many:
        open_archive(zip_tree(tmp_path / "many.zip", {f"{i}.md": "x" for i in range(5)}), ArchiveLimits(max_entries=4))
    assert refusal(many) == "too_many_entries"


@pytest.mark.parametrize("name", ["../escape.md", "vault/../../escape.md", "/etc/passwd", "C:\\Windows\\x.md",
                                  "vault\\..\\..\\x.md"])
def test_an_entry_that_climbs_out_of_the_archive_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("vault/fine.md", "fine")
        z.writestr(zipfile.ZipInfo(name), "evil")
    with pytest.raises(ValidationFailed) as excinfo:
        open_archive(path)
    assert refusal(excinfo) == "path_traversal"


def test_not_a_zip_and_nothing_there_are_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.zip").write_text("plain text")
    with pytest.raises(ValidationFailed) as excinfo:
        open_archive(tmp_path / "notes.zip")
    assert refusal(excinfo) == "not_a_zip"
    with pytest.raises(ValidationFailed) as missing:
        open_archive(tmp_path / "absent")
    assert refusal(missing) == "not_found"


def test_problems_of_one_entry_stay_with_that_entry(tmp_path: Path) -> None:
    path = tmp_path / "odd.zip"
    deep = "/".join(["d"] * 257) + "/deep.md"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("v/ok.md", "ok")
        z.writestr("v/" + "x" * 4100 + ".md", "long")
        z.writestr("v/" + deep, "deep")
        locked = zipfile.ZipInfo("v/locked.md")
        locked.flag_bits |= 0x1
        z.writestr(locked, "ciphertext")
        link = zipfile.ZipInfo("v/link.md")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(link, "/etc/passwd")
    mark_encrypted(path, "v/locked.md")
    archive = open_archive(path)
    problems = {e.path[:12]: e.problem for e in archive.entries}
    assert problems == {"ok.md": None, "x" * 12: "path_too_long", "d/d/d/d/d/d/": "path_too_long",
                        "locked.md": "encrypted", "link.md": "symlink"}
    archive.close()


def test_a_folder_with_a_file_it_cannot_read(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "v", {"ok.md": "ok", "locked.md": "secret"})
    os.symlink("/etc/hostname", root / "outside.md")
    archive = open_archive(root)
    entries = {e.path: e.problem for e in archive.entries}
    assert entries == {"locked.md": None, "ok.md": None, "outside.md": "symlink"}
    # Root reads even a file of mode 0 (where the suite runs as root the check never ran), so the
    # listed file becomes what no process can read as a file — a folder — before it is read, as
    # when a vault changes under an import.
    (root / "locked.md").unlink()
    (root / "locked.md").mkdir()
    with pytest.raises(EntryUnreadable, match="could not be read"):
        archive.read("locked.md")
    assert archive.read("ok.md") == b"ok"


def test_notion_parts_inside_a_zip_are_read_through(tmp_path: Path) -> None:
    part = zip_tree(tmp_path / "Export-x-Part-1.zip", NOTION, top="Export-x")
    outer = tmp_path / "export.zip"
    with zipfile.ZipFile(outer, "w") as z:
        z.write(part, "Export-x-Part-1.zip")
    archive = open_archive(outer)
    assert len(archive.entries) == len(NOTION) and "index.html" in {e.path for e in archive.entries}
    assert detect_source(archive.entries) == "notion"
    archive.close()


def test_sources_are_detected_and_a_notion_html_export_is_refused(tmp_path: Path) -> None:
    vault = open_archive(write_tree(tmp_path / "vault", OBSIDIAN))
    assert detect_source(vault.entries) == "obsidian"
    assert detect_source(vault.entries, "markdown") == "markdown"
    html = open_archive(write_tree(tmp_path / "html", {
        "Space 0123456789abcdef0123456789abcdef.html": "<html/>",
        "Space 0123456789abcdef0123456789abcdef/Page fedcba9876543210fedcba9876543210.html": "<html/>",
        "index.html": "<html/>"}))
    for named in (None, "notion", "markdown"):
        with pytest.raises(ValidationFailed) as excinfo:
            detect_source(html.entries, named)
        assert refusal(excinfo) == "notion_html_export"
        assert "Markdown & CSV" in str(excinfo.value)
    with pytest.raises(ValidationFailed):
        detect_source(vault.entries, "evernote")


def test_reading_never_modifies_the_source(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "vault", OBSIDIAN)
    zipped = zip_tree(tmp_path / "vault.zip", OBSIDIAN)

    def fingerprint() -> dict[str, tuple[str, float]]:
        return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime)
                for p in sorted(tmp_path.rglob("*")) if p.is_file()}

    before = fingerprint()
    for source in (root, zipped):
        archive = open_archive(source)
        for entry in archive.entries:
            archive.read(entry.path)
        archive.close()
    assert fingerprint() == before
