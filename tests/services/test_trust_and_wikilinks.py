"""Pure rules: what a link in text is, trust floors, edge walkability, confidence decay."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from fastpad.errors import ValidationFailed
from fastpad.knowledge.edges import check_edge_type, decayed_confidence
from fastpad.knowledge.trust import (
    ASSERTED,
    INFERRED,
    TrustFloor,
    admits,
    edge_status_for_block,
    edge_walkable,
    filter_blocks,
    floor_for,
)
from fastpad.knowledge.wikilinks import extract_links, mention_titles, title_key
from fastpad.security.principals import Principal
from fastpad.store import BlockRow

PERSON = Principal.person("01JB2K7Q9XN4M8YV3TD0FZ5ERW", "01JB2K7Q9XN4M8YV3TD0FZ5ERX")
AGENT = Principal(workspace_id=PERSON.workspace_id, kind="agent", principal_id="01JB2K7Q9XN4M8YV3TD0FZ5ERY",
                  token_id="01JB2K7Q9XN4M8YV3TD0FZ5ERZ", scopes=frozenset({"graph:read"}))


# ---------------------------------------------------------------------- links in text


def titles(text: str, block_type: str = "paragraph") -> list[str]:
    return [ref.title for ref in extract_links(block_type, text)]


def test_wikilinks_aliases_and_mentions_are_links() -> None:
    text = "See [[Meeting  Notes|the notes]], @Alice and @[[Bob Smith]]; again [[meeting notes]]."
    refs = extract_links("paragraph", text)
    assert [(r.title, r.key) for r in refs] == [
        ("Meeting Notes", "meeting notes"), ("Alice", "alice"), ("Bob Smith", "bob smith")]
    assert all(r.evidence == text for r in refs), "a short block is its own evidence"


@pytest.mark.parametrize("text", [
    "mail bob@example.com", "`[[in code]]` and ``@code``", r"\[[escaped]]", "[[]] and [[   ]]",
    "[[" + "x" * 301 + "]]", "meet @ 5pm", "a path/@scope/pkg",
])
def test_things_that_look_like_links_but_are_not(text: str) -> None:
    assert titles(text) == []


def test_code_blocks_hold_no_links_and_mentions_end_at_the_word() -> None:
    assert titles("[[Inside a fence]] @x", "code") == []
    assert titles("Thanks @alice-b. And @home.") == ["alice-b", "home"]


def test_a_bare_mention_names_the_longest_run_of_its_words_that_is_a_title() -> None:
    text = "Ask @First note about it."
    assert mention_titles("paragraph", text) == {"first note", "first note about", "first note about it"}
    (ref,) = extract_links("paragraph", text, titles={"first", "first note"})
    assert (ref.title, ref.key) == ("First note", "first note")
    assert titles(text) == ["First"], "with no longer title, the first word alone"
    # A reading goes on only across single spaces: never past punctuation or a code span.
    assert mention_titles("paragraph", "@First, note") == mention_titles("paragraph", "@First `x` note") == set()


def test_an_embed_is_a_link_of_its_own_kind_beside_a_mention_of_the_same_note() -> None:
    text = "Here ![[Plan|Plan#Goals]], see [[plan]], again ![[PLAN]], and `![[code]]` and \\![[Bang]]."
    refs = extract_links("paragraph", text)
    assert [(r.title, r.key, r.type) for r in refs] == [
        ("Plan", "plan", "embeds"), ("plan", "plan", "mentions"), ("Bang", "bang", "mentions")]
    assert refs[0].evidence == text and text.startswith("Here ![[Plan"), "the evidence holds the embed, ! and all"
    short = extract_links("paragraph", "word " * 40 + "![[Target#Part]]")[0]
    assert short.evidence.endswith("![[Target#Part]]") and short.type == "embeds"


def test_evidence_is_bounded_and_marks_where_the_block_goes_on() -> None:
    text = "word " * 100 + "[[Target]]" + " more" * 100
    (ref,) = extract_links("paragraph", text)
    assert "[[Target]]" in ref.evidence
    assert ref.evidence.startswith("…") and ref.evidence.endswith("…")
    assert len(ref.evidence) <= 2 * 120 + len("[[Target]]") + 2


def test_title_keys_ignore_case_spacing_and_unicode_composition() -> None:
    assert title_key("  Café   Notes ") == title_key("cafe\u0301 notes") == "café notes"
    assert title_key("   ") == ""


# ---------------------------------------------------------------------- trust floors


def block(origin: str, review: str) -> BlockRow:
    return BlockRow("01JB2K7Q9XN4M8YV3TD0FZ5ERW", 0, "paragraph", f"{origin}/{review}", {}, origin, review)


ADMITTED_BY = {
    # (origin, review): floors that admit it
    ("human_typed", "human_accepted"): {"human", "reviewed", "all"},
    ("agent_written", "human_accepted"): {"human", "reviewed", "all"},
    ("inbound_untrusted", "human_accepted"): {"human", "reviewed", "all"},  # a verified import
    ("agent_written", "unreviewed"): {"all"},
    ("inbound_untrusted", "unreviewed"): {"all"},
    ("agent_written", "agent_accepted"): {"all"},
    ("human_typed", "agent_accepted"): {"all"},
    ("inbound_untrusted", "agent_accepted"): {"all"},
    ("something_new", "human_accepted"): {"all"},
}


@pytest.mark.parametrize("pair", sorted(ADMITTED_BY))
def test_each_floor_admits_exactly_its_provenance(pair: tuple[str, str]) -> None:
    assert {f.value for f in TrustFloor if admits(f, *pair)} == ADMITTED_BY[pair]


def test_the_default_agent_floor_drops_unreviewed_agent_text_and_agent_accepted_blocks() -> None:
    blocks = [block(*pair) for pair in sorted(ADMITTED_BY)]
    floor = floor_for(AGENT)
    assert floor is TrustFloor.HUMAN
    kept = {(b.origin, b.review_state) for b in filter_blocks(blocks, floor)}
    assert kept == {("human_typed", "human_accepted"), ("agent_written", "human_accepted"),
                    ("inbound_untrusted", "human_accepted")}
    # Dicts (a NoteView's blocks) work the same way.
    as_dicts = [{"origin": b.origin, "review_state": b.review_state} for b in blocks]
    assert len(filter_blocks(as_dicts, floor)) == 3
    assert floor_for(PERSON) is TrustFloor.ALL and floor_for(AGENT, "all") is TrustFloor.ALL
    with pytest.raises(ValidationFailed) as caught:
        floor_for(AGENT, "lowest")
    assert caught.value.field_errors[0].field == "floor"


def test_agents_walk_only_asserted_edges_and_text_links_follow_their_block() -> None:
    assert edge_walkable(AGENT, ASSERTED) and not edge_walkable(AGENT, INFERRED)
    assert edge_walkable(PERSON, INFERRED)
    assert edge_status_for_block("human_typed", "human_accepted") == ASSERTED
    assert edge_status_for_block("agent_written", "human_accepted") == ASSERTED
    assert edge_status_for_block("inbound_untrusted", "human_accepted") == ASSERTED
    assert edge_status_for_block("agent_written", "unreviewed") == INFERRED
    assert edge_status_for_block("agent_written", "agent_accepted") == INFERRED
    assert edge_status_for_block("inbound_untrusted", "unreviewed") == INFERRED


# ---------------------------------------------------------------------- edges


def test_inferred_confidence_halves_every_thirty_days_and_asserted_edges_do_not_decay() -> None:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert decayed_confidence(0.8, start, start) == 0.8
    assert decayed_confidence(0.8, start, start + timedelta(days=30)) == 0.4
    assert decayed_confidence(0.8, start, start + timedelta(days=60)) == 0.2
    assert decayed_confidence(None, start, start + timedelta(days=60)) is None


@pytest.mark.parametrize("bad", ["Cites", "", "has space", "x" * 41, "1st", None, 3])
def test_edge_types_are_lowercase_slugs(bad: object) -> None:
    assert check_edge_type("depends_on") == "depends_on"
    with pytest.raises(ValidationFailed):
        check_edge_type(bad)
