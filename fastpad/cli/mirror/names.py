"""A mirror file's name: the note's title made safe, then its id.

The title is redacted first and its URLs neutralised (the outbound path's own
functions), so a key pasted into a title never becomes a file name on disk;
then only letters, digits, ``-`` and ``_`` are kept. The note id ends the name,
so two notes with one title are two files, and the name alone says which note
a file is.
"""

from __future__ import annotations

import re
import unicodedata

from fastpad.notes.ids import is_ulid

SUFFIX = ".md"
MAX_STEM = 60
_UNSAFE = re.compile(r"[^\w-]+", re.UNICODE)
_DASHES = re.compile(r"-{2,}")
_NAME = re.compile(r"^(?:.*-)?([0-7][0-9A-HJKMNP-TV-Z]{25})\.md$")
_NAME_KEY = b"fastpad mirror file names"  # redaction needs a key for fingerprints; a file name drops them


def safe_title(title: str) -> str:
    """The title with every credential replaced by ``redacted`` and every URL defanged."""
    from fastpad.outbound.links import neutralize
    from fastpad.outbound.secrets import PLACEHOLDER_RE, redact

    masked = PLACEHOLDER_RE.sub("redacted", redact(title, _NAME_KEY).text)
    return neutralize(masked)


def file_name(title: str, note_id: str) -> str:
    if not is_ulid(note_id):
        raise ValueError(f"not a note id: {note_id!r}")
    stem = unicodedata.normalize("NFKC", safe_title(title)).lower()
    stem = _DASHES.sub("-", _UNSAFE.sub("-", stem)).strip("-_")[:MAX_STEM].rstrip("-_")
    return f"{stem or 'untitled'}-{note_id}{SUFFIX}"


def note_id_of(name: str) -> str | None:
    """The note id a mirror file name ends with, if it has one."""
    match = _NAME.match(name)
    return match.group(1) if match and is_ulid(match.group(1)) else None
