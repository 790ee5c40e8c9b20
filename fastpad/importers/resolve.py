"""Which archive item a link names, by Obsidian's rules.

A ``[[wikilink]]`` is tried as a path from the archive's root, then as a path
relative to the linking note, then by file name (a link with folders in it
matches the end of a path); a Markdown link ``[text](path)`` tries the
relative path first. ``.md`` may be left off. Matching ignores case, preferring
an exact-case match. Where several files match by name, one in the linking
note's own folder wins (as in Obsidian); otherwise the link is ambiguous. When
no file matches, the notes' frontmatter ``aliases`` count. The result is the
one path found, or the candidates of an ambiguous link, or nothing.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Resolution:
    path: str | None = None
    candidates: tuple[str, ...] = ()  # more than one: ambiguous

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


NOWHERE = Resolution()


class PathIndex:
    def __init__(self, paths: Iterable[str], aliases: Mapping[str, Iterable[str]] | None = None) -> None:
        """``paths``: every item of the archive; ``aliases``: a note's path -> its aliases."""
        self._exact: dict[str, list[str]] = defaultdict(list)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        self._aliases: dict[str, list[str]] = defaultdict(list)
        for path in dict.fromkeys(paths):
            self._exact[path.casefold()].append(path)
            self._by_name[path.rsplit("/", 1)[-1].casefold()].append(path)
        for path, names in (aliases or {}).items():
            for name in dict.fromkeys(n.casefold() for n in names if n.strip()):
                self._aliases[name.strip()].append(path)

    def resolve(self, source: str, target: str, *, relative_first: bool = False) -> Resolution:
        """The item ``target`` names when written in the item at ``source``."""
        target = target.strip()
        if not target:
            return NOWHERE
        forms = [target] if target.casefold().endswith(".md") else [target + ".md", target]
        steps = (self._relative, self._from_root, self._by_file_name) if relative_first else (
            self._from_root, self._relative, self._by_file_name)
        folder = posixpath.dirname(source)
        for step in steps:
            for form in forms:
                found = _prefer(step(folder, form), form, folder)
                if found is not NOWHERE:
                    return found
        return _prefer(self._aliases.get(target.casefold(), []), target, folder)

    def _from_root(self, folder: str, form: str) -> list[str]:
        return self._exact.get(form.lstrip("/").casefold(), [])

    def _relative(self, folder: str, form: str) -> list[str]:
        if form.startswith("/"):
            return []
        joined = posixpath.normpath(posixpath.join(folder, form)) if folder else posixpath.normpath(form)
        if joined.startswith("../") or joined == "..":
            return []
        return self._exact.get(joined.casefold(), [])

    def _by_file_name(self, folder: str, form: str) -> list[str]:
        tail = form.lstrip("/").casefold()
        if "/" not in tail:
            return self._by_name.get(tail, [])
        name = tail.rsplit("/", 1)[-1]
        return [p for p in self._by_name.get(name, []) if p.casefold().endswith("/" + tail)]


def _prefer(found: list[str], written: str, folder: str) -> Resolution:
    """One path from several matches: exact case, then the linking note's folder; else ambiguous."""
    if not found:
        return NOWHERE
    if len(found) == 1:
        return Resolution(found[0], (found[0],))
    for narrowed in ([p for p in found if p.endswith(written.lstrip("/"))],
                     [p for p in found if posixpath.dirname(p) == folder]):
        if len(narrowed) == 1:
            return Resolution(narrowed[0], (narrowed[0],))
    return Resolution(None, tuple(sorted(found)))
