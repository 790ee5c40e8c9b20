"""Collections embedded in mirrored files (a ``fastpad-collection`` block: the view's id).

``fp pull`` writes each such block with the view's definition and its link under the id,
as ``#`` lines — what the view asks and where it opens, never its rows, which are a question
asked now and would be a stale copy in a file. ``fp push`` reads only the id back: the lines
under it are description, dropped before the diff, so they are never sent and an edit to them
changes nothing (a view is changed in the app, or over ``/v1/collections``). A push's rewrite
of the file keeps the lines the file had.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from fastpad.knowledge.saved_views import definition, embedded_id
from fastpad.notes import Block, parse_markdown, serialize_markdown


def _embedded(block: Block) -> str | None:
    return embedded_id({"type": block.type, "attrs": block.attrs, "text": block.text})


def has_embeds(markdown: str) -> bool:
    return "```fastpad-collection" in markdown and any(_embedded(b) for b in parse_markdown(markdown).blocks)


def view_lines(views: Mapping[str, Mapping[str, Any]], base_url: str) -> Callable[[str], list[str]]:
    """The description of the view ``id``, from ``GET /v1/collections``'s items by id."""
    def lines(collection_id: str) -> list[str]:
        view = views.get(collection_id)
        if view is None:
            return ["# this view no longer exists (or this credential cannot see it)"]
        shown = definition(view)
        return [f"# {shown['name']}: a {shown['layout']} of #{shown['query'].get('type')}",
                f"# query: {json.dumps(shown['query'], sort_keys=True, ensure_ascii=False)}",
                *([f"# layout_options: {json.dumps(shown['layout_options'], sort_keys=True)}"]
                  if shown["layout_options"] else []),
                f"# open: {base_url.rstrip('/')}{shown['link']}",
                "# (fp push reads only the id above; change the view in the app)"]
    return lines


def describe(markdown: str, lines_for: Callable[[str], list[str] | None]) -> str:
    """``markdown`` with each embed block's description lines under its id (none: left as it is)."""
    if "```fastpad-collection" not in markdown:
        return markdown
    parsed = parse_markdown(markdown)
    blocks, described = [], False
    for block in parsed.blocks:
        collection_id = _embedded(block)
        lines = lines_for(collection_id) if collection_id else None
        described = described or bool(lines)
        blocks.append(replace(block, text="\n".join([collection_id, *lines])) if lines else block)
    return serialize_markdown(parsed.meta, blocks) if described else markdown


def descriptions_in(markdown: str) -> dict[str, list[str]]:
    """The description lines a file holds under each embedded view's id."""
    found = {}
    for block in parse_markdown(markdown).blocks:
        collection_id = _embedded(block)
        if collection_id:
            found[collection_id] = block.text.strip().split("\n")[1:]
    return found


def undescribed(blocks: list[Block]) -> list[Block]:
    """The blocks as the server holds them: an embed is its id alone."""
    return [replace(b, text=collection_id) if (collection_id := _embedded(b)) else b for b in blocks]
