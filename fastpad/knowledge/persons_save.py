"""The provenance a person's save gives the blocks it changes (spec › Agents › Trust is two
questions: neither origin nor review state rises by accident)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property

from fastpad.notes import NoteDocument
from fastpad.notes.provenance import SURVIVING_STRETCH, Origin, Provenance, ReviewState, rewritten
from fastpad.search.query import STOPWORDS, ParsedQuery, lexical_match
from fastpad.security.principals import Principal
from fastpad.store import BlockRow, WorkspaceTx

# Blocks the lexical index offers as a new block's possible sources elsewhere in the workspace.
SOURCE_CANDIDATES = 20
MAX_SENTENCES = 16  # sentences of a new block looked for
PHRASE_WORDS = 4  # words of each sentence looked for as a phrase
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n")


class PersonsSave:
    """The provenance one person's save (``apply_ops``, on either of its write paths) gives
    each block it changes: the same rule for the browser editor, ``fp push`` and any other
    client of ``POST /v1/notes/{id}/ops``.

    A block the save adds is the person's (``human_typed``, ``human_accepted``) unless it
    carries another writer's words: the second half of a split agent paragraph, a copy of a
    capture pasted below it, or an agent's paragraph copied or moved in from another note keeps
    the provenance of the block its text came from (see :meth:`_carried_over` and
    :func:`carried_from_workspace`), so a new id never launders text into the person's. A block that
    was already theirs stays so. Any other block — an agent's, an import's, a capture's —
    keeps its origin and review state, with the person recorded as its last author, unless
    the save completes a rewrite of it (``fastpad.notes.provenance.rewritten``): then it is
    the person's. The earlier text a rewrite is measured against is the block as it stood
    after the note's last write that was not a person's save: every other provenance comes
    from such a write, and the person's edits since are what the measure looks at."""

    def __init__(self, tx: WorkspaceTx, principal: Principal, note_id: str, doc: NoteDocument,
                 current: Mapping[str, Provenance], before: Sequence[BlockRow] = ()) -> None:
        self._tx, self._note_id, self._doc, self._current = tx, note_id, doc, current
        self._persons_own = Provenance.for_write(principal.origin)
        # The note's blocks before the save that are not the person's own: where an added
        # block's words may come from.
        self._others = [b for b in before if block_provenance(b) != self._persons_own]

    def stamp(self, block_id: str) -> Provenance:
        current = self._current.get(block_id)
        if current is None:
            return self._carried_over(block_id) or self._persons_own
        if current == self._persons_own or self._rewritten(block_id):
            return self._persons_own
        return current

    def _carried_over(self, block_id: str) -> Provenance | None:
        """The provenance of the block an added block's words came from, if they came from one
        that is not the person's: the added block holds an unbroken stretch of that block's text
        — ``SURVIVING_STRETCH`` characters, or all of its own text when it is shorter (the tail
        of a split can be a word) if that block is in this note. An empty block is the person's.
        Erring here only marks a person's short block as the other writer's, never the other
        way round."""
        text = self._doc.block(block_id).text
        needed = min(SURVIVING_STRETCH, len(text))
        if not needed:
            return None
        stretches = _stretches(text, needed)
        for other in self._others:
            if _holds_one(other.text, stretches, needed):
                return block_provenance(other)
        return carried_from_workspace(self._tx, text, self._persons_own)

    def _rewritten(self, block_id: str) -> bool:
        if self._since is None:
            return False  # nothing to measure against: the block stays as it is marked
        # The cheap answer for nearly every save (a typo fix, a sentence added): an unbroken run
        # of the very characters the block held then is its earlier words, less at most what was
        # deleted from between them, so the note need not be rebuilt as it was.
        if self._doc.keeps_run_from(block_id, self._since, SURVIVING_STRETCH):
            return False
        # A block the note did not hold then has no earlier text to measure: it stays as marked.
        return self._then.has_block(block_id) and rewritten(self._then.block(block_id), self._doc.block(block_id))

    @cached_property
    def _since(self) -> str | None:
        since = self._tx.frontier_after_last_write_besides(self._note_id, "ops")
        return since if since is not None and self._doc.knows(since) else None

    @cached_property
    def _then(self) -> NoteDocument:
        """The note at ``_since``: built at most once a save, and only when a block may be rewritten."""
        assert self._since is not None
        return self._doc.at(self._since)


def carried_from_workspace(tx: WorkspaceTx, text: str, persons_own: Provenance) -> Provenance | None:
    """The provenance of a block elsewhere in the workspace that is not ``persons_own`` and
    shares an unbroken ``SURVIVING_STRETCH`` characters with ``text`` (a person's new block), if
    there is one: text copied, moved or duplicated into another note keeps its writer.

    Cheap by construction: the lexical index offers up to :data:`SOURCE_CANDIDATES` blocks, not
    the person's own, that hold one of ``text``'s sentences as a phrase (:func:`_sentences_match`),
    and only those are compared character by character. Text
    shorter than the stretch is not looked for elsewhere: a word or two typed by a person is too
    common to say whose it is (within one note a split's short tail is, see ``PersonsSave``).
    A source the person deleted before this save is no longer there to find, which is why
    ``fp push`` sends the notes that gain text before the ones that lose it."""
    if len(text) < SURVIVING_STRETCH:
        return None
    match = _sentences_match(text, tx.search_index.backend)
    if not match:
        return None
    own = (persons_own.origin.value, persons_own.review.value)
    stretches = _stretches(text, SURVIVING_STRETCH)
    for _, block in tx.search_index.blocks_holding(match, besides=own, limit=SOURCE_CANDIDATES):
        if _holds_one(block.text, stretches, SURVIVING_STRETCH):
            return block_provenance(block)
    return None


def _sentences_match(text: str, backend: str) -> str:
    """The lexical query for blocks that may hold ``text``'s words: for each of its sentences (or
    lines) of at least ``SURVIVING_STRETCH`` characters, its most distinctive
    ``PHRASE_WORDS`` consecutive words (the most characters outside stopwords) as a phrase. A
    phrase matches only a block holding those words in that order, so the candidates are few
    however common the words are, and short phrases of uncommon words read short posting
    lists: a block copied whole, one sentence of it, or a paragraph holding a pasted sentence
    is found; a fragment shorter than a sentence inside a person's own words may not be."""
    phrases = []
    for sentence in _SENTENCE_END.split(text):
        words = sentence.replace('"', " ").split()
        if len(" ".join(words)) < SURVIVING_STRETCH:
            continue
        windows = [words[i:i + PHRASE_WORDS] for i in range(max(1, len(words) - PHRASE_WORDS + 1))]
        phrases.append(" ".join(max(windows, key=_distinctive)))
    phrases = _dedupe_casefolded(phrases)
    if len(phrases) > MAX_SENTENCES:  # spread over the whole text, not its opening
        phrases = [phrases[i * len(phrases) // MAX_SENTENCES] for i in range(MAX_SENTENCES)]
    if not phrases:
        return ""
    return lexical_match(ParsedQuery(text, tuple(phrases), (), ()), backend, require_phrases=False)


def _distinctive(words: list[str]) -> int:
    return sum(len(w) for w in words if w.casefold().strip(".,;:!?()[]") not in STOPWORDS)


def _dedupe_casefolded(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    return [v for v in values if not (v.casefold() in seen or seen.add(v.casefold()))]


def _stretches(text: str, length: int) -> set[str]:
    return {text[start:start + length] for start in range(len(text) - length + 1)}


def _holds_one(text: str, stretches: set[str], length: int) -> bool:
    return any(text[start:start + length] in stretches for start in range(len(text) - length + 1))


def block_provenance(row: BlockRow) -> Provenance:
    return Provenance(Origin(row.origin), ReviewState(row.review_state))
