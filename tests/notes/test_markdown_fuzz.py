"""Arbitrary text through the Markdown reader and the frontmatter loader: either a note, or the typed
parse error (``ValidationFailed`` on the ``markdown`` field) — never another exception, whatever the
text holds (control characters, NUL, lone surrogates, markup fragments nested and unbalanced).

How the time grows with the input is measured in ``bench/parsing.py`` (a size-doubling series),
not here: a test asserts what happens, a benchmark how fast.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fastpad.errors import ValidationFailed
from fastpad.notes.markdown import parse_markdown

# Pieces of block and inline syntax, so arbitrary text often *is* markup (and nests).
_MARKUP = st.sampled_from([
    "- ", "* ", "1. ", "> ", "# ", "```", "~~~", "---", "***", "| a | b |", "|---|", "[[", "]]", "[", "](", ")",
    "{#", "}", "<div>", "</div>", "    ", "\t", "\n", "\n\n", "\r\n", "\\", "`", "*", "_", "&amp;", "!", "\x00",
    "\ud800", "\u2028", "\ufeff", "é", "漢",
])
_TEXT = st.lists(st.one_of(_MARKUP, st.text(max_size=8)), max_size=60).map("".join)
# Frontmatter: YAML syntax pieces, anchors and aliases among them.
_YAML = st.sampled_from([
    "a: ", "title: ", "types: ", "- ", "[", "]", "{", "}", ", ", ": ", "&x ", "*x", "<<: *x", "!!str ", "!!python/object ",
    "'", '"', "|", ">", "\n", "\n  ", "#", "? ", "2025-01-14", "1e9", "null", "~", "yes", "\x00", "\t", "%YAML 1.1\n",
])
_FRONTMATTER = st.lists(st.one_of(_YAML, st.text(max_size=6)), max_size=40).map("".join)


def _read(text: str) -> None:
    try:
        parsed = parse_markdown(text)
    except ValidationFailed as refused:
        assert refused.field_errors and refused.field_errors[0].field == "markdown", refused.field_errors
        return
    # What is read can be stored: no U+0000 (it reads as U+FFFD) in what the reader hands on.
    for block in parsed.blocks:
        assert "\x00" not in block.text, block


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_any_text_is_a_note_or_the_typed_parse_error(text: str) -> None:
    _read(text)


@settings(max_examples=400, deadline=None)
@given(_FRONTMATTER, _TEXT)
def test_any_frontmatter_is_a_note_or_the_typed_parse_error(frontmatter: str, body: str) -> None:
    text = f"---\n{frontmatter}\n---\n{body}"
    try:
        parsed = parse_markdown(text)
    except ValidationFailed as refused:
        assert refused.field_errors[0].field == "markdown", refused.field_errors
        return
    assert isinstance(parsed.meta.title, str)
    assert all(isinstance(key, str) for key in parsed.meta.properties)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_unicode_is_a_note_or_the_typed_parse_error(text: str) -> None:
    _read(text)
