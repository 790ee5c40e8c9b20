"""ContextService: one bundle of note text for a question, packed to a token budget.

What ``fastpad_context`` returns, and what ``bench/retrieval.py`` measures (the same code):

1. **Retrieve**: hybrid search at the caller's trust floor, as deep as the budget can use —
   ``budget // TOKENS_PER_NOTE`` notes, between ``MIN_NOTES`` and ``MAX_NOTES`` — with each
   hit's anchor blocks.
2. **Expand**: around each anchor, the blocks before and after it and the heading it sits
   under; from the best notes, one hop along the graph (asserted edges only, for anyone)
   to the opening blocks of linked notes.
3. **Dedupe** by block id, keeping a block's best score.
4. **Rank**: a block scores its note's fused search score, weighted by how it was reached
   (anchor > neighbour > heading > linked note); the notes search found are ordered by their
   best block, then **reranked** by what search does not do, reading the candidates together
   (:func:`rerank`: pseudo-relevance feedback from the best notes' words); a linked note comes
   right after the note it was reached from; blocks within a note by position.
5. **Pack** the budget, counted in o200k tokens of each note as the tool renders it
   (:func:`render_note`: its fenced Markdown with block anchors). Every block gets the same
   share: the largest number of tokens for which the ranked notes, each block cut to that
   share, fit the budget (never below ``MIN_SHARE``). A block within its share stays whole;
   a longer one is cut to its sentences that match the most of the query's terms (the
   lexical arm's terms, :func:`fastpad.search.query.matched_terms`), kept in their order,
   with ``[...]`` where text was left out — an *excerpt* that keeps the block's id, so
   ``fastpad_fetch`` reads it whole. Notes that still do not fit are left for ``rest``.

Deterministic: no model is called here beyond what search itself does.

Scope: a bundle needs ``notes:read`` (the tool's scope in the spec table). Retrieval and
expansion run the search and graph services for the same credential with ``search:read``
and ``graph:read`` added: within the credential's note set, titles, snippets and edges
between its notes say nothing a body read under ``notes:read`` does not.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fastpad.errors import NotFound
from fastpad.knowledge.graph import GraphService
from fastpad.knowledge.note_views import NoteView
from fastpad.knowledge.notes import NoteService
from fastpad.knowledge.trust import TrustFloor, admits, floor_for
from fastpad.notes import Block, NoteMeta, serialize_markdown
from fastpad.notes.blocks import CALLOUT, LIST_ITEM, PARAGRAPH, QUOTE, TASK
from fastpad.outbound import count_tokens, fence_note
from fastpad.search.fusion import Fusion, RankedList, StrategyHit
from fastpad.search.query import ParsedQuery, content_words, matched_terms, parse_query
from fastpad.search.service import MAX_LIMIT, SearchService
from fastpad.security.principals import Principal
from fastpad.security.scopes import GRAPH_READ, NOTES_READ, SEARCH_READ

TOKENS_PER_NOTE = 40  # retrieval depth: one note per this many tokens of budget…
MIN_NOTES = 8  # …but never fewer notes than this
MAX_NOTES = MAX_LIMIT  # …nor more than one search page can hold
ANCHORS_PER_NOTE = 3
EXPAND_FROM = 3  # best notes whose links are followed
LINKS_PER_NOTE = 5
LINKED_BLOCKS = 2  # opening blocks taken from a linked note
WEIGHT = {"anchor": 1.0, "neighbour": 0.6, "heading": 0.5, "linked": 0.35}
FEEDBACK_NOTES = 5  # the best candidates whose words vote in the rerank
MIN_SHARE = 32  # tokens: no block is cut below about one sentence
GAP = "[...]"  # where an excerpt left text out (ASCII: one token, escaped nowhere)
# What a note is counted with: a boundary of the length the outbound path draws (16 hex digits).
COUNTING_BOUNDARY = "0123456789abcdef"
PROSE = frozenset({PARAGRAPH, LIST_ITEM, TASK, QUOTE, CALLOUT})  # the blocks an excerpt may cut
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class ContextNote:
    """One note of a bundle: the blocks it carries, in note order (an excerpt's ``text`` is cut,
    its ``id`` kept), and the candidate blocks the trust floor kept out, for the caller to count."""

    view: NoteView
    blocks: tuple[Mapping[str, Any], ...]
    score: float
    via: tuple[str, ...]
    excerpted: tuple[str, ...] = ()  # ids of the blocks cut to an excerpt
    withheld: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class ContextBundle:
    notes: tuple[ContextNote, ...]  # packed, best first
    rest: tuple[ContextNote, ...]  # ranked candidates that did not fit, their blocks whole
    tokens: int  # what the packed notes cost, counted as :meth:`ContextService.cost` counts
    depth: int  # notes asked of search
    share: int  # the tokens each block was allowed before it was cut


def render_note(note_id: str, title: str, blocks: Sequence[Mapping[str, Any]]) -> str:
    """A note as ``fastpad_context`` sends it: its blocks' Markdown, each with its ``{#id}``
    anchor, fenced under the note's id and title (the data label is said once per result,
    so it is not part of a note)."""
    markdown = serialize_markdown(NoteMeta(), [Block(b["id"], b["type"], b["text"], b["attrs"]) for b in blocks])
    return fence_note(note_id, title, markdown, boundary=COUNTING_BOUNDARY, with_label=False)


def depth_for(budget: int) -> int:
    """How many notes a bundle of ``budget`` tokens retrieves."""
    return max(MIN_NOTES, min(MAX_NOTES, budget // TOKENS_PER_NOTE))


class Passage:
    """A prose block's text as sentences, each with its tokens and how many query terms it
    matches, so it can be cut to any share without counting again (other blocks stay whole)."""

    def __init__(self, block: Mapping[str, Any], query: ParsedQuery) -> None:
        self.text = text = block["text"]
        self.tokens = count_tokens(text)
        # Only prose is cut: a code block or a table row cut by sentences would read as broken.
        self.sentences = [s for s in _SENTENCE_END.split(text.strip()) if s] if block["type"] in PROSE else []
        self.costs = [count_tokens(s) + 1 for s in self.sentences]
        matches = [len(matched_terms(query, s)) for s in self.sentences]
        self.ranked = sorted(range(len(self.sentences)), key=lambda i: (-matches[i], i))

    def excerpt(self, share: int) -> str:
        """The whole text if it fits ``share`` tokens; else the sentences matching the most query
        terms (earlier first among equals) that fit, in their order, ``[...]`` marking each gap.
        A best sentence longer than the share on its own (text without sentence ends) is cut to
        its opening words."""
        if self.tokens <= share or not self.sentences:
            return self.text
        chosen, used = [], 0
        for i in self.ranked:
            if used + self.costs[i] <= share:
                chosen.append(i)
                used += self.costs[i]
        pieces = list(self.sentences)
        cut_short = not chosen
        if cut_short:
            i = self.ranked[0]
            words = pieces[i].split()
            pieces[i] = " ".join(words[:max(1, len(words) * share // self.costs[i])])
            chosen = [i]
        chosen.sort()
        out = [GAP] if chosen[0] > 0 else []
        for previous, i in zip([chosen[0], *chosen], chosen):
            if i > previous + 1:
                out.append(GAP)
            out.append(pieces[i])
        if cut_short or chosen[-1] < len(pieces) - 1:
            out.append(GAP)
        return " ".join(out)


@dataclass
class _Candidate:
    view: NoteView
    scores: dict[str, float] = field(default_factory=dict)  # block id -> best score
    via: set[str] = field(default_factory=set)

    def add(self, block_id: str, score: float, how: str) -> None:
        self.scores[block_id] = max(score * WEIGHT[how], self.scores.get(block_id, 0.0))
        self.via.add("graph" if how == "linked" else "search")

    @property
    def best(self) -> float:
        return max(self.scores.values(), default=0.0)


def rerank(ranked: list[_Candidate]) -> list[_Candidate]:
    """The best ``FEEDBACK_NOTES`` candidates as search ranked them, then the others in the plain
    RRF (search's own :class:`~fastpad.search.fusion.Fusion`, every weight 1) of their fused order and a
    feedback order.

    Search scores each note against the query alone; this reads the candidates together
    (pseudo-relevance feedback): each word of the best ``FEEDBACK_NOTES`` votes with the share
    of them it occurs in, times how rare it is among all the candidates (log of the pool's size
    over the notes holding it), and a candidate scores the votes of its words over the square
    root of how many distinct words it has. A document that says what the best ones say in
    other words than the query's moves up; one that only shares the query's words moves down.
    The best ones keep their places: they are the evidence, and a note that alone matches the
    query exactly must not sink below many alike that match it less."""
    if len(ranked) <= FEEDBACK_NOTES:
        return ranked
    words = [content_words(n.view.title + " " + " ".join(b["text"] for b in n.view.blocks if b["id"] in n.scores))
             for n in ranked]
    held_by = Counter(w for found in words for w in found)
    voted = Counter(w for found in words[:FEEDBACK_NOTES] for w in found)
    vote = {w: count / FEEDBACK_NOTES * math.log(len(ranked) / held_by[w]) for w, count in voted.items()}
    feedback = [sum(vote.get(w, 0.0) for w in found) / math.sqrt(len(found) or 1) for found in words]
    ids = [n.view.id for n in ranked]
    by_feedback = sorted(range(len(ranked)), key=lambda i: (-feedback[i], i))
    orders = [RankedList("fused", tuple(StrategyHit(note_id, 0.0) for note_id in ids)),
              RankedList("feedback", tuple(StrategyHit(ids[i], 0.0) for i in by_feedback))]
    position = {note_id: p for p, (note_id, _) in enumerate(Fusion(orders, {}).order())}
    return ranked[:FEEDBACK_NOTES] + sorted(ranked[FEEDBACK_NOTES:], key=lambda n: position[n.view.id])


class ContextService:
    def __init__(self, search: SearchService, notes: NoteService, graph: GraphService) -> None:
        self.search, self.notes, self.graph = search, notes, graph

    def bundle(self, principal: Principal, query: str, *, budget: int, floor: str | TrustFloor | None = None,
               include_archived: bool = False, note_overhead: int = 0) -> ContextBundle:
        """The bundle for ``query`` within ``budget`` tokens; ``note_overhead``: what each note costs
        the caller beyond its rendered Markdown (a surface's per-note members)."""
        principal.require(NOTES_READ)
        at = floor_for(principal, floor)
        depth = depth_for(budget)
        candidates = self._candidates(principal, query, depth, at, include_archived)
        parsed = parse_query(query)
        share, packed, rest, tokens = self._pack(candidates, parsed, at, budget, note_overhead)
        return ContextBundle(tuple(packed), tuple(rest), tokens, depth, share)

    @staticmethod
    def cost(note_id: str, title: str, blocks: Sequence[Mapping[str, Any]]) -> int:
        """A note's tokens in a bundle (o200k, the outbound path's count)."""
        return count_tokens(render_note(note_id, title, blocks))

    # -- retrieve, expand, dedupe, rank ------------------------------------------------------

    def _candidates(self, principal: Principal, query: str, depth: int, at: TrustFloor,
                    include_archived: bool) -> list[_Candidate]:
        reader = replace(principal, scopes=principal.scopes | {SEARCH_READ, GRAPH_READ})  # see the module docstring
        hits = self.search.search(reader, query, limit=depth, floor=at, include_archived=include_archived).hits
        found: dict[str, _Candidate] = {}

        def note(note_id: str) -> _Candidate | None:
            if note_id not in found:
                try:
                    found[note_id] = _Candidate(self.notes.get(principal, note_id))
                except NotFound:
                    return None
            return found[note_id]

        for hit in hits:
            target = note(hit.note_id)
            if target is None:
                continue
            blocks = target.view.blocks
            position = {b["id"]: i for i, b in enumerate(blocks)}
            for rank, anchor in enumerate(hit.anchors[:ANCHORS_PER_NOTE]):
                if anchor not in position:
                    continue
                i = position[anchor]
                score = hit.score * (1.0 - 0.1 * rank)
                target.add(anchor, score, "anchor")
                for j in (i - 1, i + 1):
                    if 0 <= j < len(blocks):
                        target.add(blocks[j]["id"], score, "neighbour")
                heading = next((blocks[j] for j in range(i - 1, -1, -1) if blocks[j]["type"] == "heading"), None)
                if heading is not None:
                    target.add(heading["id"], score, "heading")
        searched = rerank(sorted((n for n in found.values() if n.scores), key=lambda n: -n.best))
        linked_from: dict[str, list[_Candidate]] = {}
        for hit in hits[:EXPAND_FROM]:
            for edge in self.graph.neighbors(reader, hit.note_id, floor=at, limit=LINKS_PER_NOTE,
                                             walking=True):
                other = edge.target if edge.direction == "out" else edge.source
                if other is None:
                    continue
                linked = note(other.id)
                if linked is not None:
                    for block in [b for b in linked.view.blocks if b["text"].strip()][:LINKED_BLOCKS]:
                        linked.add(block["id"], hit.score, "linked")
                    linked_from.setdefault(hit.note_id, []).append(linked)
        # A linked note follows the note it was reached from, unless it ranks higher on its own: the
        # deeper the search, the more of the workspace it lists, and a linked note it found far down
        # must not stay there when expanding the best notes is what brings it in.
        ordered: dict[str, _Candidate] = {}
        for n in searched:
            for each in (n, *linked_from.get(n.view.id, ())):
                ordered.setdefault(each.view.id, each)
        ordered.update((n.view.id, n) for links in linked_from.values() for n in links if n.view.id not in ordered)
        return [n for n in ordered.values() if n.scores]

    # -- pack --------------------------------------------------------------------------------

    def _pack(self, candidates: list[_Candidate], query: ParsedQuery, at: TrustFloor, budget: int,
              note_overhead: int) -> tuple[int, list[ContextNote], list[ContextNote], int]:
        """The largest share at which every candidate fits (by bisection: a larger share never
        costs less), at least ``MIN_SHARE``; then the ranked notes at that share while they fit."""
        chosen = []
        for n in candidates:
            blocks = [b for b in n.view.blocks if b["id"] in n.scores]
            admitted = [b for b in blocks if admits(at, b.get("origin"), b.get("review_state"))]
            withheld = tuple(b for b in blocks if b not in admitted)
            chosen.append((n, admitted, withheld, [Passage(b, query) for b in admitted]))

        def at_share(share: int) -> list[tuple[ContextNote, int]]:
            out = []
            for n, blocks, withheld, passages in chosen:
                cut = [{**b, "text": p.excerpt(share)} for b, p in zip(blocks, passages)]
                excerpted = tuple(b["id"] for b, c in zip(blocks, cut) if c["text"] != b["text"])
                note = ContextNote(n.view, tuple(cut), round(n.best, 6), tuple(sorted(n.via)), excerpted, withheld)
                out.append((note, self.cost(n.view.id, n.view.title, cut) + note_overhead))
            return out

        def fits(notes: list[tuple[ContextNote, int]]) -> bool:
            return sum(cost for _, cost in notes) <= budget

        low = high = max((p.tokens for *_, passages in chosen for p in passages), default=MIN_SHARE)
        best = at_share(high)
        if not fits(best):
            low, best = MIN_SHARE, at_share(MIN_SHARE)
            while fits(best) and high - low > 8:  # the largest share that fits, to within a few tokens
                middle = (low + high) // 2
                trial = at_share(middle)
                if fits(trial):
                    low, best = middle, trial
                else:
                    high = middle
        packed, rest, used = [], [], 0
        for (note, cost), (n, blocks, *_) in zip(best, chosen):
            if used + cost <= budget:
                packed.append(note)
                used += cost
            else:
                rest.append(replace(note, blocks=tuple(blocks), excerpted=()))
        return low, packed, rest, used
