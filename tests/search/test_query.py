"""User text → FTS5 / PostgreSQL queries: nasty inputs are escaped into terms, never
rejected, never empty — checked against a real in-memory SQLite FTS5 table and a real
PostgreSQL."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastpad.search.query import (
    MAX_TERMS,
    EVERY_WORD,
    IN_ORDER,
    holds_query,
    lexical_query_terms,
    matched_terms,
    parse_query,
    postgres_tsquery,
    postgres_websearch_text,
)

DOCS = {
    1: "AMP-activated protein kinase (AMPK) regulates energy at 1,000 rpm",
    2: "Cats and dogs: NOT friends, OR are they?",
    3: "Send the e-mail to O'Neil about node.js and C++",
    4: "machine learning for information retrieval",
    5: "learning about machine tools",
    6: 'She said "hello world" twice',
}

NASTY = [
    "",
    "   ",
    '"',
    '""',
    '"""',
    "!!!",
    "-",
    "*",
    "(AMPK)",
    "1,000",
    "AND",
    "OR",
    "NOT",
    "AND OR NOT",
    "cats AND dogs",
    "NEAR(cats dogs)",
    "title:cats",
    "cats*",
    "^cats",
    "{col1 col2}: x",
    "a\x00b",
    "emoji 😀 query",
    "e-mail O'Neil",
    'unbalanced "quote here',
    '"phrase one" "phrase two" rest',
    "'single' quotes",
    "back\\slash",
    "x" * 5000,
    "semi;colon -- DROP TABLE t",
    "C++ node.js",
    "\u201csmart quotes\u201d",
]


@pytest.fixture(scope="module")
def fts():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    db.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", DOCS.items())
    yield db
    db.close()


def search(db, text, **kwargs) -> list[int]:
    expression = lexical_query_terms(text, **kwargs)
    return [row[0] for row in db.execute("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid", (expression,))]


@pytest.mark.parametrize("text", NASTY)
def test_nasty_inputs_give_a_valid_nonempty_fts5_query(fts, text):
    expression = lexical_query_terms(text)
    assert expression.strip()  # never empty
    search(fts, text)  # never rejected (raises sqlite3.OperationalError otherwise)


def test_digits_parentheses_and_operator_words_are_terms(fts):
    assert search(fts, "1,000") == [1]
    assert search(fts, "(AMPK)") == [1]
    assert search(fts, "NOT") == [2]
    assert search(fts, "OR") == [2]  # the word, not the operator (alone it is not dropped)
    assert search(fts, "e-mail") == [3]
    assert search(fts, "O'Neil") == [3]
    assert search(fts, "!!!") == []  # no word: valid, matches nothing
    assert lexical_query_terms("cats AND dogs") == '"cats" OR "dogs"'  # one plain OR query


def test_terms_are_ored_and_ranked_by_bm25(fts):
    assert set(search(fts, "kinase rpm dogs")) == {1, 2}
    assert search(fts, "machine learning retrieval")[0] == 4


def test_quoted_phrases_are_honoured_and_required(fts):
    assert search(fts, '"machine learning"') == [4]
    assert sorted(search(fts, "machine learning")) == [4, 5]
    assert search(fts, '"learning machine"') == []
    assert search(fts, '"machine learning" tools') == [4]  # the phrase is required
    assert sorted(search(fts, '"machine learning" tools', require_phrases=False)) == [4, 5]
    assert search(fts, '"hello world"') == [6]
    assert lexical_query_terms('say "a ""b"" c"') .count('"') % 2 == 0


def test_parse_keeps_inner_punctuation_strips_edges_dedupes_and_caps():
    parsed = parse_query('The (AMPK) ampk 1,000. "Exact  phrase" exact')
    assert parsed.phrases == ("Exact phrase",)
    assert parsed.terms == ("AMPK", "1,000", "exact")  # "The" is a stopword; AMPK once
    many = parse_query(" ".join(f"w{i}" for i in range(100)))
    assert len(many.terms) == MAX_TERMS
    assert parse_query("the of and").terms == ("the", "of", "and")  # only stopwords: kept


def test_matched_terms_for_explanations():
    assert matched_terms('(AMPK) 1,000 "protein kinase" missing', DOCS[1]) == ("protein kinase", "AMPK", "1,000")
    assert matched_terms("node.js C++ absent", DOCS[3]) == ("node.js", "C")  # "C++" is the term "C", as FTS5 sees it


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_any_text_is_a_valid_fts5_query(text):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    db.execute("INSERT INTO docs(body) VALUES ('probe text')")
    db.execute("SELECT rowid FROM docs WHERE docs MATCH ?", (lexical_query_terms(text),)).fetchall()
    db.close()


def test_postgres_tsquery_and_websearch_on_a_real_server(pg_cluster):
    with psycopg.connect(pg_cluster.url("postgres"), autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE docs (id int, tsv tsvector)")
        for doc_id, body in DOCS.items():
            conn.execute("INSERT INTO docs VALUES (%s, to_tsvector('english', %s))", (doc_id, body))

        def pg(text, **kwargs) -> list[int]:
            rows = conn.execute(
                "SELECT id FROM docs WHERE tsv @@ to_tsquery('english', %s) "
                "ORDER BY ts_rank_cd(tsv, to_tsquery('english', %s)) DESC, id",
                (postgres_tsquery(text, **kwargs),) * 2,
            ).fetchall()
            return [r[0] for r in rows]

        def web(text) -> list[int]:
            rows = conn.execute(
                "SELECT id FROM docs WHERE tsv @@ websearch_to_tsquery('english', %s) ORDER BY id", (postgres_websearch_text(text),)
            ).fetchall()
            return [r[0] for r in rows]

        for text in NASTY:
            pg(text)  # never a syntax error
            web(text)
        assert pg("1,000") == [1]
        assert pg("(AMPK)") == [1]
        assert pg("e-mail") == [3]
        assert pg("O'Neil back\\slash") == [3]
        assert pg('"machine learning"') == [4]
        assert pg('"machine learning" tools') == [4]
        assert pg("machine learning")[:1] == [4] and set(pg("machine learning")) == {4, 5}
        assert pg("!!!") == []
        assert web('"machine learning" or -tools') == [4, 5]  # "-" is not negation, "or" not an operator


def test_a_text_holds_a_query_as_typed_or_word_by_word_or_not_at_all():
    texts = ["Meeting — API review", "Notes on idempotency keys."]
    assert holds_query("meeting notes", texts) == EVERY_WORD  # the title one word, a block the other
    assert holds_query("API review", texts) == IN_ORDER  # punctuation and case aside
    assert holds_query("BIGV3X", ["Serial BIGV3X, rack 2"]) == IN_ORDER
    assert holds_query("the review of keys", texts) == EVERY_WORD  # stopwords need not be held apart…
    assert holds_query("review keys", ["review", "keys"]) == EVERY_WORD  # …and in order means within one text
    assert holds_query("meeting minutes", texts) is None
    assert holds_query("meetings", texts) is None, "as typed: no stemming"
    assert holds_query('"API review" notes', texts) == EVERY_WORD
    assert holds_query('"review API"', texts) is None, "a quoted phrase is held only in its order"
