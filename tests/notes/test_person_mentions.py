"""A person mention, ``[@Name](/people/{id})``: what fastpad/notes/mentions.py reads, and that
web/src/model/mentions.js reads and writes exactly the same (the editor makes the mentions the
server notifies about); and that the canonical Markdown carries one through unchanged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fastpad.notes import Block, NoteMeta, parse_markdown, serialize_markdown
from fastpad.notes.mentions import mentions_as_text, person_mention, person_mentions
from tests import node

WEB_MODEL = Path(__file__).resolve().parents[2] / "web" / "src" / "model" / "mentions.js"
ADA, BEA = "01JABCDEFGHJKMNPQRSTVWXYZ0", "01JZZZZZZZZZZZZZZZZZZZZZZ1"

CASES = [
    ("paragraph", f"hi [@Ada Lovelace](/people/{ADA}) and [@Bea](/people/{BEA})."),
    ("paragraph", f"twice [@Ada](/people/{ADA}) [@Ada again](/people/{ADA})"),
    ("paragraph", f"in code `[@Ada](/people/{ADA})` and out [@Ada](/people/{ADA})"),
    ("code", f"[@Ada](/people/{ADA})"),
    ("paragraph", f"escaped \\[@Ada](/people/{ADA})"),
    ("paragraph", "[@Ada](/people/not-an-id) and [@](/people/" + ADA + ")"),
    ("list_item", f"[@Zoë 🌱](/people/{ADA})"),
    ("paragraph", "no mention at all"),
]
NAMES = ["Ada Lovelace", "  spaced \n out  ", "with [brackets]", "", "x" * 200]


def python_answers() -> dict:
    return {
        "read": [[{"personId": m.person_id, "name": m.name, "start": m.start, "end": m.end}
                  for m in person_mentions(kind, text)] for kind, text in CASES],
        "write": [person_mention(ADA, name) for name in NAMES],
        "text": [mentions_as_text(kind, text) for kind, text in CASES],
    }


def test_what_a_mention_is() -> None:
    read = python_answers()["read"]
    assert [[m["personId"] for m in found] for found in read] == [[ADA, BEA], [ADA, ADA], [ADA], [], [], [], [ADA], []]
    assert person_mention(ADA, "with [brackets]") == f"[@with brackets](/people/{ADA})"
    assert person_mention(ADA, "") == f"[@{ADA}](/people/{ADA})"
    assert python_answers()["text"][0] == "hi @Ada Lovelace and @Bea."
    assert python_answers()["text"][2] == f"in code `[@Ada](/people/{ADA})` and out @Ada"


def test_the_browser_model_reads_and_writes_mentions_as_the_engine_does() -> None:
    node.require("the web model's mentions")
    script = (f"import {{ mentionsAsText, personMention, personMentions }} from {json.dumps(WEB_MODEL.as_uri())};"
              f"const cases = {json.dumps(CASES)}; const names = {json.dumps(NAMES)};"
              "console.log(JSON.stringify({read: cases.map(([k, t]) => personMentions(k, t)),"
              " text: cases.map(([k, t]) => mentionsAsText(k, t)),"
              f" write: names.map((n) => personMention({json.dumps(ADA)}, n))}}));")
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True,
                         timeout=60)
    js = json.loads(out.stdout)
    python = python_answers()
    # Offsets agree where the text has no character outside the BMP (JS counts UTF-16 units).
    assert js["write"] == python["write"] and js["text"] == python["text"]
    for (kind, text), mine, theirs in zip(CASES, python["read"], js["read"]):
        if all(ord(c) < 0x10000 for c in text):
            assert theirs == mine, text
        else:
            assert [m["personId"] for m in theirs] == [m["personId"] for m in mine]


@pytest.mark.parametrize("block_type", ["paragraph", "list_item", "quote", "heading"])
def test_canonical_markdown_carries_a_mention_unchanged(block_type: str) -> None:
    text = f"ask {person_mention(ADA, 'Ada Lovelace')} today"
    attrs = {"level": 2} if block_type == "heading" else {}
    block = Block(ADA, block_type, text, attrs)
    markdown = serialize_markdown(NoteMeta("Note", (), {}), [block])
    blocks = parse_markdown(markdown).blocks
    assert [b.text for b in blocks] == [text] and person_mentions(block_type, blocks[0].text)[0].person_id == ADA
