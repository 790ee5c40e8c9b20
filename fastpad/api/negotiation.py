"""Content negotiation: pick the representation an ``Accept`` header prefers."""

from __future__ import annotations

from fastpad.api.problems import NotAcceptable


def choose(accept: str | None, offered: list[str]) -> str:
    """The offered media type the client prefers (the first offered on a tie).

    Raises :class:`NotAcceptable` when ``Accept`` rules out every offer.
    """
    if not accept or not accept.strip():
        return offered[0]
    ranges = _parse(accept)
    best: tuple[float, int, str] | None = None
    for index, media in enumerate(offered):
        q = _quality(media, ranges)
        if q <= 0:
            continue
        key = (q, -index, media)
        if best is None or key > best:
            best = key
    if best is None:
        raise NotAcceptable(
            detail=f"This route serves {', '.join(offered)}; Accept allows none of them.",
            extra={"available": offered},
        )
    return best[2]


def _parse(accept: str) -> list[tuple[str, str, float]]:
    out: list[tuple[str, str, float]] = []
    for part in accept.split(","):
        pieces = [p.strip() for p in part.split(";")]
        media = pieces[0].lower()
        if "/" not in media:
            continue
        q = 1.0
        for param in pieces[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        main, _, sub = media.partition("/")
        out.append((main, sub, q))
    return out


def _quality(media: str, ranges: list[tuple[str, str, float]]) -> float:
    """The q of the most specific range matching ``media`` (0 when none does)."""
    main, _, sub = media.partition("/")
    best_specificity, best_q = -1, 0.0
    for r_main, r_sub, q in ranges:
        if r_main == main and r_sub == sub:
            specificity = 2
        elif r_main == main and r_sub == "*":
            specificity = 1
        elif r_main == "*" and r_sub == "*":
            specificity = 0
        else:
            continue
        if specificity > best_specificity:
            best_specificity, best_q = specificity, q
    return best_q
