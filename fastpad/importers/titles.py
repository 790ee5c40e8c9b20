"""A title for every imported note that a ``[[link]]`` can name unambiguously.

Links become edges by title (``knowledge/link_projection.py``), so each
imported note needs a title no other note answers to first: not another note
of the same archive (two ``Index.md`` in two folders), and not a note already
in the workspace (which, being older, would win the link). A note keeps the
title its source gives it where that is free; otherwise it is told apart by
where it sits — ``Index (Projects)`` — and then by number. Of several notes
with one title, the one nearest the archive's root keeps it plain (two at the
same depth are both told apart). A note an earlier attempt already
created keeps the title it has now.

Titles lose the characters a wikilink cannot hold (``[``, ``]``, ``|``, line
breaks) and are cut to ``MAX_TITLE``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from fastpad.importers.plan import NoteDraft
from fastpad.knowledge.wikilinks import MAX_TITLE, title_key

_UNLINKABLE = str.maketrans({"[": "(", "]": ")", "|": "-", "\n": " ", "\r": " "})


def linkable(title: str) -> str:
    title = " ".join(title.translate(_UNLINKABLE).split())
    if len(title) > MAX_TITLE:
        title = title[:MAX_TITLE - 1].rsplit(" ", 1)[0].rstrip() + "…"
    return title or "Untitled"


def choose_titles(
    drafts: Iterable[NoteDraft],
    kept: Mapping[str, str],
    taken_elsewhere: Callable[[list[str]], set[str]],
) -> dict[str, str]:
    """Item path -> title. ``kept``: item -> the title of its note where an earlier attempt
    created it; ``taken_elsewhere(keys)``: which title keys a note outside this import
    already answers to."""
    ordered = sorted(drafts, key=lambda d: (d.item not in kept, d.item.count("/"), d.item))
    cache: dict[str, bool] = {}

    def taken(keys: list[str]) -> None:
        fresh = [k for k in dict.fromkeys(keys) if k not in cache]
        if fresh:
            elsewhere = taken_elsewhere(fresh)
            cache.update({k: k in elsewhere for k in fresh})

    taken([title_key(c) for d in ordered if d.item not in kept for c in _candidates(d, 2)])
    shared = _shared_titles(d for d in ordered if d.item not in kept)
    used: set[str] = set()
    titles: dict[str, str] = {}
    for draft in ordered:
        if draft.item in kept:
            titles[draft.item] = kept[draft.item]
            used.add(title_key(kept[draft.item]))
            continue
        for candidate in _candidates(draft, None):
            if draft.item in shared and candidate == linkable(draft.title):
                continue
            key = title_key(candidate)
            if key in used:
                continue
            taken([key])
            if cache[key]:
                continue
            used.add(key)
            titles[draft.item] = candidate
            break
    return titles


def _shared_titles(drafts: Iterable[NoteDraft]) -> set[str]:
    """Items whose title another item of the archive has too, and which are not the one nearest
    the root (two at the same depth: neither keeps the plain title)."""
    groups: dict[str, list[NoteDraft]] = {}
    for draft in drafts:
        groups.setdefault(title_key(linkable(draft.title)), []).append(draft)
    shared: set[str] = set()
    for group in groups.values():
        if len(group) < 2:
            continue
        depths = sorted(d.item.count("/") for d in group)
        keeper = depths[0] < depths[1]
        shared.update(d.item for d in group if not (keeper and d.item.count("/") == depths[0]))
    return shared


def _candidates(draft: NoteDraft, limit: int | None) -> Iterable[str]:
    """The plain title, then with its place, then numbered (``limit``: only that many)."""
    title = linkable(draft.title)
    out = [title]
    context = linkable(draft.context) if draft.context.strip() else ""
    if context and title_key(context) != title_key(title):
        out.append(_fit(title, f" ({context})"))
    yield from out[:limit] if limit is not None else out
    if limit is not None:
        return
    n = 2
    while True:
        yield _fit(title, f" ({context} {n})" if context else f" ({n})")
        n += 1


def _fit(title: str, suffix: str) -> str:
    return title[:MAX_TITLE - len(suffix)].rstrip() + suffix

