"""Tiny archives written for these tests: an Obsidian vault, a Notion Markdown & CSV export, a Markdown folder.

Each is a ``{path: text or bytes}`` map; ``write_tree`` lays one out as a
folder and ``zip_tree`` as a zip (under one top-level folder, as an exported
or zipped vault is). Nothing here comes from the shared corpora.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"

CANVAS = json.dumps({
    "nodes": [
        {"id": "t1", "type": "text", "text": "# Idea\n\nStart from [[Home]].", "x": 0, "y": 0, "width": 200, "height": 100},
        {"id": "f1", "type": "file", "file": "Projects/Plan.md", "x": 300, "y": 0, "width": 200, "height": 100},
        {"id": "f2", "type": "file", "file": "Gone/Missing.md", "x": 0, "y": 300, "width": 200, "height": 100},
        {"id": "l1", "type": "link", "url": "https://example.com", "x": 300, "y": 300, "width": 200, "height": 100},
        {"id": "g1", "type": "group", "label": "Cluster", "x": -50, "y": -50, "width": 700, "height": 500},
    ],
    "edges": [{"id": "e1", "fromNode": "t1", "toNode": "f1", "label": "leads to"}],
})

OBSIDIAN = {
    ".obsidian/app.json": "{}",
    "Home.md": (
        "---\naliases: [Start, Front page]\ntags: [project/alpha, to-do, 2024]\nstatus: active\n---\n"
        "# Home\n\n"
        "See [[Projects/Plan]], [[Plan#Goals|the goals]] and [[Plan#^step1]].\n\n"
        "![[diagram.png]] and [[spec.pdf|the spec]] and [[Views.base]].\n\n"
        "Broken: [[Nowhere]], [[Nowhere|again]] and ambiguous [[Meeting]].\n\n"
        "`[[Not a link]]` stays code.\n"
    ),
    "Projects/Plan.md": "# Plan\n\n## Goals\n\nShip it. ^step1\n\nBack to [[Start]] and [[../Home|home]].\n",
    "Work/Meeting.md": "Work meeting, see [[Meeting]].\n",
    "Personal/Meeting.md": "Personal meeting.\n",
    "diagram.png": PNG,
    "spec.pdf": PDF,
    "fake.png": b"this is not a png",
    "styles.css": "body {}\n",
    "Board.canvas": CANVAS,
    "Views.base": "views:\n  - type: table\n",
    "Secret.md": "-----BEGIN PGP MESSAGE-----\nhQEMA\n-----END PGP MESSAGE-----\n",
    "Vault.mdenc": "opaque",
    "Latin.md": "caf\xe9 au lait\n".encode("latin-1"),
}

NOTION_ROOT = "Export-5e0d2a71-0000-4000-8000-000000000000"
_TASKS = "Tasks 11111111111111111111111111111111"
_PEOPLE = "People 22222222222222222222222222222222"
NOTION = {
    "index.html": "<html></html>",
    "Home aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.md": (
        "# Home\n\nWelcome. See [Sub page](Home%20aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"
        "Sub%20page%20bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.md) and [the tasks](Tasks%2011111111111111111111111111111111.csv)"
        " and [a view](Home%20aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/Linked%20cccccccccccccccccccccccccccccccc.csv)"
        " and [gone](" + "Deep%20" * 50 + "Page%20dddddddddddddddddddddddddddddddd.md)"
        " and [missing](Nope%20eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee.md).\n\n"
        "![cat](Home%20aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/cat.png)\n"
    ),
    "Home aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/Sub page bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.md": "# Sub page\n\nNested.\n",
    "Home aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/cat.png": PNG,
    f"{_TASKS}.csv": "\ufeffName,Done\nWrite,Yes\nShip,No\n",
    f"{_TASKS}_all.csv": (
        "\ufeffName,Done,Points,Due,Owner,Stage,Link\n"
        f"Write,Yes,3,\"January 5, 2025\",Ada ({_PEOPLE.replace(' ', '%20')}/Ada%2033333333333333333333333333333333.md)"
        ",Doing,https://example.com/a\n"
        f"Ship,No,5,2025-02-01,Bob ({_PEOPLE.replace(' ', '%20')}/Bob%2044444444444444444444444444444444.md),Doing,\n"
        "Plan,No,1,,,Done,\n"
        "Test,No,2,,,Doing,\n"
    ),
    f"{_TASKS}/Write 55555555555555555555555555555555.md": (
        "# Write\n\nDone: Yes\nPoints: 3\n\nThe draft.\n"
    ),
    f"{_TASKS}/Ship 66666666666666666666666666666666.md": "# Ship\n\nDone: No\nPoints: 5\n\nRelease notes.\n",
    f"{_PEOPLE}_all.csv": "\ufeffName,Email\nAda,ada@example.com\nBob,bob@example.com\n",
    f"{_PEOPLE}/Ada 33333333333333333333333333333333.md": "# Ada\n\nEmail: ada@example.com\n\nWrites things.\n",
    f"{_PEOPLE}/Bob 44444444444444444444444444444444.md": "# Bob\n\nEmail: bob@example.com\n",
}

MARKDOWN = {
    "README.md": "# Read me first\n\nSee [the guide](docs/guide.md) and [[guide]].\n",
    "docs/guide.md": "---\ntitle: The guide\ntags: reference\n---\n\nSteps. Back to [home](../README.md).\n",
    "docs/plain.md": "No heading, no frontmatter.\n",
    "docs/notes.txt": "not markdown\n",
}


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root


def zip_tree(path: Path, files: dict[str, str | bytes], *, top: str = "vault") -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(f"{top}/{name}" if top else name, content)
    return path

# Note embeds (![[Note]], ![[Note#Heading]]) beside links and image embeds, in nested folders.
EMBEDS = {
    "Home.md": (
        "# Home\n\n"
        "Shown here: ![[Projects/Plan#Goals]]\n\n"
        "Again ![[Plan]], linked as [[Plan]] too, and ![[Missing note]] and ![[lost.png]].\n\n"
        "![[diagram.png]]\n"
    ),
    "Projects/Plan.md": "## Goals\n\nShip it.\n",
    "Projects/Alpha/Deep.md": "Deep in the vault.\n",
    "Projection.md": "Not under Projects/, though its name starts so.\n",
    "diagram.png": PNG,
}
