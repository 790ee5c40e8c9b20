"""Dense retrieval end to end: chunks → local embeddings → VectorIndex → fused, explained hits."""

from __future__ import annotations

from fastpad.notes.blocks import Block, NoteMeta
from fastpad.search.chunker import chunk_note
from fastpad.search.fusion import DENSE, LEXICAL, RankedList, StrategyHit
from fastpad.search.hybrid import ChunkCatalog, DenseStrategy, hybrid_search, index_chunks
from fastpad.search.vector_index import VectorIndex

NOTES = {
    "keys": (NoteMeta("Credential rotation runbook", ("runbook",)), ["Rotate the API tokens every quarter.", "Issue the new secret first, then revoke the old one, so clients never see downtime."]),
    "bread": (NoteMeta("Banana bread", ("recipe",)), ["Mash three ripe bananas.", "Bake at 180 degrees for an hour."]),
    "hiring": (NoteMeta("Hiring plan", ("project",)), ["Two backend engineers before October.", "Interview loop: system design and code review."]),
}


def build(minilm):
    index = VectorIndex(minilm.dimensions, provider=minilm.name)
    catalog = ChunkCatalog(index)
    for note_id, (meta, paragraphs) in NOTES.items():
        blocks = [Block(f"{note_id}-{i}", "paragraph", text) for i, text in enumerate(paragraphs)]
        chunks = chunk_note(note_id, meta, blocks, linked_entities=["Platform team"], updated_at="2026-11-01")
        catalog.put(chunks)
        index_chunks(minilm, index, chunks)
    return index, catalog


def test_a_paraphrase_finds_the_note_through_dense_search(minilm):
    index, catalog = build(minilm)
    dense = DenseStrategy(minilm, catalog)
    results = hybrid_search("how can I change our credentials without an outage?", {DENSE: dense})
    assert results.query_kind == "sentence"
    top = results.hits[0]
    assert top.note_id == "keys"
    assert set(top.block_ids) <= {"keys-0", "keys-1"} and top.block_ids
    (contribution,) = top.explanation.contributions
    assert contribution.strategy == DENSE and contribution.rank == 1 and 0 < contribution.score <= 1


def test_the_callers_scope_filters_before_ranking(minilm):
    index, catalog = build(minilm)
    dense = DenseStrategy(minilm, catalog)
    asked = "rotate API tokens and hire backend engineers"
    assert {h.note_id for h in hybrid_search(asked, {DENSE: dense}).hits} >= {"keys", "hiring"}
    results = hybrid_search(asked, {DENSE: dense}, allow_note=lambda note_id: note_id != "keys")
    assert "keys" not in {h.note_id for h in results.hits} and "hiring" in {h.note_id for h in results.hits}


def test_a_word_that_means_nothing_here_finds_nothing(minilm):
    """Dense always has a nearest neighbour; under the model's floor it is noise, not an answer."""
    index, catalog = build(minilm)
    dense = DenseStrategy(minilm, catalog)
    assert hybrid_search("zebracorn plonkadoodle", {DENSE: dense}).hits == ()
    found = hybrid_search("key rotation", {DENSE: dense}).hits  # a short real query still finds its note
    assert found and found[0].note_id == "keys"
    assert all(c.score >= minilm.min_similarity for h in found for c in h.explanation.contributions)


def test_dense_and_lexical_fuse_and_removed_chunks_are_gone(minilm):
    index, catalog = build(minilm)

    class Lexical:
        name = LEXICAL

        def search(self, request):
            return RankedList(LEXICAL, (StrategyHit("hiring", -4.2, ("hiring-1",), ("interview",)),))

    results = hybrid_search("interview loop for engineers", {LEXICAL: Lexical(), DENSE: DenseStrategy(minilm, catalog)})
    top = results.hits[0]
    assert top.note_id == "hiring"
    assert {c.strategy for c in top.explanation.contributions} == {LEXICAL, DENSE}
    assert top.explanation.matched_terms == ("interview",)
    catalog.drop_note("hiring")
    again = hybrid_search("interview loop for engineers", {DENSE: DenseStrategy(minilm, catalog)})
    assert "hiring" not in {h.note_id for h in again.hits}
