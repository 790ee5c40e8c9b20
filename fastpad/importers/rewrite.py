"""Links in imported block text, rewritten so the write path makes the right edges.

The write path turns ``[[Title]]`` in block text into an edge to the note with
that title (``knowledge/link_projection.py``), resolving forward links when
the target lands later. An archive names its targets by path instead —
``[[folder/Note#Heading|shown]]``, ``![[image.png]]``, Notion's
``[Page](Page%20abc….md)`` — so each link is resolved here (``resolve.py``)
and rewritten into the form the write path reads:

- to a note: ``[[Its title|what the text showed]]`` (a heading or block
  subpath stays in the shown text; a table row keeps only ``[[Its title]]``,
  because ``\\|`` cannot separate a title there);
- an embed of a note, ``![[Note]]`` or ``![[Note#Heading]]``, the same with its
  ``!`` kept: the write path makes it an ``embeds`` edge (an embed of an image
  or a PDF is the attachment's Markdown image or link, as below);
- to a stored attachment: a Markdown link or image to its URL;
- to a file that exists but was not imported (settings, a view), or to more
  than one candidate: the wikilink is escaped (``\\[[…]]``) so no edge guesses;
- to nothing: a wikilink stays a forward link (``[[Missing]]``), which
  resolves if such a note is ever written. Markdown links to nothing, or to
  a file, are left as they were: they never make edges.

Every link that could not be made is reported once per distinct target.
Code blocks and inline code spans are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from urllib.parse import unquote

from fastpad.importers.ledger import AMBIGUOUS_WIKILINK, UNRESOLVED_WIKILINK, LinkProblem
from fastpad.importers.resolve import PathIndex, Resolution
from fastpad.notes.blocks import CODE, TABLE_ROW

NOTE, ATTACHMENT, FILE = "note", "attachment", "file"

_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_LINK = re.compile(
    r"(?<!\\)(?P<wbang>!?)\[\[(?P<wbody>[^\[\]\n]+?)\]\]"
    r"|(?<!\\)(?P<mbang>!?)\[(?P<mtext>(?:[^\[\]]|\[[^\[\]]*\])*)\]"
    r"\((?P<mdest><[^<>\n]*>|(?:[^()\s]|\([^()\s]*\))+)(?P<mtitle>\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\)"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_ALIAS_SPLIT = re.compile(r"\\?\|")


@dataclass(frozen=True)
class LinkTarget:
    kind: str  # note | attachment | file
    title: str = ""  # a note's title
    url: str = ""  # an attachment's URL
    name: str = ""  # an attachment's file name


MissingReason = Callable[[str, str], LinkProblem]  # (linking item, target as written) -> the problem


def unresolved(source: str, target: str) -> LinkProblem:
    return LinkProblem(target, UNRESOLVED_WIKILINK, "no item in the archive has this name or path")


class LinkRewriter:
    def __init__(self, index: PathIndex, targets: Mapping[str, LinkTarget], *,
                 missing: MissingReason = unresolved) -> None:
        self.index = index
        self.targets = targets
        self.missing = missing

    def rewrite(self, source: str, own_title: str, block_type: str, text: str,
                problems: dict[str, LinkProblem]) -> str:
        """``text`` with its links rewritten; each link that could not be made is added to
        ``problems`` (keyed by target, so a note reports each target once)."""
        if block_type == CODE or ("[" not in text):
            return text
        scan = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text) if "`" in text else text
        out, last = [], 0
        for match in _LINK.finditer(scan):
            start, end = match.span()
            original = text[start:end]
            if match.group("wbody") is not None:
                replacement = self._wikilink(match, source, own_title, block_type, original, problems)
            else:
                replacement = self._markdown_link(match, text, source, block_type, original, problems)
            out += [text[last:start], replacement]
            last = end
        out.append(text[last:])
        return "".join(out)

    # ------------------------------------------------------------------ [[wikilinks]]

    def _wikilink(self, match: re.Match[str], source: str, own_title: str, block_type: str, original: str,
                  problems: dict[str, LinkProblem]) -> str:
        bang = match.group("wbang")
        parts = _ALIAS_SPLIT.split(match.group("wbody"), maxsplit=1)
        written, alias = parts[0].strip(), (parts[1].strip() if len(parts) > 1 else "")
        path, _, subpath = written.partition("#")
        path = path.strip()
        if not path:  # [[#Heading]]: a place in this note ([[|alias]] names nothing: left alone)
            if not subpath.strip() or not own_title:
                return original
            return f"{bang}[[{_link_title(own_title, alias or written, block_type)}]]"
        found = self.index.resolve(source, path)
        target = self.targets.get(found.path or "")
        if target is not None and target.kind == NOTE:
            shown = alias or (written if written != target.title else "")
            return f"{bang}[[{_link_title(target.title, shown, block_type)}]]"
        if target is not None and target.kind == ATTACHMENT:
            shown = target.name if bang or not alias else alias
            return f"{bang}[{_shown(shown)}]({target.url})"
        escaped = f"{bang}\\{original[len(bang):]}"
        if found.path is not None:  # a file that exists but is not a note (a view, settings, a skipped item)
            return escaped
        if found.ambiguous:
            _report(problems, _ambiguous(path, found))
            return escaped
        problem = self.missing(source, path)
        _report(problems, replace(problem, detail=f"an embed: {problem.detail}") if bang else problem)
        if _has_file_suffix(path):
            return escaped  # a missing attachment is not a note to link to later
        if not subpath and not alias:
            return original
        return f"{bang}[[{_link_title(path, alias or written, block_type)}]]"

    # ------------------------------------------------------------------ [text](links)

    def _markdown_link(self, match: re.Match[str], text: str, source: str, block_type: str, original: str,
                       problems: dict[str, LinkProblem]) -> str:
        dest = match.group("mdest")
        if dest.startswith("<"):
            dest = dest[1:-1]
        if not dest or dest.startswith(("#", "//")) or _SCHEME.match(dest):
            return original
        written = unquote(dest.split("#", 1)[0].split("?", 1)[0])
        if not written.strip():
            return original
        found = self.index.resolve(source, written, relative_first=True)
        target = self.targets.get(found.path or "")
        bang = match.group("mbang")
        label_start, label_end = match.span("mtext")
        label = text[label_start:label_end]
        if target is not None and target.kind == NOTE:
            shown = label if label.strip() and label.strip() != target.title else ""
            return f"{bang}[[{_link_title(target.title, _shown(shown), block_type)}]]"
        if target is not None and target.kind == ATTACHMENT:
            return f"{bang}[{label}]({target.url})"
        if found.path is None:
            _report(problems, _ambiguous(written, found) if found.ambiguous else self.missing(source, written))
        return original


def _link_title(title: str, shown: str, block_type: str) -> str:
    """What goes between ``[[`` and ``]]``: the title, and what to show when it differs."""
    if not shown or shown == title or block_type == TABLE_ROW:
        return title
    return f"{title}|{shown}"


def _shown(text: str) -> str:
    """Link text as a wikilink or Markdown label can hold it: one line, no brackets."""
    return " ".join(text.replace("[", "").replace("]", "").split())


def _has_file_suffix(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[-1].lower() in {
        "png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "pdf", "mp3", "mp4", "webm", "wav", "ogg", "mov",
        "csv", "base", "canvas", "zip", "html", "json", "txt",
    }


def _ambiguous(target: str, found: Resolution) -> LinkProblem:
    shown = ", ".join(found.candidates[:5]) + (f" and {len(found.candidates) - 5} more"
                                               if len(found.candidates) > 5 else "")
    return LinkProblem(target, AMBIGUOUS_WIKILINK, f"{len(found.candidates)} items match: {shown}")


def _report(problems: dict[str, LinkProblem], problem: LinkProblem) -> None:
    problems.setdefault(problem.target.casefold(), problem)
