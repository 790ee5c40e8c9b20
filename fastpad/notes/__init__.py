"""The note engine: blocks with stable ULIDs on a Loro document, and their canonical Markdown."""

from fastpad.notes.blocks import Block, NoteMeta
from fastpad.notes.diff import diff_blocks
from fastpad.notes.document import NoteDocument
from fastpad.notes.ids import is_ulid, new_id
from fastpad.notes.markdown import parse_markdown, serialize_markdown
from fastpad.notes.updates import UpdateLimits

__all__ = [
    "Block",
    "NoteDocument",
    "NoteMeta",
    "UpdateLimits",
    "diff_blocks",
    "is_ulid",
    "new_id",
    "parse_markdown",
    "serialize_markdown",
]
