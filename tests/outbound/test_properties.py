"""Properties over generated Markdown: anchors survive, neutralising is idempotent, nothing leaks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fastpad.outbound.links import neutralize
from fastpad.outbound.pipeline import OutboundPolicy, prepare
from fastpad.outbound.secrets import find_secrets
from tests.outbound.corpus import POSITIVES

POLICY = OutboundPolicy(b"property-key-0123456789abcdef01", ("allowed.example",))
ANCHOR = "{#01JB2K7Q9XN4M8YV3TD0FZ5ERW}"

FRAGMENTS = st.sampled_from([
    "word", " ", "\n", "\n\n", "[", "]", "(", ")", "!", "<", ">", "`", "```", "~~~", "\\", ":", "//", "@", ".",
    "https://example.com/a", "www.example.org", "https://allowed.example/x", "[t](https://e.com)", "![i](//e.com/i.png)",
    "<https://e.com>", "`https://e.com`", "mailto:a@b.c", "[r](/rel)", "postgres://u:p4ssW0rd!@h/db", ANCHOR,
    *(text for _, text, _ in POSITIVES[::4]),
])
DOCUMENTS = st.lists(FRAGMENTS, max_size=40).map("".join)
# Secrets are only secrets with a boundary: AKIA… glued to the next word is not a key, so the leak
# property is checked on fragments separated the way text separates words.
SPACED = st.lists(FRAGMENTS, max_size=40).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(DOCUMENTS)
def test_neutralize_is_idempotent(document: str) -> None:
    once = neutralize(document, ("allowed.example",))
    assert neutralize(once, ("allowed.example",)) == once


@settings(max_examples=300, deadline=None)
@given(SPACED)
def test_prepare_keeps_every_anchor_and_leaves_no_secret(document: str) -> None:
    out = prepare(document, POLICY).text
    assert out.count(ANCHOR) == document.count(ANCHOR)
    assert find_secrets(out) == []
    for _, _, secret in POSITIVES[::4]:
        if secret in document:
            assert secret not in out


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text_never_crashes_and_text_without_urls_is_unchanged(text: str) -> None:
    out = neutralize(text)
    if "//" not in text and "www." not in text.lower() and "[" not in text and "<" not in text:
        assert out == text
    prepare(text, POLICY)
