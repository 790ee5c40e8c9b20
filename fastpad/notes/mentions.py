"""A person mention in block text: ``[@Display Name](/people/{person id})``.

Pure functions, no storage; web/src/model/mentions.js is the same, one to one.

The form is an ordinary CommonMark link, so every Markdown reader shows "@Display Name"
(a relative link, which outbound link neutralisation leaves alone), the canonical
serializer and parser carry it as block text unchanged, and ``fp pull``/``fp push`` and
the export round-trip it with nothing new to learn. The person is the id; the name is
what it read when the mention was made (like a link's shown text, it is not rewritten
when they rename themselves). Who is a member is the write path's business
(``fastpad/knowledge/mentions.py``): a mention of anyone else is text.

Not a mention: anything inside a code block or an inline code span, and an escaped
``\\[@…](…)``. A note link's ``@Name`` reading (``fastpad/knowledge/wikilinks.py``) skips
these spans: ``[@Ada](/people/…)`` names a person, never a note titled "Ada".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastpad.notes.blocks import CODE
from fastpad.notes.ids import ULID_PATTERN

MAX_SHOWN_NAME = 120  # characters of the name a mention shows

PERSON_MENTION = re.compile(rf"(?<!\\)\[@([^\[\]\n]{{1,{MAX_SHOWN_NAME}}})\]\(/people/({ULID_PATTERN})\)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)


@dataclass(frozen=True)
class PersonMention:
    person_id: str
    name: str  # as the mention shows it
    start: int  # where it is written in the block's text
    end: int


def person_mention(person_id: str, name: str) -> str:
    """The text that mentions ``person_id``, showing ``name`` (brackets and line breaks, which
    would end the link early, become spaces; a blank name shows the id)."""
    shown = " ".join(re.sub(r"[\[\]]", " ", name).split())[:MAX_SHOWN_NAME].strip() or person_id
    return f"[@{shown}](/people/{person_id})"


def person_mentions(block_type: str, text: str) -> list[PersonMention]:
    """The person mentions written in a block, in order (a person mentioned twice is listed twice)."""
    if block_type == CODE or "](/people/" not in text:
        return []
    scan = without_code_spans(text)
    return [PersonMention(m.group(2), m.group(1), m.start(), m.end()) for m in PERSON_MENTION.finditer(scan)]


def mentions_as_text(block_type: str, text: str) -> str:
    """``text`` with each person mention written as ``@Name`` alone: how a reader outside the
    workspace (a published page) or a list of excerpts shows it — no person id, no link to nowhere."""
    shown, at = [], 0
    for mention in person_mentions(block_type, text):
        shown += [text[at:mention.start], "@" + mention.name]
        at = mention.end
    return "".join(shown) + text[at:]


def without_code_spans(text: str) -> str:
    """``text`` with each inline code span blanked out, same length, so offsets still point into it."""
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text) if "`" in text else text
