"""User text → lexical queries (SQLite FTS5, PostgreSQL) and → a kind of query.

Turning user text into FTS syntax is where a peer's search lost most of its
quality (prefix terms ANDed across columns) and where it broke (``1,000``,
``(AMPK)``, quotes, ``AND``/``OR``/``NOT`` typed as words). Here every piece of
user text becomes a *quoted string*, so nothing the user types is ever read as
query syntax; the engine's own tokenizer then splits it exactly as it split the
documents (``"1,000"`` is the phrase ``1 000``, ``"(AMPK)"`` the term ``ampk``).
Terms are ORed — one plain bm25 OR query — and phrases the user quoted are
required. The result is never empty and never rejected: text with no word in
it gives ``""``, an FTS5 query that is valid and matches nothing.

The query classifier is a deterministic rule, documented at :func:`classify_query`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

MAX_TERMS = 32
MAX_PHRASES = 8

# Dropped from the ORed terms when something else remains (they are kept inside
# quoted phrases). The Snowball English list — the one PostgreSQL's `english`
# configuration drops — so both backends match on the same words (FTS5 drops
# none itself): a query's "between" must not find a note on SQLite that it
# cannot find on PostgreSQL. bm25's IDF already discounts common words; these
# only cost time in an OR query and add noise.
STOPWORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
    her hers herself it its itself they them their theirs themselves what which who whom this that
    these those am is are was were be been being have has had having do does did doing a an the and
    but if or because as until while of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then once here
    there when where why how all any both each few more most other some such no nor not only own
    same so than too very s t can will just don should now
    """.split()
)

INTERROGATIVES = frozenset(
    "who whom whose what when where why how which is are was were do does did can could "
    "should would will shall may might must has have had".split()
)

_QUOTE_CHARS = {"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"', "\uff02": '"'}
_WORD = re.compile(r"\w", re.UNICODE)


@dataclass(frozen=True)
class ParsedQuery:
    """The pieces of a user query. ``terms`` are unquoted words as typed, with
    surrounding punctuation removed and inner punctuation kept (``1,000``,
    ``node.js``); ``phrases`` are the user's quoted phrases, whitespace-normalised.
    ``all_terms`` keeps stopwords (for the classifier); ``terms`` does not."""

    text: str
    phrases: tuple[str, ...]
    terms: tuple[str, ...]
    all_terms: tuple[str, ...]

    @property
    def is_empty(self) -> bool:
        return not self.phrases and not self.terms


def _clean(text: str) -> str:
    text = "".join(_QUOTE_CHARS.get(ch, ch) for ch in text or "")
    # Control characters (NUL included) are never query content: FTS5 rejects a NUL.
    return "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co") else ch for ch in text)


def _strip_edges(piece: str) -> str:
    start, end = 0, len(piece)
    while start < end and not _WORD.match(piece[start]):
        start += 1
    while end > start and not _WORD.match(piece[end - 1]):
        end -= 1
    return piece[start:end]


def parse_query(text: str) -> ParsedQuery:
    """Split user text into quoted phrases and plain terms (deduplicated, capped)."""
    cleaned = _clean(text)
    phrases: list[str] = []
    rest: list[str] = []
    parts = cleaned.split('"')
    # Even parts are outside quotes, odd parts inside; an unmatched last quote
    # (an odd number of quotes) leaves its tail as plain text.
    closed = len(parts) % 2 == 1
    for index, part in enumerate(parts):
        inside = index % 2 == 1 and (closed or index < len(parts) - 1)
        if inside:
            phrase = " ".join(part.split())
            if _WORD.search(phrase):
                phrases.append(phrase)
        else:
            rest.append(part)
    all_terms: list[str] = []
    seen: set[str] = set()
    for piece in " ".join(rest).split():
        term = _strip_edges(piece)
        if term and term.casefold() not in seen:
            seen.add(term.casefold())
            all_terms.append(term)
    phrases = _dedupe(phrases)[:MAX_PHRASES]
    content = [t for t in all_terms if t.casefold() not in STOPWORDS]
    terms = content if (content or phrases) else all_terms
    return ParsedQuery(cleaned, tuple(phrases), tuple(terms[:MAX_TERMS]), tuple(all_terms))


def _dedupe(values: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for value in values:
        if value.casefold() not in seen:
            seen.add(value.casefold())
            out.append(value)
    return out


# --- SQLite FTS5 ----------------------------------------------------------------


def _fts5_string(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def lexical_query_terms(text: str | ParsedQuery, *, require_phrases: bool = True) -> str:
    """A safe FTS5 ``MATCH`` expression for user text.

    ``foo (AMPK) 1,000 NOT`` → ``"foo" OR "AMPK" OR "1,000" OR "NOT"``;
    ``"exact words" other`` → ``"exact words" AND ("exact words" OR "other")``
    (the phrase is required; repeating it in the OR keeps it in bm25's sum).
    Text with no word in it → ``""`` (valid, matches nothing). Use it as a bound
    parameter: ``... WHERE blocks_fts MATCH ? ORDER BY bm25(blocks_fts)``.
    """
    parsed = text if isinstance(text, ParsedQuery) else parse_query(text)
    phrases = [_fts5_string(p) for p in parsed.phrases]
    terms = [_fts5_string(t) for t in parsed.terms]
    if not phrases and not terms:
        return '""'
    if not phrases or not require_phrases:
        return " OR ".join(phrases + terms)
    required = " AND ".join(phrases)
    if not terms:
        return required
    return f"{required} AND ({' OR '.join(phrases + terms)})"


# --- PostgreSQL -----------------------------------------------------------------


def _tsquery_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def postgres_tsquery(text: str | ParsedQuery, *, require_phrases: bool = True) -> str:
    """The PostgreSQL counterpart: input for ``to_tsquery(config, %s)``.

    Same shape as :func:`lexical_query_terms` — every piece a quoted lexeme
    string, so ``to_tsquery`` runs the configuration's parser on it (``'1,000'``
    → ``'1' <-> '000'``, a quoted phrase → ``<->``-joined lexemes, stopwords
    dropped) and never reads user text as operators::

        SELECT ... WHERE tsv @@ to_tsquery('english', %s)
        ORDER BY ts_rank_cd(tsv, to_tsquery('english', %s)) DESC

    Text with no word in it → ``''`` unquoted-empty, which ``to_tsquery``
    accepts as an empty query (a NOTICE, no rows); an empty *quoted* string
    would be a syntax error and is never produced.
    """
    parsed = text if isinstance(text, ParsedQuery) else parse_query(text)
    phrases = [_tsquery_string(p) for p in parsed.phrases]
    terms = [_tsquery_string(t) for t in parsed.terms]
    if not phrases and not terms:
        return ""
    if not phrases or not require_phrases:
        return " | ".join(phrases + terms)
    required = " & ".join(phrases)
    if not terms:
        return required
    return f"{required} & ( {' | '.join(phrases + terms)} )"


def lexical_match(text: str | ParsedQuery, backend: str, *, require_phrases: bool = True) -> str:
    """The lexical index's query for user text on ``backend`` ("sqlite" or "postgres"):
    what ``SearchIndex.lexical_blocks`` takes. ``require_phrases`` False: any phrase or term."""
    parsed = text if isinstance(text, ParsedQuery) else parse_query(text)
    if backend == "postgres":
        return postgres_tsquery(parsed, require_phrases=require_phrases)
    return "" if parsed.is_empty else lexical_query_terms(parsed, require_phrases=require_phrases)


def every_word_match(text: str | ParsedQuery, backend: str) -> str:
    """The query only a block holding every typed term and phrase matches, which
    ``SearchIndex.lexical_blocks`` ranks above the blocks matching some of them: on PostgreSQL,
    for two pieces or more; ``""`` otherwise. ``ts_rank_cd`` weighs no word by its rarity, so a
    block repeating one common word of a phrase outranked the block holding the whole phrase
    (bench/known_item.py: phrases found first 0.66 of the time); FTS5's bm25 does weigh rarity
    and ranks that block first already (0.89), so SQLite is left as it ranks."""
    parsed = text if isinstance(text, ParsedQuery) else parse_query(text)
    pieces = [*parsed.phrases, *parsed.terms]
    if backend != "postgres" or len(pieces) < 2:
        return ""
    return " & ".join(_tsquery_string(piece) for piece in pieces)


def postgres_websearch_text(text: str | ParsedQuery) -> str:
    """Alternative input for ``websearch_to_tsquery(config, %s)``: terms ORed,
    phrases quoted; leading ``-`` (negation) and bare ``or`` removed so the
    user's words are never operators. ``websearch_to_tsquery`` never raises."""
    parsed = text if isinstance(text, ParsedQuery) else parse_query(text)
    pieces = ['"' + p.replace('"', " ") + '"' for p in parsed.phrases]
    pieces += [t.lstrip("-") for t in parsed.terms if t.lstrip("-") and t.casefold() != "or"]
    return " or ".join(pieces)


def matched_terms(query: str | ParsedQuery, text: str) -> tuple[str, ...]:
    """Which of the query's phrases and terms occur in ``text`` (case-insensitive,
    on word boundaries, punctuation-insensitive) — for a lexical hit's explanation."""
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    words = _words(text)
    joined = " " + " ".join(words) + " "
    found = []
    for candidate in (*parsed.phrases, *parsed.terms):
        needle = " ".join(_words(candidate))
        if needle and f" {needle} " in joined:
            found.append(candidate)
    return tuple(found)


# How a note's text holds a query (``holds_query``), best first: the words as typed, in their order
# (a title, a phrase remembered, a single rare word); or every word and phrase, anywhere in it.
IN_ORDER, EVERY_WORD = "in_order", "every_word"
HOLDS_RANK = {IN_ORDER: 0, EVERY_WORD: 1}


def holds_query(query: str | ParsedQuery, texts: Sequence[str]) -> str | None:
    """How a note whose texts (its title, its blocks) are ``texts`` holds the query:
    :data:`IN_ORDER` when one of them holds the query's words one after another as typed
    (stopwords too, quotes aside), :data:`EVERY_WORD` when each of its terms and phrases stands
    in one of them (as :func:`matched_terms` reads a text), else None. Case- and
    punctuation-insensitive, as typed (no stemming: ``notes`` is not held by ``note``)."""
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    wanted = [_words(piece) for piece in (*parsed.phrases, *parsed.terms)]
    if not wanted or not all(wanted):  # nothing typed, or a piece with no word in it: nothing holds that
        return None
    folded = [text.casefold() for text in texts]
    if not all(any(word in text for text in folded) for words in wanted for word in words):
        return None  # a word not even inside the text: most of lexical's list stops here
    spoken = [" " + " ".join(_words(text)) + " " for text in folded]  # each text's words, read once
    if not all(any(f" {' '.join(words)} " in text for text in spoken) for words in wanted):
        return None
    typed = f" {' '.join(_words(parsed.text))} "
    return IN_ORDER if any(typed in text for text in spoken) else EVERY_WORD


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", (text or "").casefold(), re.UNICODE)


def content_words(text: str) -> set[str]:
    """The distinct words of ``text`` a query would keep as terms: casefolded, stopwords dropped."""
    return {word for word in _words(text) if word not in STOPWORDS}


# --- classifier -----------------------------------------------------------------

PHRASE, SENTENCE, NAME, KEYWORDS = "phrase", "sentence", "name", "keywords"

# Weights per kind of query, by strategy. Each row keeps every strategy in play
# (no zero weight: a strategy can still lift a document the others agree on).
# Lexical and dense weigh the same unless the query itself says which one it is
# for. Leaning sentences on dense and keywords on lexical was measured to help
# one collection and hurt the next (bench/retrieval.py: Vaswani -0.005, NFCorpus
# +0.004, a held-out collection -0.023 against plain RRF), so no row leans on a
# guess about the text:
#   phrase   — the user quoted words: the words are what they want → lexical.
#   sentence — a question or a long sentence: both retrieval arms alike.
#   name     — a person, project or place: what is attached to it → graph.
#   keywords — a few plain words: both retrieval arms alike.
QUERY_WEIGHTS: dict[str, dict[str, float]] = {
    PHRASE: {"lexical": 2.0, "dense": 0.6, "graph": 0.5, "recency": 0.3},
    SENTENCE: {"lexical": 1.0, "dense": 1.0, "graph": 0.5, "recency": 0.3},
    NAME: {"lexical": 1.0, "dense": 1.0, "graph": 1.6, "recency": 0.5},
    KEYWORDS: {"lexical": 1.0, "dense": 1.0, "graph": 0.5, "recency": 0.4},
}

SENTENCE_MIN_WORDS = 6
NAME_MAX_TOKENS = 3


def classify_query(text: str | ParsedQuery) -> str:
    """The kind of a query — a deterministic rule, first match wins:

    1. **phrase**: the user quoted at least one phrase (``"…"``, curly quotes too).
    2. **sentence**: it ends with ``?``; or it has at least
       :data:`SENTENCE_MIN_WORDS` words; or it has three or more words and starts
       with an interrogative or auxiliary (who, what, how, is, does, can, …).
    3. **name**: one to :data:`NAME_MAX_TOKENS` words, each starting with an
       uppercase letter (``Alice Smith``, ``AMPK``, ``Jean-Luc Picard``), the
       first not an interrogative.
    4. **keywords**: everything else (including an empty query).
    """
    parsed = text if isinstance(text, ParsedQuery) else parse_query(text)
    if parsed.phrases:
        return PHRASE
    words = list(parsed.all_terms)
    if not words:
        return KEYWORDS
    first = words[0].casefold()
    if parsed.text.rstrip().endswith("?") or len(words) >= SENTENCE_MIN_WORDS:
        return SENTENCE
    if len(words) >= 3 and first in INTERROGATIVES:
        return SENTENCE
    if len(words) <= NAME_MAX_TOKENS and first not in INTERROGATIVES and all(w[0].isupper() for w in words):
        return NAME
    return KEYWORDS


def weights_for(kind: str) -> dict[str, float]:
    return dict(QUERY_WEIGHTS[kind])
