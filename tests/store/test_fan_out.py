"""SQLite ranks a lexical query in rowid ranges side by side (WorkspaceTx.fan_out):
the ranking must be exactly the one-piece ranking, a busy pool must never make
a search wait, and a write transaction must still find its own uncommitted text."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fastpad.notes import Block
from fastpad.search.query import lexical_query_terms
from fastpad.store.search_index import SearchFilter
from fastpad.store.sqlite import SqliteStore
from tests.helpers_store import make_services

WORDS = "amplifier circuit noise signal transistor plasma ionosphere wave antenna filter radar pulse".split()
QUERIES = ["amplifier noise", "transistor circuit signal filter", "plasma", "radar pulse wave antenna ionosphere",
           '"circuit noise" signal']


@pytest.fixture
def corpus(tmp_path: Path, fast_hasher) -> tuple[Path, str]:
    """A SQLite file with 80 notes of random words from a small vocabulary (many ties, many matches)."""
    path = tmp_path / "fan-out.sqlite"
    store = SqliteStore(path, side_readers=0)
    svc = make_services(store, fast_hasher)
    ws = svc.workspace()
    rng = random.Random(5)
    for n in range(80):
        paragraphs = [Block(None, "paragraph", " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30))))
                      for _ in range(6)]
        svc.notes.create(ws.owner, title=f"Note {n}", blocks=paragraphs)
    store.close()
    return path, ws.id


@pytest.fixture
def open_stores():
    """SqliteStore(...) for the test, every one closed after it."""
    opened: list[SqliteStore] = []

    def open_one(*args, **kwargs) -> SqliteStore:
        opened.append(SqliteStore(*args, **kwargs))
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


def lexical(store: SqliteStore, workspace_id: str, query: str, limit: int) -> list[tuple[str, str, float]]:
    with store.read(workspace_id) as tx:
        hits = tx.search_index.lexical_blocks(lexical_query_terms(query), SearchFilter(), limit=limit)
    return [(h.note_id, h.block_id, h.score) for h in hits]


@pytest.mark.parametrize("limit", [5, 60, 1000])
def test_ranking_in_parallel_ranges_is_the_one_piece_ranking(corpus, open_stores, limit) -> None:
    path, workspace_id = corpus
    one_piece, side_by_side = open_stores(path, side_readers=0), open_stores(path, side_readers=2)
    with side_by_side.read(workspace_id) as tx:
        assert tx.parallel_reads == 3
        assert len(tx.search_index._rowid_shards()) == 3  # noqa: SLF001 - the split is what is under test
    for query in QUERIES:
        expected = lexical(one_piece, workspace_id, query, limit)
        assert expected, query
        assert lexical(side_by_side, workspace_id, query, limit) == expected, query


def test_a_busy_pool_runs_every_range_in_the_transaction_itself(corpus, open_stores) -> None:
    path, workspace_id = corpus
    reference = open_stores(path, side_readers=0)
    busy = open_stores(path, pool_size=1, side_readers=1)  # the transaction holds the only connection
    with busy.read(workspace_id) as tx:
        assert busy.read_aside("SELECT 1", ()) is None
        assert len(tx.search_index._rowid_shards()) == 2  # noqa: SLF001
    for query in QUERIES:
        assert lexical(busy, workspace_id, query, 40) == lexical(reference, workspace_id, query, 40)


def test_a_write_transaction_ranks_alone_and_sees_its_own_text(corpus, open_stores) -> None:
    path, workspace_id = corpus
    store = open_stores(path, side_readers=2)
    with store.write(workspace_id) as tx:
        assert tx.parallel_reads == 1  # other connections cannot see this transaction's writes
        tx._x("UPDATE blocks SET text = 'zeppelin quokka', lexical_text = 'zeppelin quokka' WHERE workspace_id = ? AND rid = ("  # noqa: SLF001
              "SELECT max(rid) FROM blocks WHERE workspace_id = ?)", (workspace_id, workspace_id))
        assert len(tx.search_index.lexical_blocks('"quokka"', SearchFilter(), limit=5)) == 1
    with store.read(workspace_id) as tx:
        assert len(tx.search_index.lexical_blocks('"quokka"', SearchFilter(), limit=5)) == 1  # committed


@pytest.mark.parametrize("side_readers", [0, 2])
def test_a_filter_that_refuses_most_top_matches_widens_until_the_page_is_full(corpus, open_stores, side_readers) -> None:
    """Ranking happens in the index, filtering after it, a window at a time: when the
    caller may see only a few notes, the window widens until `limit` rows pass, and the
    page is the filtered head of the full ranking."""
    path, workspace_id = corpus
    store = open_stores(path, side_readers=side_readers)
    with store.read(workspace_id) as tx:
        note_ids = sorted({r[0] for r in tx._x("SELECT note_id FROM blocks WHERE workspace_id = ?",  # noqa: SLF001
                                                (workspace_id,)).fetchall()})
    visible = frozenset(random.Random(3).sample(note_ids, 8))  # a tenth of the notes
    for query in QUERIES:
        everything = lexical(store, workspace_id, query, 10_000)
        expected = [hit for hit in everything if hit[0] in visible][:5]
        assert len(expected) == 5, query
        with store.read(workspace_id) as tx:
            hits = tx.search_index.lexical_blocks(lexical_query_terms(query), SearchFilter(note_ids=visible), limit=5)
        assert [(h.note_id, h.block_id, h.score) for h in hits] == expected, query
