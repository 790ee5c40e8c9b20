"""What an archive file is, and its text as blocks — the checks every source shares.

- ``decode``: text is UTF-8 (a BOM is dropped); anything else is a
  ``parse_error`` — the file was not what its extension claimed.
- ``encrypted``: a note we cannot read and will not guess at (PGP or age
  armour, an Obsidian encryption plugin's whole-note block or file type).
- ``attachment_type``: images and PDFs are stored, once their first bytes
  agree with their extension; other files are not.
- ``read_blocks``: the Markdown codec's reading, for text nobody wrote for
  Fastpad. The codec mints no ids (and any ``{#ULID}`` anchors in the file are
  dropped: an import makes new notes with new ids). Frontmatter that is not
  valid YAML is kept, verbatim, as a code block at the top; a ``{#…}`` at a line
  end that is not a block id is kept as text.
"""

from __future__ import annotations

import re

from fastpad.errors import ValidationFailed
from fastpad.knowledge.attachments import STORED_TYPES
from fastpad.notes import Block, NoteMeta, parse_markdown
from fastpad.notes.blocks import CODE
from fastpad.notes.ids import ULID_PATTERN

ENCRYPTED_SUFFIXES = frozenset({"mdenc", "encrypted", "gpg", "pgp", "age"})
_ARMOUR = ("-----BEGIN PGP MESSAGE-----", "age-encryption.org/v1", "-----BEGIN AGE ENCRYPTED FILE-----")
# Meld Encrypt's whole-note form: the body is one %%🔐 … 🔐%% block.
_WHOLE_NOTE_BLOCK = re.compile(r"^\s*(?:---\n.*?\n---\s*)?%%🔐.*?🔐%%\s*$", re.S)
_FRONTMATTER = re.compile(r"^---\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)", re.S)
_STRAY_ANCHOR = re.compile(r"\{#(?!" + ULID_PATTERN + r"\})([^\s{}]*)\}")


class NotText(Exception):
    """The bytes are not UTF-8 text."""


def decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText(f"not UTF-8 text (byte {exc.start:,} is 0x{data[exc.start]:02x})") from None
    if "\x00" in text:
        raise NotText("holds NUL bytes: binary data, not text")
    return text.removeprefix("\ufeff")


def encrypted(text: str) -> bool:
    head = text.lstrip()[:64]
    return head.startswith(_ARMOUR) or bool(_WHOLE_NOTE_BLOCK.match(text))


def attachment_type(suffix: str) -> str | None:
    """The media type an attachment with this extension is stored as (None: not stored)."""
    return STORED_TYPES.get(suffix)


def read_blocks(text: str) -> tuple[NoteMeta, list[Block], str]:
    """(frontmatter, blocks without ids, a remark for the ledger or ""). Raises ValidationFailed
    when the text cannot be read as Markdown even so."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    remark = ""
    try:
        parsed = parse_markdown(text)
    except ValidationFailed as error:
        codes = {fe.code for fe in error.field_errors}
        if "malformed_frontmatter" in codes:
            front = _FRONTMATTER.match(text)
            if front is None:  # a '---' that never closes is a divider, not frontmatter
                meta, blocks, _ = read_blocks("\n" + text)
                return meta, blocks, "the '---' on its first line opens no frontmatter; read as text"
            meta, blocks, _ = read_blocks(text[front.end():])
            kept = Block(None, CODE, front.group(1), {"language": "yaml"})
            return meta, [kept, *blocks], "its frontmatter is not valid YAML; kept as a code block at the top"
        if _STRAY_ANCHOR.search(text) is None:
            raise
        parsed = parse_markdown(_STRAY_ANCHOR.sub(r"{\\#\1}", text))
        remark = "{#…} markers that are not block ids were kept as text"
    return parsed.meta, [Block(None, b.type, b.text, b.attrs) for b in parsed.blocks], remark
