"""SearchService: four strategies fused by rank, every hit explained, for a principal.

``search`` needs ``search:read``. It resolves what the caller may be shown —
its note set, archived notes only when asked, its trust floor
(``knowledge.trust``: agents default to ``human``, people to ``all``) — into
one ``SearchFilter`` that every strategy applies inside its own query, runs
lexical, dense, graph and recency in one read transaction
(``hybrid.hybrid_search``), demotes a superseded note and names its successor,
and renders each hit: ids, title, heading path, rank-based score, block
anchors, a short snippet (never a body) and the explanation.

Without an embedding provider, or when it fails, dense is left out and the
response says so in ``unavailable``; search itself never fails for want of it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from fastpad.errors import FieldError, ValidationFailed
from fastpad.knowledge.hidden import Hidden, archived, below_floor, limited_to_note_set
from fastpad.knowledge.trust import TrustFloor, admits, floor_for
from fastpad.notes.schema import why_unstorable
from fastpad.outbound.secrets import block_scope, redact
from fastpad.search.fusion import DENSE, GRAPH, LEXICAL, RECENCY, STRATEGIES, FusedHit, StrategyHit
from fastpad.search.indexing import lexical_text
from fastpad.search.hybrid import NO_PROVIDER, DenseStrategy, FusedResults, Strategy, hybrid_search
from fastpad.search.query import ParsedQuery, holds_query, lexical_match, matched_terms, parse_query
from fastpad.search.strategies import GraphStrategy, LexicalStrategy, RecencyStrategy
from fastpad.search.vectors import StoredVectors
from fastpad.security.principals import Principal
from fastpad.security.scopes import SEARCH_READ
from fastpad.store import Store, WorkspaceTx, utcnow
from fastpad.store.search_index import ChunkRow, HitNote, SearchFilter, known_provenance

MAX_QUERY_CHARS = 1000
MAX_LIMIT = 100
# Each strategy lists max(limit, MIN_DEPTH) notes for fusion. A page of ten
# fused from lists 50 deep scored nDCG@10 0.5104 on vaswani_npl against 0.511
# from lists 100 deep (bench/retrieval.py, "sensitivity"), and reading half as
# deep takes about a tenth off a search at 100,000 blocks (fewer blocks joined,
# fewer recency candidates, a smaller fusion).
MIN_DEPTH = 50
MAX_ANCHORS = 8
# How many matching blocks a hidden-match count reads for each reason (see _hidden).
HIDDEN_SCAN = 500
SNIPPET_CHARS = 200


@dataclass(frozen=True)
class SearchHit:
    rank: int
    note_id: str
    title: str
    types: tuple[str, ...]
    path: tuple[str, ...]  # the heading path of the first anchor
    score: float  # the fused reciprocal-rank score: an ordering key, never a threshold
    anchors: tuple[str, ...]  # block ids, best first
    snippet: str
    archived: bool
    updated_at: datetime
    explanation: dict[str, Any]

    @property
    def superseded_by(self) -> str | None:
        return self.explanation.get("superseded_by")

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank, "note_id": self.note_id, "title": self.title, "types": list(self.types),
            "path": list(self.path), "score": self.score, "anchors": list(self.anchors), "snippet": self.snippet,
            "archived": self.archived, "updated_at": self.updated_at.isoformat(),
            "superseded_by": self.superseded_by, "explanation": self.explanation,
        }


@dataclass(frozen=True)
class SearchResults:
    query: str
    query_kind: str
    floor: str
    weights: dict[str, float]
    hits: tuple[SearchHit, ...]
    unavailable: dict[str, str]  # strategy -> why it did not take part
    timings_ms: dict[str, float]
    ranked: dict[str, list[str]] = field(default_factory=dict)  # each strategy's own note order (benchmarks)
    hidden: tuple[Hidden, ...] = ()  # matches left out, per reason, on a page that came back short

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query, "query_kind": self.query_kind, "floor": self.floor, "weights": self.weights,
            "hits": [hit.as_dict() for hit in self.hits], "unavailable": self.unavailable,
            "hidden": [h.as_dict() for h in self.hidden], "timings_ms": self.timings_ms,
        }


class SearchService:
    def __init__(
        self,
        store: Store,
        *,
        vectors: StoredVectors | None = None,
        dense_off_reason: str = NO_PROVIDER,
        clock: Callable[[], datetime] = utcnow,
        on_search: Callable[[str], None] | None = None,
        redaction_key: bytes | None = None,
    ) -> None:
        """``vectors`` None: no embedding provider (``dense_off_reason`` says why).
        ``on_search(workspace_id)`` tells the embedding worker which workspaces are in use.
        ``redaction_key``: for a caller who is not a person, a hit's text is redacted whole with it
        before its snippet is cut — a secret cut in half (a private key's body without its BEGIN
        line) no longer looks like one, so the outbound path after would miss it."""
        self.store = store
        self.redaction_key = redaction_key
        self.vectors = vectors
        self.dense_off_reason = dense_off_reason
        self.clock = clock
        self.on_search = on_search
        self._strategies: dict[str, Strategy | None] = {
            LEXICAL: LexicalStrategy(),
            DENSE: None if vectors is None else DenseStrategy(vectors.provider, vectors),
            GRAPH: GraphStrategy(),
            RECENCY: RecencyStrategy(),
        }

    def _masker(self) -> Callable[[str, str], str]:
        key = self.redaction_key
        return lambda block_id, text: redact(text, key, block_scope(block_id)).text

    def search(
        self,
        principal: Principal,
        text: str,
        *,
        limit: int = 10,
        floor: str | TrustFloor | None = None,
        include_archived: bool = False,
        strategies: Iterable[str] | None = None,
    ) -> SearchResults:
        principal.require(SEARCH_READ)
        text = _check_query(text)
        if not principal.is_person:
            text = _without_secrets(text)
        _check_limit(limit)
        names = _check_strategies(strategies)
        at = floor_for(principal, floor)
        flt = SearchFilter(
            note_ids=principal.note_ids,
            include_archived=bool(include_archived),
            allowed_provenance=None if at is TrustFloor.ALL else frozenset(
                pair for pair in known_provenance() if admits(at, *pair)
            ),
        )
        if self.on_search is not None:
            self.on_search(principal.workspace_id)
        chosen = {name: self._strategies[name] for name in names}
        with self.store.read(principal.workspace_id) as tx:
            reader = _HitText(tx, flt, None if principal.is_person or self.redaction_key is None else self._masker())
            fused = hybrid_search(
                text, chosen, limit=limit, depth=max(limit, MIN_DEPTH),
                superseded_by=lambda ids: _successors(tx, principal, ids),
                reasons={DENSE: self.dense_off_reason},
                holding_query=reader.holding_query,
                workspace_id=principal.workspace_id, caller_id=principal.principal_id,
                include_archived=flt.include_archived, allow_note=principal.can_see,
                context={"tx": tx, "filter": flt, "now": self.clock()},
            )
            parsed = parse_query(text)
            started = time.perf_counter()
            hits = _render(reader, fused, parsed)
            rendered = time.perf_counter()
            # A short page (an empty one above all) is where a kept-out match reads as "nothing found":
            # it says what the filter kept back. A full page skips those reads.
            hidden = _hidden(tx, parsed, flt, principal, at) if len(hits) < limit else ()
            counted = time.perf_counter()
        return SearchResults(
            query=text, query_kind=fused.query_kind, floor=at.value, weights=fused.weights, hits=tuple(hits),
            unavailable={k: v for k, v in fused.unavailable.items() if k in names},
            timings_ms={**fused.timings_ms, "render": round((rendered - started) * 1000, 3),
                        "hidden": round((counted - rendered) * 1000, 3)},
            ranked={name: [h.note_id for h in found] for name, found in fused.strategies.items()},
            hidden=hidden,
        )


# ---------------------------------------------------------------------- input


def _without_secrets(text: str) -> str:
    """An agent's query less any secret in it: a search for a secret's value would tell the agent
    which note holds it, though every read shows it masked. A query that was only a secret is
    refused rather than run on nothing."""
    without = lexical_text(text)
    if without is text:
        return text
    kept = " ".join(without.split())
    if not kept:
        raise ValidationFailed(detail="the query is a secret's value; agents cannot search for secrets",
                               field_errors=[FieldError("q", "secret", "search for words, not a secret")])
    return kept


def _check_query(text: Any) -> str:
    return checked_text(text, field="q", max_chars=MAX_QUERY_CHARS, noun="a query",
                        missing=("a search needs query text", "some words to search for"))


def checked_text(text: Any, *, field: str, max_chars: int, noun: str, missing: tuple[str, str]) -> str:
    """``text`` stripped, or ``validation-failed`` on ``field``: blank (``missing``: the detail and
    the field's hint), or longer than ``max_chars``."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationFailed(detail=missing[0], field_errors=[FieldError(field, "required", missing[1])])
    if len(text) > max_chars:
        raise ValidationFailed(detail=f"{noun} is at most {max_chars} characters",
                               field_errors=[FieldError(field, "max_length", f"at most {max_chars} characters")])
    if (why := why_unstorable(text)) is not None:
        # A NUL reaches no stored text (none holds one), and PostgreSQL refuses it in a query
        # outright: refused here, typed, rather than quietly running search without its lexical arm.
        raise ValidationFailed(detail=f"{noun} cannot hold that character: {why}",
                               field_errors=[FieldError(field, "unstorable", why)])
    return text.strip()


def _check_limit(limit: Any) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationFailed(detail=f"limit is between 1 and {MAX_LIMIT}",
                               field_errors=[FieldError("limit", "range", f"between 1 and {MAX_LIMIT}")])


def _check_strategies(strategies: Iterable[str] | None) -> list[str]:
    if strategies is None:
        return list(STRATEGIES)
    if isinstance(strategies, str):
        strategies = [s.strip() for s in strategies.split(",") if s.strip()]
    given = list(strategies)
    unknown = [s for s in given if s not in STRATEGIES]
    if unknown or not given:
        raise ValidationFailed(
            detail=f"strategies are some of {', '.join(STRATEGIES)}",
            field_errors=[FieldError("strategies", "unknown_strategy" if unknown else "required",
                                     f"name some of {', '.join(STRATEGIES)}")],
        )
    return [s for s in STRATEGIES if s in given]


# ---------------------------------------------------------------------- supersession


def _hidden(tx: WorkspaceTx, parsed: ParsedQuery, flt: SearchFilter, principal: Principal,
            at: TrustFloor) -> tuple[Hidden, ...]:
    """Per reason the caller's filter applies — its trust floor, archived notes — the notes (within
    its note set) whose blocks or title match the query's words with only that restriction lifted,
    less those that match with it: counted, never shown. The text index decides (the strategy every
    word goes through), reading at most ``HIDDEN_SCAN`` blocks and titles per reason; a count that
    reached it is a lower bound. A caller limited to a note set is told so, uncounted."""
    match = lexical_match(parsed, tx.search_index.backend)
    if not match or flt.sees_nothing:
        return ()

    def matching(candidate: SearchFilter) -> tuple[set[str], bool]:
        blocks = tx.search_index.lexical_blocks(match, candidate, limit=HIDDEN_SCAN)
        titles = tx.search_index.lexical_titles(match, candidate, limit=HIDDEN_SCAN)
        return ({b.note_id for b in blocks} | {note_id for note_id, _ in titles},
                HIDDEN_SCAN in (len(blocks), len(titles)))

    relaxed: list[tuple[SearchFilter, Callable[..., Hidden]]] = []
    if flt.allowed_provenance is not None:
        relaxed.append((replace(flt, allowed_provenance=None), lambda n, **kw: below_floor(n, "notes", at, **kw)))
    if not flt.include_archived:
        relaxed.append((replace(flt, include_archived=True), archived))
    hidden = []
    for candidate, explain in relaxed:
        found, cut = matching(candidate)
        if not found:
            continue
        among = frozenset(found) if flt.note_ids is None else flt.note_ids & found
        shown, _ = matching(replace(flt, note_ids=among))  # which of them the caller's own filter admits
        if found - shown:
            hidden.append(explain(len(found - shown), at_least=cut))
    if flt.note_ids is not None:
        # Said, never counted: a count of the notes outside the set per query would let a token
        # limited to some notes ask, word by word, what the others say. (fastpad_fetch counts the
        # ids its caller named itself, which tells it nothing new.)
        hidden.append(limited_to_note_set())
    return tuple(hidden)


def _successors(tx: WorkspaceTx, principal: Principal, note_ids: Sequence[str]) -> dict[str, str]:
    """Which of these notes a visible, live note supersedes (the knowledge model's lookup)."""
    found = {note_id: successor for note_id, (successor, _link) in tx.links.supersessions_of(note_ids).items()
             if principal.can_see(successor)}
    live = tx.search_index.visible_notes(found.values(), SearchFilter(note_ids=principal.note_ids,
                                                                      include_archived=True))
    return {note_id: successor for note_id, successor in found.items() if successor in live}


# ---------------------------------------------------------------------- rendering


class _HitText:
    """What one search reads of its hits' notes — titles, and block text as the caller may see it
    (masked whole for a caller who is not a person) — read once, for deciding which notes hold
    the query and for rendering the page alike."""

    def __init__(self, tx: WorkspaceTx, flt: SearchFilter, mask: Callable[[str, str], str] | None) -> None:
        # ``mask(block_id, text)``: a block's placeholders are bound to the block (outbound/secrets.py)
        self.tx, self.flt, self.mask = tx, flt, mask
        self._notes: dict[str, HitNote | None] = {}
        self._raw: dict[str, str | None] = {}
        self._masked: dict[str, str] = {}

    def notes(self, note_ids: Sequence[str]) -> dict[str, HitNote]:
        missing = [n for n in note_ids if n not in self._notes]
        if missing:
            found = self.tx.search_index.hit_notes(missing)
            self._notes.update({n: found.get(n) for n in missing})
        return {n: note for n in note_ids if (note := self._notes[n]) is not None}

    def texts(self, anchors_of: Mapping[str, Sequence[str]], *, as_read: bool = True) -> dict[str, str]:
        """block id → text of these notes' blocks that the caller's floor admits: as the caller
        reads it (masked for one who is not a person), or with ``as_read=False`` as stored."""
        missing = {b for blocks in anchors_of.values() for b in blocks if b not in self._raw}
        if missing:
            found = self.tx.search_index.block_texts(anchors_of, missing, self.flt)
            self._raw.update({b: found.get(b) for b in missing})
        raw = {b: text for blocks in anchors_of.values() for b in blocks if (text := self._raw[b]) is not None}
        if not as_read or self.mask is None:
            return raw
        for block_id in raw.keys() - self._masked.keys():
            self._masked[block_id] = self.mask(block_id, raw[block_id])
        return {block_id: self._masked[block_id] for block_id in raw}

    def holding_query(self, parsed: ParsedQuery, found: Sequence[StrategyHit]) -> dict[str, str]:
        """Of these lexical hits, how each note whose title or matched blocks hold the query holds
        it (``query.holds_query``), read as the caller sees them (a masked secret holds nothing)
        and as the hit's words are marked, so what ranks a note up is what its hit shows. The
        stored text decides first; only the notes it admits are masked and read again (masking
        puts a placeholder where a secret was, so what it removes can only lose a note its place),
        and the whole list is checked at about the cost of a page."""
        if parsed.is_empty or not found:
            return {}
        notes = self.notes([hit.note_id for hit in found])
        found = [hit for hit in found if hit.note_id in notes]
        held = self._held(parsed, found, lambda title: title, self.texts({h.note_id: h.block_ids for h in found},
                                                                          as_read=False))
        if self.mask is None or not held:
            return held
        again = [hit for hit in found if hit.note_id in held]
        # Whether a title holds the query does not depend on which place its placeholders name.
        mask = self.mask
        return self._held(parsed, again, lambda title: mask("", title), self.texts({h.note_id: h.block_ids for h in again}))

    def _held(self, parsed: ParsedQuery, found: Sequence[StrategyHit], title: Callable[[str], str],
              texts: Mapping[str, str]) -> dict[str, str]:
        held = {}
        for hit in found:
            how = holds_query(parsed, [title(self._notes[hit.note_id].title), *(texts.get(b, "") for b in hit.block_ids)])
            if how is not None:
                held[hit.note_id] = how
        return held


def _render(reader: _HitText, fused: FusedResults, parsed: ParsedQuery) -> list[SearchHit]:
    note_ids = [hit.note_id for hit in fused.hits]
    notes = reader.notes(note_ids)
    chunks = reader.tx.search_index.chunks_of(note_ids)
    lexical_anchors = {hit.note_id: hit.block_ids for hit in fused.strategies.get(LEXICAL, [])}
    denied = reader.flt.denied_mask
    anchors_of: dict[str, tuple[str, ...]] = {}
    for hit in fused.hits:
        anchors = hit.block_ids[:MAX_ANCHORS]
        if not anchors:  # found by graph or recency alone: point at the first text the caller may read
            first = next((c for c in chunks.get(hit.note_id, []) if not c.provenance_mask & denied), None)
            anchors = first.block_ids[:MAX_ANCHORS] if first else ()
        anchors_of[hit.note_id] = anchors
    texts = reader.texts({note_id: (*anchors, *lexical_anchors.get(note_id, ())) for note_id, anchors in anchors_of.items()})
    out = []
    for hit in fused.hits:
        note = notes.get(hit.note_id)
        if note is None:
            continue
        anchors = anchors_of[hit.note_id]
        terms: tuple[str, ...] = ()
        if hit.note_id in lexical_anchors:
            # Lexical reads the title beside the text: a word of either matched.
            terms = matched_terms(parsed, "\n".join([note.title, *(texts.get(b, "")
                                                                    for b in lexical_anchors[hit.note_id])]))
        out.append(SearchHit(
            rank=len(out) + 1, note_id=hit.note_id, title=note.title, types=note.types,
            path=_path(chunks.get(hit.note_id, []), anchors), score=round(hit.score, 6), anchors=anchors,
            snippet=snippet([texts[b] for b in anchors if b in texts], terms or parsed.terms),
            archived=note.archived, updated_at=note.updated_at, explanation=_explain(hit, terms),
        ))
    return out


def _explain(hit: FusedHit, terms: tuple[str, ...]) -> dict[str, Any]:
    explanation = replace(hit.explanation, matched_terms=terms).to_dict()
    for contribution in explanation["contributions"]:
        contribution["score"] = round(contribution["score"], 6)
        contribution["rrf"] = round(contribution["rrf"], 6)
    return explanation


def _path(chunks: Sequence[ChunkRow], anchors: Sequence[str]) -> tuple[str, ...]:
    if not anchors:
        return ()
    return next((c.heading_path for c in chunks if anchors[0] in c.block_ids), ())


_SPACE = re.compile(r"\s+")


def snippet(texts: Sequence[str], terms: Sequence[str], *, width: int = SNIPPET_CHARS) -> str:
    """A short window of the anchored text around the first matched term (or its
    start), cut at word boundaries and marked with ``…`` where it was cut."""
    joined = [_SPACE.sub(" ", t).strip() for t in texts if t and t.strip()]
    if not joined:
        return ""
    text, at = joined[0], 0
    lowered = [t.casefold() for t in joined]
    for term in terms:
        needle = term.casefold()
        found = next(((i, lowered[i].find(needle)) for i in range(len(joined)) if needle in lowered[i]), None)
        if found:
            text, at = joined[found[0]], found[1]
            break
    if len(text) <= width:
        return text
    start = max(0, min(at - width // 3, len(text) - width))
    if start:
        start = text.find(" ", start) + 1 or start
    end = start + width
    if end < len(text):
        end = text.rfind(" ", start, end) if text.rfind(" ", start, end) > start else end
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")
