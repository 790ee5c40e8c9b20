"""What an attack tried and what came back, judged against what the server must answer."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Expect:
    """What the server must answer: a status and, for a refusal, its problem type. ``item`` is
    the problem type every item of a bulk answer (200) must carry."""

    status: int
    slug: str | None = None
    item: str | None = None

    def __str__(self) -> str:
        return " ".join(str(part) for part in (self.status, self.slug, self.item and f"items {self.item}") if part)


ANSWERS = None  # any answer that is not a server fault, as long as nothing withheld is in it
OUT_OF_SCOPE = Expect(403, "out-of-scope")
NOT_FOUND = Expect(404, "not-found")
POLICY_DENIED = Expect(403, "policy-denied")
APPROVE_NOT_PERMITTED = Expect(403, "approve-not-permitted")
UNAUTHENTICATED = Expect(401, "unauthenticated")
VALIDATION_FAILED = Expect(422, "validation-failed")
HANDLE_EXPIRED = Expect(422, "handle-expired")
STALE_FRONTIER = Expect(409, "stale-frontier")


@dataclass
class Attempt:
    surface: str  # "GET /v1/notes/{note_id}" or "fastpad_fetch"
    sent: str  # the path, or the arguments that matter
    status: int  # HTTP status; an MCP tool's refusal carries its problem's
    slug: str | None  # the problem type of a refusal
    item_slugs: list[str]  # the problem types inside a bulk answer's items
    leaked: list[str]  # what of the withheld material came back
    expected: Expect | None

    @property
    def refused(self) -> bool:
        return self.status >= 400 or bool(self.item_slugs)

    def fault(self) -> str | None:
        """Why this attempt fails the suite, or None."""
        where = f"{self.surface} ({self.sent})"
        if self.leaked:
            return f"{where} gave out {', '.join(self.leaked)}"
        want = self.expected
        if want is None:
            return f"{where} answered {self.status} {self.slug or ''}" if self.status >= 500 else None
        if (self.status, self.slug) != (want.status, want.slug):
            return f"{where} answered {self.status} {self.slug or ''}, not {want}"
        if want.item is not None and set(self.item_slugs) != {want.item}:
            return f"{where} answered items {sorted(set(self.item_slugs))}, not {want.item}"
        return None


@dataclass
class Tally:
    """One category's attempts on one backend."""

    category: str
    backend: str
    attempts: list[Attempt] = field(default_factory=list)
    checked: set[str] = field(default_factory=set)  # the kinds of withheld material answers were searched for

    def faults(self) -> list[str]:
        return [fault for attempt in self.attempts if (fault := attempt.fault())]

    def figures(self) -> dict[str, Any]:
        # One kind per sort of material ("an id out of reach: the turn" counts as "an id out of reach").
        leaks = Counter({kind.split(":")[0]: 0 for kind in self.checked})
        leaks.update(name.split(":")[0] for attempt in self.attempts for name in attempt.leaked)
        return {"attempts": len(self.attempts), "refused": sum(a.refused for a in self.attempts),
                "answered_without_it": sum(not a.refused and not a.leaked for a in self.attempts),
                "leaks": sum(leaks.values()), "leaks_by_kind": dict(sorted(leaks.items())),
                "faults": len(self.faults()),
                "surfaces": len({a.surface for a in self.attempts}),
                "statuses": {str(s): n for s, n in sorted(Counter(a.status for a in self.attempts).items())}}

    def summary(self) -> str:
        f = self.figures()
        return (f"{self.backend:8} {self.category:56} {f['attempts']:4} tried  {f['refused']:4} refused  "
                f"{f['answered_without_it']:4} answered without it  {f['leaks']} leaks  {f['faults']} faults")

    def add(self, surface: str, sent: str, status: int, slug: str | None, item_slugs: list[str], text: str,
            withheld: dict[str, str], expected: Expect | None) -> None:
        self.checked.update(withheld)
        self.attempts.append(Attempt(surface, sent, status, slug, item_slugs,
                                     [name for name, planted in withheld.items() if planted in text], expected))

    def add_http(self, surface: str, sent: str, status: int, body: str, withheld: dict[str, str],
                 expected: Expect | None) -> None:
        """An HTTP answer: a refusal's problem type, or the problem types of a bulk answer's items."""
        document = _json(body)
        slug = problem_slug(document) if status >= 400 and isinstance(document, dict) else None
        items = [] if status >= 400 else [s for s in map(problem_slug, _problems_inside(document)) if s]
        self.add(surface, sent, status, slug, items, body, withheld, expected)


def _json(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def problem_slug(problem: dict[str, Any]) -> str | None:
    """``out-of-scope`` from a problem document's type, a URL or (inside bulk items) the bare slug."""
    kind = problem.get("type")
    return kind.rsplit("/", 1)[-1] if isinstance(kind, str) else None


def _problems_inside(value: Any) -> list[dict[str, Any]]:
    """The problem documents nested in a bulk answer's items (``error`` / ``problem`` members)."""
    if isinstance(value, dict):
        found = [value[key] for key in ("error", "problem") if isinstance(value.get(key), dict)]
        return found + [p for child in value.values() for p in _problems_inside(child)]
    if isinstance(value, list):
        return [p for child in value for p in _problems_inside(child)]
    return []
