"""ContextService on both backends: retrieval depth follows the budget, a long block comes back
as the excerpt of its sentences that match the query under its own id, short blocks stay whole,
and the bundle stays within its budget."""

from __future__ import annotations

import pytest

from fastpad.knowledge.graph import GraphService
from fastpad.notes import Block
from fastpad.search.context import GAP, MAX_NOTES, MIN_NOTES, ContextService, depth_for
from fastpad.search.service import SearchService

FILLER = ("The survey team met at the harbour wall before the tide turned. Volunteers carried the tripods "
          "and the logbooks down the shingle. Weather was mild with a light westerly wind all morning. ")


@pytest.fixture
def context(store, svc) -> ContextService:
    return ContextService(SearchService(store, clock=svc.clock), svc.notes, GraphService(store))


def paragraph_note(svc, principal, title: str, *paragraphs: str):
    return svc.notes.create(principal, title=title, blocks=[Block(None, "paragraph", p) for p in paragraphs])


def test_a_long_block_comes_back_as_the_excerpt_of_its_matching_sentence_under_its_id(svc, ws, context):
    sentence = "Kittiwake ledges on the north stack were counted twice from the boat."
    long_text = FILLER * 6 + sentence + " " + FILLER * 6
    long_note = paragraph_note(svc, ws.owner, "Seabird season", long_text)
    short_text = "Kittiwake chicks fledged late on the south stack."
    short_note = paragraph_note(svc, ws.owner, "Fledging notes", short_text)

    bundle = context.bundle(ws.owner, "kittiwake ledges counted", budget=300)

    by_id = {n.view.id: n for n in bundle.notes}
    assert set(by_id) == {long_note.id, short_note.id}
    [cut] = by_id[long_note.id].blocks
    assert cut["id"] == long_note.blocks[0]["id"] and by_id[long_note.id].excerpted == (cut["id"],)
    assert sentence in cut["text"] and f"{GAP} {sentence} {GAP}" in cut["text"]  # gaps marked either side
    assert len(cut["text"]) < len(long_text) / 3
    [whole] = by_id[short_note.id].blocks
    assert whole["text"] == short_text and by_id[short_note.id].excerpted == ()
    assert bundle.tokens <= 300


def test_everything_stays_whole_when_the_budget_holds_it(svc, ws, context):
    note = paragraph_note(svc, ws.owner, "Seabird season", FILLER * 3 + "Puffin burrows were mapped.")
    bundle = context.bundle(ws.owner, "puffin burrows", budget=4_000)
    [entry] = bundle.notes
    assert entry.blocks[0]["text"] == note.blocks[0]["text"] and entry.excerpted == () and not bundle.rest


def test_retrieval_depth_follows_the_budget_and_the_bundle_stays_within_it(svc, ws, context):
    for n in range(60):
        paragraph_note(svc, ws.owner, f"Gull roost count {n}", f"Gull roost {n}: " + FILLER * 2)
    assert depth_for(1) == MIN_NOTES < depth_for(1_000) < depth_for(4_000) <= depth_for(25_000) == MAX_NOTES

    sizes = {}
    for budget in (1_000, 4_000, 25_000):
        bundle = context.bundle(ws.owner, "gull roost", budget=budget)
        assert bundle.depth == depth_for(budget)
        assert bundle.tokens == sum(ContextService.cost(n.view.id, n.view.title, n.blocks) for n in bundle.notes)
        assert bundle.tokens <= budget
        sizes[budget] = len(bundle.notes)
    # A small budget cuts each paragraph to its matching sentence; a large one holds all 60 whole.
    assert MIN_NOTES < sizes[1_000] < sizes[4_000] <= sizes[25_000] == 60


def test_the_rerank_lifts_a_note_that_says_what_the_best_notes_say(svc, ws, context):
    """A note that names the query's word once ranks below notes that repeat it; sharing the best
    notes' other words, it moves ahead of some of them — and the notes sharing nothing move down."""
    for n in range(6):
        paragraph_note(svc, ws.owner, f"Heron colony {n}", f"Heron heron heron nests in the saltmarsh colony {n}, "
                                                           "counted from the sluice embankment.")
    echo = paragraph_note(svc, ws.owner, "Spring visit", "A heron over the saltmarsh colony by the sluice embankment.")
    strays = [paragraph_note(svc, ws.owner, f"Car park {n}", f"Heron, heron by car park {n}, the visitor cafe and the road.") for n in range(4)]
    fused = [h.note_id for h in context.search.search(ws.owner, "heron", limit=20).hits]
    assert all(fused.index(stray.id) < fused.index(echo.id) for stray in strays)  # search alone
    order = [n.view.id for n in context.bundle(ws.owner, "heron", budget=4_000).notes]
    assert set(order) == set(fused) and order.index(echo.id) < fused.index(echo.id)


def test_a_persons_bundle_reaches_no_note_only_through_an_unconfirmed_agent_edge(store, svc, ws, context):
    seed = paragraph_note(svc, ws.owner, "Orchid schedule", "Orchid cultivation schedule for spring.")
    target = paragraph_note(svc, ws.owner, "Greenhouse", "Humidity is kept at sixty percent.")
    bot = svc.tokens.authenticate(svc.tokens.create(ws.id, scopes="notes:read,notes:write,graph:read")[0])
    graph = GraphService(store)
    edge = graph.create_link(bot, source_note_id=seed.id, type="related", target_note_id=target.id)
    assert edge.status == "inferred"

    def bundled() -> set[str]:
        bundle = context.bundle(ws.owner, "orchid cultivation", budget=2000)
        return {n.view.id for n in (*bundle.notes, *bundle.rest)}

    assert bundled() == {seed.id}, "the agent's claim alone reaches nothing, for a person too"
    graph.promote(ws.owner, edge.id)  # a person confirms it
    assert bundled() == {seed.id, target.id}
