"""NoteService: every read and write of notes, for a principal.

Every method takes the acting ``Principal`` first and enforces its scopes and
note set; a note outside the note set is OutOfScope, decided from the set
before anything is looked up (``Principal.require_note``), so it says nothing
about whether such a note exists. The workspace is always the principal's.

Every write — create, ops, archive/unarchive, trash/restore — goes through
``_commit``, the one call into ``WorkspaceTx.write_note``, inside one
transaction that also holds the note's row lock: op log append, note row,
block projection with provenance, lexical index and change-feed row commit
together or not at all. The ``*_in`` variants (``create_in``, ``trash_in``,
``apply_edit``) take the caller's transaction instead of opening one, so a
review can land several writes as one.
"""

from fastpad.knowledge.note_creation import NoteCreation
from fastpad.knowledge.note_edits import NoteEdits
from fastpad.knowledge.note_lifecycle import NoteLifecycle
from fastpad.knowledge.note_reads import NoteReads


class NoteService(NoteReads, NoteCreation, NoteEdits, NoteLifecycle):
    """The note service whole: reads (:mod:`fastpad.knowledge.note_reads`), creation
    (:mod:`fastpad.knowledge.note_creation`), block edits (:mod:`fastpad.knowledge.note_edits`) and
    a note's name and state (:mod:`fastpad.knowledge.note_lifecycle`), over what they share — the
    dependencies, the single write path ``_commit`` and the note views
    (:mod:`fastpad.knowledge.note_core`)."""
