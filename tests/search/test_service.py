"""SearchService on both backends: chunks in the write path, what search will not
return, explanations, supersession, the no-provider fallback and the embedding worker."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

import pytest

from fastpad.errors import InsufficientScope, StaleFrontier, ValidationFailed
from fastpad.knowledge.block_review import BlockReview
from fastpad.knowledge.graph import GraphService
from fastpad.notes import Block
from fastpad.notes.provenance import Origin
from fastpad.search.fusion import DENSE, GRAPH, LEXICAL, RECENCY
from fastpad.search.indexing import note_chunks
from fastpad.search.minilm import MiniLMProvider
from fastpad.search.service import MIN_DEPTH, SearchService
from fastpad.search.vectors import StoredVectors
from fastpad.search.worker import EmbeddingWorker
from tests.helpers_store import edit_ops
from tests.search.helpers import WordHashProvider


@dataclass
class Engine:
    service: SearchService
    worker: EmbeddingWorker

    def index(self, workspace_id: str) -> int:
        return self.worker.catch_up(workspace_id)


@pytest.fixture
def engine(store, svc, minilm) -> Engine:
    vectors = StoredVectors(store, minilm)
    return Engine(SearchService(store, vectors=vectors, clock=svc.clock), EmbeddingWorker(store, vectors))


def note(svc, principal, title: str, *paragraphs: str, markdown: str | None = None):
    if markdown is not None:
        return svc.notes.create(principal, title=title, markdown=markdown)
    return svc.notes.create(principal, title=title, blocks=[Block(None, "paragraph", p) for p in paragraphs])


def ids(results) -> list[str]:
    return [hit.note_id for hit in results.hits]


def agent(svc, ws, scopes: str = "search:read,notes:read,notes:write,graph:read", **kwargs):
    plaintext, _ = svc.tokens.create(ws.id, scopes=scopes, **kwargs)
    return svc.tokens.authenticate(plaintext)


# ---------------------------------------------------------------------- the write path


def test_chunks_are_written_with_the_note_and_follow_each_edit(store, svc, ws):
    n = note(svc, ws.owner, "Runbook", markdown="# Deploy\n\nBuild the image.\n\n# Rollback\n\nRevert the tag.\n")
    with store.read(ws.id) as tx:
        stored = tx.search_index.note_chunks(n.id)
        expected = [c for c, _ in note_chunks(tx.note(n.id), tx.blocks(n.id))]
    assert stored == expected
    assert [c.heading_path for c in stored] == [("Deploy",), ("Rollback",)]
    assert all(c.prefix.startswith("Title: Runbook") for c in stored)

    rollback = n.blocks[3]["id"]
    ops, frontier = edit_ops(store, ws.id, n.id, lambda d: d.replace_text(rollback, "Revert the tag, then page ops."))
    svc.notes.apply_ops(ws.owner, n.id, ops=ops, peer_id="7", expected_frontier=frontier)
    with store.read(ws.id) as tx:
        after = tx.search_index.note_chunks(n.id)
    assert after[0] == stored[0]  # untouched section: same row, same digest, so its vector stays
    assert after[1].id == stored[1].id and after[1].digest != stored[1].digest

    # A refused write changes nothing, chunks included: the same ops again, on a frontier now stale.
    with pytest.raises(StaleFrontier):
        svc.notes.apply_ops(ws.owner, n.id, ops=ops, peer_id="7", expected_frontier=frontier)
    with store.read(ws.id) as tx:
        assert tx.search_index.note_chunks(n.id) == after


def test_a_committed_write_is_found_lexically_the_moment_it_commits(store, svc, ws, engine):
    n = note(svc, ws.owner, "Ideas", "Photosynthesis notes for the garden.")
    results = engine.service.search(ws.owner, "photosynthesis")  # no embedding has run
    assert ids(results) == [n.id]
    assert results.hits[0].explanation["contributions"][0]["strategy"] == LEXICAL
    block = n.blocks[0]["id"]
    ops, frontier = edit_ops(store, ws.id, n.id, lambda d: d.replace_text(block, "Chlorophyll absorbs light."))
    svc.notes.apply_ops(ws.owner, n.id, ops=ops, peer_id="1", expected_frontier=frontier)
    assert ids(engine.service.search(ws.owner, "chlorophyll", strategies=[LEXICAL])) == [n.id]
    assert ids(engine.service.search(ws.owner, "photosynthesis", strategies=[LEXICAL])) == []


def test_a_quoted_phrase_is_required_and_odd_input_is_just_words(svc, ws, engine):
    together = note(svc, ws.owner, "A", "The quarterly revenue report is late.")
    apart = note(svc, ws.owner, "B", "Revenue grew; the quarterly plan is on track.")
    assert ids(engine.service.search(ws.owner, '"quarterly revenue"', strategies=[LEXICAL])) == [together.id]
    assert set(ids(engine.service.search(ws.owner, "quarterly revenue", strategies=[LEXICAL]))) == {together.id, apart.id}
    for odd in ["(AMPK) 1,000 AND OR NOT", 'unbalanced "quote', "NEAR(a b)", "*", "-revenue"]:
        engine.service.search(ws.owner, odd)  # never a syntax error


def test_each_strategy_reads_fifty_deep_for_a_short_page_and_as_deep_as_a_long_one(svc, ws):
    service = SearchService(svc.store, clock=svc.clock)  # lexical, graph, recency
    for n in range(70):
        note(svc, ws.owner, f"Crystal {n}", f"Quartz sample {n} " + "quartz " * (n % 7))
    short = service.search(ws.owner, "quartz", limit=10, strategies=[LEXICAL])
    assert len(short.hits) == 10 and len(short.ranked[LEXICAL]) == MIN_DEPTH == 50
    long = service.search(ws.owner, "quartz", limit=60, strategies=[LEXICAL])
    assert len(long.hits) == len(long.ranked[LEXICAL]) == 60, "a page is never cut to the minimum depth"
    assert ids(long)[:10] == ids(short), "reading deeper changes nothing at the top"


# ---------------------------------------------------------------------- what search will not return


def test_archived_notes_are_found_only_when_asked(svc, ws, engine):
    kept = note(svc, ws.owner, "Kept", "Glacier retreat measurements.")
    archived = note(svc, ws.owner, "Old", "Glacier retreat measurements from 1990.")
    svc.notes.archive(ws.owner, archived.id)
    engine.index(ws.id)
    for strategies in ([LEXICAL], [DENSE], None):
        assert archived.id not in ids(engine.service.search(ws.owner, "glacier retreat", strategies=strategies))
    found = engine.service.search(ws.owner, "glacier retreat", include_archived=True)
    assert {kept.id, archived.id} <= set(ids(found))
    assert next(h for h in found.hits if h.note_id == archived.id).archived is True


def test_a_credential_limited_to_some_notes_finds_nothing_else(svc, ws, engine):
    inside = note(svc, ws.owner, "Inside", "Volcano monitoring stations.", "See [[Outside]].")
    outside = note(svc, ws.owner, "Outside", "Volcano eruption forecasts and seismic data.")
    engine.index(ws.id)
    limited = agent(svc, ws, note_ids=[inside.id])
    for strategies in ([LEXICAL], [DENSE], [LEXICAL, GRAPH], None):
        assert ids(engine.service.search(limited, "volcano", strategies=strategies)) == [inside.id]
    everyone = engine.service.search(ws.owner, "volcano")
    assert set(ids(everyone)) == {inside.id, outside.id}


def test_a_query_that_is_a_notes_title_or_alias_finds_that_note_first(store, svc, ws):
    """Without embeddings a name query used to rank the note that links to "Falcon" above Falcon
    itself (graph leans on what is attached to a name); the note the query names comes first."""
    service = SearchService(store, clock=svc.clock)
    falcon = note(svc, ws.owner, "Falcon", "The spring launch of the new app.")
    budget = note(svc, ws.owner, "Budget", "Costs for [[Falcon]] this quarter.", "Falcon needs two more weeks.")
    note(svc, ws.owner, "Launch checklist", "Falcon ships when [[Budget]] is signed off.")
    results = service.search(ws.owner, "Falcon")
    assert results.query_kind == "name" and ids(results)[0] == falcon.id and budget.id in ids(results)
    first = results.hits[0].explanation
    assert first["title_match"] is True and first["contributions"][0]["strategy"] in (LEXICAL, GRAPH)
    assert not any(hit.explanation["title_match"] for hit in results.hits[1:])
    assert results.hits[0].anchors, "a note found by its title points at its first text"
    svc.notes.rename(ws.owner, falcon.id, "Falcon app")  # the old title stays an alias
    assert ids(service.search(ws.owner, "falcon"))[0] == falcon.id
    assert ids(service.search(ws.owner, "FALCON   APP"))[0] == falcon.id
    # Named, but below an agent's floor: an agent is not shown it by its title either.
    clip = note(svc, replace(ws.owner, origin=Origin.INBOUND_UNTRUSTED), "Heron", "A clipped page.")
    reader = agent(svc, ws, scopes="search:read")
    assert clip.id not in ids(service.search(reader, "Heron"))
    assert ids(service.search(ws.owner, "Heron")) == [clip.id]


def test_a_word_only_a_notes_title_holds_finds_it_lexically_in_step_with_renames(store, svc, ws):
    """A title is indexed beside the text (migration 19): a word that stands only in the title
    finds the note, its explanation names the word, and a rename or the trash changes what is
    found in the transaction that makes it. The floor holds as for a named note."""
    service = SearchService(store, clock=svc.clock)  # lexical alone decides: no embeddings
    runbook = note(svc, ws.owner, "Kestrel migration runbook", "Drain the queue, then switch the writers.")
    mention = note(svc, ws.owner, "Standup", "Nothing about birds here.", "Drain the queue, then switch the writers.")
    results = service.search(ws.owner, "kestrel", strategies=[LEXICAL])
    assert ids(results) == [runbook.id]
    assert results.hits[0].explanation["matched_terms"] == ["kestrel"]
    assert results.hits[0].explanation["title_match"] is False, "a word of the title is not the whole title"
    assert results.hits[0].anchors, "a note found by its title points at its first text"
    # The same text, and the title's word besides, outranks the text alone.
    assert ids(service.search(ws.owner, "queue migration", strategies=[LEXICAL])) == [runbook.id, mention.id]

    svc.notes.rename(ws.owner, runbook.id, "Osprey cutover runbook")
    assert ids(service.search(ws.owner, "kestrel", strategies=[LEXICAL])) == []
    assert ids(service.search(ws.owner, "osprey", strategies=[LEXICAL])) == [runbook.id]
    svc.notes.trash(ws.owner, runbook.id)
    assert ids(service.search(ws.owner, "osprey", strategies=[LEXICAL])) == []
    svc.notes.restore(ws.owner, runbook.id)
    assert ids(service.search(ws.owner, "osprey", strategies=[LEXICAL])) == [runbook.id]

    clip = note(svc, replace(ws.owner, origin=Origin.INBOUND_UNTRUSTED), "Plover sightings", "A clipped page.")
    reader = agent(svc, ws, scopes="search:read")
    below = service.search(reader, "plover", strategies=[LEXICAL])
    assert ids(below) == [], "below the floor, title and all"
    assert [(h.reason, h.count) for h in below.hidden] == [("trust_floor", 1)], "and the short page says so"
    assert ids(service.search(reader, "plover", strategies=[LEXICAL], floor="all")) == [clip.id]
    limited = agent(svc, ws, scopes="search:read", note_ids=[mention.id])
    assert ids(service.search(limited, "osprey", strategies=[LEXICAL])) == []


def test_agent_text_nobody_reviewed_and_untrusted_imports_are_below_an_agents_floor(svc, ws, engine):
    writer = agent(svc, ws, scopes="notes:write", auto_apply=True)  # an agent creates notes only under auto-apply
    drafted = note(svc, writer, "Draft", "Tidal energy estimates, drafted by an agent.")
    imported = note(svc, replace(writer, origin=Origin.INBOUND_UNTRUSTED), "Clip", "Tidal energy article clipping.")
    typed = note(svc, ws.owner, "Typed", "Tidal energy notes a person wrote.")
    engine.index(ws.id)
    reader = agent(svc, ws, scopes="search:read")
    for strategies in ([LEXICAL], [DENSE], None):
        assert ids(engine.service.search(reader, "tidal energy", strategies=strategies)) == [typed.id]
    lowered = engine.service.search(reader, "tidal energy", floor="all")
    assert set(ids(lowered)) == {drafted.id, imported.id, typed.id} and lowered.floor == "all"
    assert set(ids(engine.service.search(ws.owner, "tidal energy"))) == {drafted.id, imported.id, typed.id}
    with pytest.raises(ValidationFailed):
        engine.service.search(reader, "tidal", floor="nobody")


def test_text_a_person_verified_as_theirs_is_found_at_an_agents_default_floor_by_every_strategy(svc, ws, engine):
    """A verified import's blocks (``inbound_untrusted`` + ``human_accepted``): lexical (the FTS5
    scope tokens), dense (the chunks' provenance mask) and the fused search all admit them, as the
    outbound path does; an unverified one stays below."""
    verified = note(svc, replace(ws.owner, origin=Origin.INBOUND_UNTRUSTED), "Clip", "Kelp forest survey notes.")
    unverified = note(svc, replace(ws.owner, origin=Origin.INBOUND_UNTRUSTED), "Other", "Kelp forest rumours.")
    BlockReview(svc.store, svc.notes).mark_reviewed(ws.owner, verified.id, verified.blocks[0]["id"])
    engine.index(ws.id)
    reader = agent(svc, ws, scopes="search:read")
    for strategies in ([LEXICAL], [DENSE], None):
        assert ids(engine.service.search(reader, "kelp forest", strategies=strategies)) == [verified.id], strategies
    assert unverified.id in ids(engine.service.search(reader, "kelp forest", floor="all"))


def test_a_note_reached_only_by_an_agents_unconfirmed_edge_is_not_returned_to_anyone(store, svc, ws, engine):
    seed = note(svc, ws.owner, "Seed", "Orchid cultivation schedule.")
    target = note(svc, ws.owner, "Target", "Greenhouse humidity settings.")
    graph = GraphService(store, clock=svc.clock)
    edge = graph.create_link(agent(svc, ws), source_note_id=seed.id, type="related", target_note_id=target.id)
    assert edge.status == "inferred"
    reader = agent(svc, ws, scopes="search:read")
    assert ids(engine.service.search(reader, "orchid", strategies=[LEXICAL, GRAPH])) == [seed.id]
    # A person's search walks no unconfirmed agent edge either: it is a rule of search, not of agents.
    assert ids(engine.service.search(ws.owner, "orchid", strategies=[LEXICAL, GRAPH])) == [seed.id]
    graph.promote(ws.owner, edge.id)  # a person confirms it
    for caller in (reader, ws.owner):
        confirmed = engine.service.search(caller, "orchid", strategies=[LEXICAL, GRAPH])
        assert ids(confirmed) == [seed.id, target.id]
        assert confirmed.hits[1].explanation["graph_path"] == [seed.id, "related:out", target.id]


# ---------------------------------------------------------------------- what you typed comes first


def _outranked_by_score(results, note_id: str) -> list[str]:
    """The notes ranked below ``note_id`` whose fused score is higher: what the rule moved it past."""
    place = ids(results).index(note_id)
    return [h.note_id for h in results.hits[place + 1:] if h.score > results.hits[place].score]


def test_a_note_holding_what_was_typed_ranks_above_what_only_meaning_links_or_recency_reached(svc, ws, engine):
    """A rare word, a title-ish query the classifier takes for a name, a phrase: the note that holds
    it ranks first although notes reached by graph and dense fuse to a higher score — a name query
    leans on graph, and the note whose links it follows would otherwise win — and among notes that
    hold the words, those holding them as typed come before those holding them scattered."""
    hub = note(svc, ws.owner, "Team rituals", "How the team plans, meets and looks back on its work.")
    minutes = note(svc, ws.owner, "Weekly meeting minutes",
                   "Minutes of the weekly team meeting: who attended, what was decided, the next steps. "
                   "See [[Team rituals]].")
    meeting = note(svc, ws.owner, "Meeting — API review",
                   "Decisions: every failure is a problem document. Notes on idempotency keys. [[Team rituals]]")
    rare = note(svc, ws.owner, "Rack inventory", "Serial BIGV3X sits in the second rack, see [[Team rituals]].")
    note(svc, ws.owner, "Retrospective", "What went well at the last meeting; see [[Weekly meeting minutes]] and "
                                         "[[Meeting — API review]] and [[Rack inventory]].")
    scattered = note(svc, ws.owner, "Budget", "The review found the quarterly plan short; the budget meeting moved.")
    in_order = note(svc, ws.owner, "Finance calendar", "Next up: the quarterly budget review meeting on Friday.")
    engine.index(ws.id)

    named = engine.service.search(ws.owner, "Meeting Notes")
    assert named.query_kind == "name"
    assert ids(named)[0] == meeting.id and named.hits[0].explanation["holds_query"] == "every_word"
    assert minutes.id in ids(named) and named.hits[ids(named).index(minutes.id)].explanation["holds_query"] is None
    assert _outranked_by_score(named, meeting.id), "graph and dense alone would have put others first"

    word = engine.service.search(ws.owner, "BIGV3X")
    assert word.query_kind == "name" and ids(word)[0] == rare.id
    assert word.hits[0].explanation["holds_query"] == "in_order"
    assert word.ranked[GRAPH] and hub.id in ids(word)  # the name leans graph, and graph found its neighbours

    phrase = engine.service.search(ws.owner, "quarterly budget review meeting")
    assert ids(phrase)[:2] == [in_order.id, scattered.id]
    assert [h.explanation["holds_query"] for h in phrase.hits[:2]] == ["in_order", "every_word"]
    assert all(h.explanation["holds_query"] is None for h in phrase.hits[2:])


def test_a_phrase_of_common_words_finds_the_note_holding_it_past_many_that_repeat_one_of_them(svc, ws, engine):
    """Typed without quotes, a phrase is an OR of its words to the lexical index. More notes than
    lexical reads repeat one of its words: the one note holding them all still ranks first — on
    PostgreSQL too, whose ``ts_rank_cd`` weighs no word by its rarity and ranked it below them all
    (``query.every_word_match``)."""
    for n in range(MIN_DEPTH + 10):
        note(svc, ws.owner, f"Register {n}", "Risk after risk: the risk of delay, the risk of cost, the risk of scope.")
    held = note(svc, ws.owner, "Coffee cohort", "Heavy coffee drinking and the risk of suicide in a Finnish cohort.")
    for strategies in ([LEXICAL], None):
        results = engine.service.search(ws.owner, "the risk of suicide", strategies=strategies)
        assert ids(results)[0] == held.id, strategies
        assert results.hits[0].explanation["holds_query"] == "in_order"


def test_a_masked_secret_lifts_no_note_for_a_reader_who_sees_it_masked(store, svc, ws):
    """Whether a note holds the query is read from the text as the caller sees it: a correct guess
    of a secret's value lifts the note for its owner, who sees the value, and not for an agent."""
    service = SearchService(store, clock=svc.clock, redaction_key=b"k" * 32)
    vault = note(svc, ws.owner, "Vault access", "The staging vault: password: Summer2024!gate")
    reader = agent(svc, ws, scopes="search:read")
    guess = "staging vault Summer2024!gate"
    owner_hit = next(h for h in service.search(ws.owner, guess, strategies=[LEXICAL]).hits if h.note_id == vault.id)
    assert owner_hit.explanation["holds_query"] == "every_word"
    seen = service.search(reader, guess, strategies=[LEXICAL])
    assert vault.id in ids(seen), "found by the words it shows"
    for hit in seen.hits:
        assert hit.explanation["holds_query"] is None and "Summer2024" not in hit.snippet


# ---------------------------------------------------------------------- explanations


def test_every_hit_explains_itself(svc, ws, engine):
    linked = note(svc, ws.owner, "Sessions", "Login state lives in [[Caching]].")
    svc.clock.advance(days=10)
    old = note(svc, ws.owner, "Caching", markdown="# Caching\n\n## Redis\n\nEviction uses LRU for the session cache.\n")
    engine.index(ws.id)
    results = engine.service.search(ws.owner, "session cache eviction")
    assert results.query_kind == "keywords" and results.unavailable == {}
    top = results.hits[0]
    assert top.note_id == old.id and top.title == "Caching" and top.path == ("Caching", "Redis")
    assert top.anchors[0] == old.blocks[2]["id"]  # the best-matching block first (the heading matches "cach" too)
    assert "Eviction uses LRU" in top.snippet and len(top.snippet) <= 202
    explanation = top.explanation
    assert set(explanation) == {"query_kind", "contributions", "matched_terms", "graph_path", "penalties",
                                "superseded_by", "title_match",
                                "holds_query"}
    by = {c["strategy"]: c for c in explanation["contributions"]}
    assert {LEXICAL, DENSE, RECENCY} <= set(by)
    assert by[LEXICAL]["rank"] == 1 and by[LEXICAL]["score"] > 0 and 0 < by[DENSE]["score"] <= 1
    assert all(c["rrf"] == pytest.approx(c["weight"] / (60 + c["rank"]), abs=1e-6) for c in by.values())
    assert set(explanation["matched_terms"]) == {"session", "cache", "eviction"}
    assert top.score == pytest.approx(sum(c["rrf"] for c in by.values()), abs=1e-5)
    second = next(h for h in results.hits if h.note_id == linked.id)
    assert second.explanation["graph_path"] == [old.id, "mentions:in", linked.id]
    assert [h.rank for h in results.hits] == list(range(1, len(results.hits) + 1))
    as_json = results.as_dict()["hits"][0]
    assert "blocks" not in as_json and as_json["snippet"] == top.snippet


def test_a_superseded_note_says_so_and_names_its_successor(store, svc, ws, engine):
    old = note(svc, ws.owner, "Policy v1", "Expense policy: receipts within 30 days.")
    new = note(svc, ws.owner, "Policy v2", "Expense policy: receipts within 60 days.")
    GraphService(store, clock=svc.clock).supersede(ws.owner, old.id, by=new.id)
    results = engine.service.search(ws.owner, "expense policy receipts", strategies=[LEXICAL])
    stale = next(h for h in results.hits if h.note_id == old.id)
    assert stale.superseded_by == new.id and stale.explanation["superseded_by"] == new.id
    assert stale.explanation["penalties"] == [{"reason": f"superseded by {new.id}", "factor": 0.5}]
    assert ids(results) == [new.id, old.id]
    # A successor the caller cannot see is not named.
    limited = agent(svc, ws, scopes="search:read", note_ids=[old.id])
    assert engine.service.search(limited, "expense policy", floor="all").hits[0].superseded_by is None


def test_recency_lifts_what_the_caller_worked_on_lately(svc, ws, engine):
    stale = note(svc, ws.owner, "Lighthouse log 2025", "Lighthouse keeper rota.")
    svc.clock.advance(days=30)
    colleague = svc.people.principal_for(ws.id, svc.people.create_person(ws.id, "keeper@example.com", role="member").id)
    theirs = note(svc, colleague, "Lighthouse log (theirs)", "Lighthouse keeper rota.")
    svc.clock.advance(days=2)
    mine = note(svc, ws.owner, "Lighthouse log (mine)", "Lighthouse keeper rota.")
    svc.clock.advance(days=2)  # the colleague's note is now the most recently changed
    ops, frontier = edit_ops(svc.store, ws.id, theirs.id, lambda d: d.replace_text(theirs.blocks[0]["id"], "Lighthouse keeper rota, v2."))
    svc.notes.apply_ops(colleague, theirs.id, ops=ops, peer_id="9", expected_frontier=frontier)
    results = engine.service.search(ws.owner, "lighthouse keeper rota", strategies=[LEXICAL, RECENCY])
    assert results.ranked[RECENCY] == [mine.id, theirs.id]  # the caller's own work first; the stale one not at all
    stale_hit = next(h for h in results.hits if h.note_id == stale.id)
    assert [c["strategy"] for c in stale_hit.explanation["contributions"]] == [LEXICAL]
    # Written at one moment, notes give recency nothing to contrast: it abstains rather than add noise.
    other = svc.workspace("Other")
    for n in range(3):
        note(svc, other.owner, f"Copy {n}", "Lighthouse keeper rota.")
    assert engine.service.search(other.owner, "lighthouse", strategies=[LEXICAL, RECENCY]).ranked[RECENCY] == []


# ---------------------------------------------------------------------- dense off, dense catching up


def test_without_an_embedding_provider_search_runs_on_the_rest_and_says_so(store, svc, ws):
    service = SearchService(store, clock=svc.clock)
    n = note(svc, ws.owner, "Trip", "Packing list for the Lisbon trip.")
    results = service.search(ws.owner, "packing for Lisbon")
    assert ids(results) == [n.id]
    assert results.unavailable == {DENSE: "no embedding provider configured"}
    assert set(results.timings_ms) == {LEXICAL, GRAPH, RECENCY, "holds_query", "fusion", "render", "hidden"}
    assert service.search(ws.owner, "Lisbon", strategies=[LEXICAL]).unavailable == {}


def test_the_worker_embeds_new_chunks_when_a_write_commits(store, svc, ws, engine):
    engine.worker.start()
    try:
        n = note(svc, ws.owner, "Budget", "Quarterly spending forecast for the marketing team.")
        assert engine.worker.wait_caught_up(ws.id, timeout=30)
        found = engine.service.search(ws.owner, "how much money will advertising need?", strategies=[DENSE])
        assert ids(found) == [n.id] and found.hits[0].anchors == (n.blocks[0]["id"],)
        before = engine.worker.embedded
        block = n.blocks[0]["id"]
        ops, frontier = edit_ops(store, ws.id, n.id, lambda d: d.replace_text(block, "Hiring plan for engineers."))
        svc.notes.apply_ops(ws.owner, n.id, ops=ops, peer_id="3", expected_frontier=frontier)
        assert engine.worker.wait_caught_up(ws.id, timeout=30)
        assert engine.worker.embedded == before + 1 and engine.worker.failure(ws.id) is None
    finally:
        engine.worker.stop()
    # The sweep drops the vector of the text that is gone, and the index follows.
    engine.worker.catch_up(ws.id, sweep=True)
    with store.read(ws.id) as tx:
        stored = tx.search_index.vector_digests(engine.worker.provider.name)
        assert stored == {c.digest for c in tx.search_index.note_chunks(n.id)}


def test_vectors_of_the_fp32_graph_are_not_read_by_the_int8_one_which_embeds_anew(store, svc, ws, minilm):
    # A deployment upgraded from the fp32 default: its stored vectors stay under their
    # own name, the int8 provider finds none of its own and embeds every chunk itself.
    fp32 = MiniLMProvider(int8=False)
    n = note(svc, ws.owner, "Budget", "Quarterly spending forecast for the marketing team.")
    assert EmbeddingWorker(store, StoredVectors(store, fp32)).catch_up(ws.id) == 1
    assert minilm.int8 and minilm.name != fp32.name
    vectors = StoredVectors(store, minilm)
    assert EmbeddingWorker(store, vectors).catch_up(ws.id) == 1
    with store.read(ws.id) as tx:
        digests = {c.digest for c in tx.search_index.note_chunks(n.id)}
        assert tx.search_index.vector_digests(fp32.name) == tx.search_index.vector_digests(minilm.name) == digests
    found = SearchService(store, vectors=vectors, clock=svc.clock).search(
        ws.owner, "how much money will advertising need?", strategies=[DENSE])
    assert ids(found) == [n.id]


def test_the_sweep_chunks_and_embeds_notes_written_before_chunks_existed(store, svc, ws, engine):
    n = note(svc, ws.owner, "Legacy", "Carburettor tuning notes from the old garage.")
    with store.write(ws.id) as tx:
        tx.search_index.replace_chunks(n.id, [])  # what a version-5 database holds
    assert engine.worker.catch_up(ws.id) == 0  # no chunk rows, nothing to embed
    assert engine.worker.catch_up(ws.id, sweep=True) == 1
    with store.read(ws.id) as tx:
        assert [c.block_ids for c in tx.search_index.note_chunks(n.id)] == [(n.blocks[0]["id"],)]
    assert ids(engine.service.search(ws.owner, "engine maintenance in the workshop", strategies=[DENSE])) == [n.id]


def test_bad_requests_get_typed_errors(svc, ws, engine):
    with pytest.raises(InsufficientScope):
        engine.service.search(agent(svc, ws, scopes="notes:read"), "anything")
    for kwargs, field in [({"text": "  "}, "q"), ({"text": "x" * 1001}, "q"), ({"limit": 0}, "limit"),
                          ({"limit": True}, "limit"), ({"strategies": ["magic"]}, "strategies"),
                          ({"strategies": []}, "strategies"), ({"floor": "low"}, "floor")]:
        call = {"text": "words", **kwargs}
        with pytest.raises(ValidationFailed) as failure:
            engine.service.search(ws.owner, call.pop("text"), **call)
        assert failure.value.field_errors[0].field == field


class GatedProvider(WordHashProvider):
    """Embeds like WordHashProvider, but each call first announces itself and waits to be let through."""

    name = "test:gated"

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.go = threading.Event()

    def embed(self, texts):
        self.entered.set()
        assert self.go.wait(30)
        return super().embed(texts)


def test_stopping_the_worker_mid_backlog_waits_for_one_batch_not_the_backlog(store, svc, ws):
    for i in range(40):  # three batches of 16 notes
        note(svc, ws.owner, f"Backlog {i}", f"Paragraph number {i} about a lighthouse keeper.")
    provider = GatedProvider()
    worker = EmbeddingWorker(store, StoredVectors(store, provider))
    worker.start()
    worker.wake(ws.id)
    assert provider.entered.wait(30)  # inside the first batch
    stopper = threading.Thread(target=worker.stop)
    stopper.start()  # asks the worker to stop while the batch is still running
    with worker._cond:  # noqa: SLF001 - wait until stop() has raised the flag
        assert worker._cond.wait_for(lambda: worker._stopping, 30)  # noqa: SLF001
    provider.go.set()
    stopper.join(30)
    assert not stopper.is_alive()
    assert provider.calls == 1  # the batch in flight finished; the other two never started
    with store.read(ws.id) as tx:
        assert len(tx.search_index.notes_missing_vectors(provider.name, limit=100)) == 40 - worker.notes_per_batch
