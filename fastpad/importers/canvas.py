"""A JSON Canvas (Obsidian's ``.canvas``) as the Markdown of a note describing it.

Cards are read top to bottom, left to right: text cards keep their Markdown,
file cards become links (images embedded), link cards their URL, groups their
label; every connection is one list item, "from → to (label)". Links are then
resolved like any other note's, relative to the canvas's folder.
"""

from __future__ import annotations

import json
from typing import Any

_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp")
_NAME_CHARS = 60


class NotACanvas(ValueError):
    """The file is not JSON Canvas."""


def canvas_markdown(text: str) -> str:
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise NotACanvas(f"not JSON Canvas: {exc}") from None
    nodes, edges = (data.get("nodes") or [], data.get("edges") or []) if isinstance(data, dict) else (None, None)
    if not isinstance(nodes, list) or not isinstance(edges, list) or not all(isinstance(n, dict) for n in nodes):
        raise NotACanvas("not JSON Canvas: expected an object with lists of nodes and edges")
    nodes = sorted(nodes, key=lambda n: (_number(n.get("y")), _number(n.get("x"))))
    by_kind: dict[str, list[dict[str, Any]]] = {"text": [], "file": [], "link": [], "group": []}
    for node in nodes:
        by_kind.setdefault(str(node.get("type")), []).append(node)
    names = {str(n.get("id")): _name(n) for n in nodes}
    connections = [e for e in edges if isinstance(e, dict)]

    counts = [f"{len(by_kind['text'])} text card{'s' if len(by_kind['text']) != 1 else ''}",
              f"{len(by_kind['file'])} file{'s' if len(by_kind['file']) != 1 else ''}",
              f"{len(by_kind['link'])} link{'s' if len(by_kind['link']) != 1 else ''}",
              f"{len(by_kind['group'])} group{'s' if len(by_kind['group']) != 1 else ''}",
              f"{len(connections)} connection{'s' if len(connections) != 1 else ''}"]
    parts = [f"A canvas of {', '.join(counts[:-1])} and {counts[-1]}."]
    if by_kind["text"]:
        parts.append("## Cards")
        parts += [str(n.get("text") or "").strip() for n in by_kind["text"] if str(n.get("text") or "").strip()]
    if by_kind["file"]:
        parts.append("## Files")
        parts.append("\n".join(f"- {_file_link(n)}" for n in by_kind["file"]))
    if by_kind["link"]:
        parts.append("## Links")
        parts.append("\n".join(f"- <{n.get('url')}>" for n in by_kind["link"] if n.get("url")))
    if by_kind["group"]:
        parts.append("## Groups")
        parts.append("\n".join(f"- {names[str(n.get('id'))]}" for n in by_kind["group"]))
    if connections:
        parts.append("## Connections")
        parts.append("\n".join(_connection(e, names) for e in connections))
    return "\n\n".join(p for p in parts if p) + "\n"


def _file_link(node: dict[str, Any]) -> str:
    path = str(node.get("file") or "")
    subpath = str(node.get("subpath") or "")
    if path.lower().endswith(_IMAGE_SUFFIXES):
        return f"![[{path}]]"
    stem = path.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.lower().endswith(".md") else stem
    return f"[[{path}{subpath}|{stem}{subpath}]]"


def _connection(edge: dict[str, Any], names: dict[str, str]) -> str:
    start = names.get(str(edge.get("fromNode")), "?")
    end = names.get(str(edge.get("toNode")), "?")
    label = str(edge.get("label") or "").strip()
    return f"- {start} → {end}" + (f" ({label})" if label else "")


def _name(node: dict[str, Any]) -> str:
    kind = node.get("type")
    if kind == "text":
        line = next((ln.strip("# ").strip() for ln in str(node.get("text") or "").splitlines() if ln.strip()), "")
        name = line or "empty card"
    elif kind == "file":
        name = str(node.get("file") or "").rsplit("/", 1)[-1] or "file"
    elif kind == "link":
        name = str(node.get("url") or "link")
    else:
        name = str(node.get("label") or "group")
    return name if len(name) <= _NAME_CHARS else name[:_NAME_CHARS - 1] + "…"


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
