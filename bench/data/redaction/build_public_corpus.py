"""Build the public redaction corpus: public_secrets.jsonl and public_lookalikes.jsonl beside this file.

The strings come from two public secret scanners' own test data, copied into
public_sources.jsonl (one record a line: ``role`` secret or lookalike, ``kind``,
``source``, ``snippet`` and, for a secret, the exact ``secret`` the masks must
cover; strings stored in 16-character parts, so that scanners and push
protection do not take this file for leaked keys):

- gitleaks (https://github.com/gitleaks/gitleaks, MIT licence): the true and
  false positives its rules are validated against, cmd/generate/config/rules/*.go
  (``tps`` / ``fps``). Where a true positive is generated there
  (``secrets.NewSecret(REGEX)``), the snippet says ``{gen:REGEX}`` and this
  script draws a value from the same regular expression with a fixed seed.
- detect-secrets (https://github.com/Yelp/detect-secrets, Apache-2.0 licence):
  the payloads of its plugin tests, tests/plugins/*_test.py.

The rules in fastpad/outbound were not written against these strings. What
was decided in copying them (each says why in its ``why``): test values that
are plainly placeholders (detect-secrets' ``AKIAZZZZZZZZZZZZZZZZ``,
``https://username:password@yelp.com``, ``SKxxxx…``, ``AP6xxxxxxxxxx``) and
jwt.io's published sample are look-alikes, as the issue counts placeholders and
documented examples; false positives that are a real key with one character
changed (a checksum or marker only the vendor can check) and gitleaks' list of
Firebase SDK example keys are left out, since no reader could tell them from a
key; a public OAuth ``client_id`` and a Stripe publishable key are public
identifiers (look-alikes). Basic-auth URLs are gitleaks' curl ``-u`` true
positives written as URL userinfo.

Each string is set in a sentence of a note, the templates taking turns: prose,
a config line, a fenced code block, a list item, YAML frontmatter. Every third
single-line secret is also written the ways Markdown and HTML spell it (an
escaped underscore, emphasis or inline code inside the token, an HTML character
reference, a link-text split, a zero-width character), each in its own record.

Run it again only to change the corpus: ``.venv/bin/python bench/data/redaction/build_public_corpus.py``.
"""

from __future__ import annotations

import json
import random
import re
import string
import warnings
from pathlib import Path

with warnings.catch_warnings():      # deprecated names of the stdlib's own regex parser, which still ships
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_constants
    import sre_parse

HERE = Path(__file__).resolve().parent
rng = random.Random(29_2026)
_GEN = re.compile(r"\{gen:((?:[^{}]|\{\d+(?:,\d*)?\})+)\}")

TEMPLATES = {
    "prose": "Notes from the incident call: {s} - rotate it after the demo, Sam has the new one.",
    "config": "Staging config as it stood on Friday:\n\n{s}\n\nEverything else is unchanged.",
    "code": "To reproduce, run:\n\n```\n{s}\n```\n\nIt fails after the second retry.",
    "list": "Open items:\n\n- {s}\n- ask Priya to check the dashboard",
    "frontmatter": "---\ntitle: Staging access\ntags: [ops, staging]\nsnippet: |\n  {s}\n---\nSee the runbook for the rest.",
}
MARKDOWN_SPELLINGS = ("escaped-underscore", "emphasis-inside", "inline-code-split", "html-reference",
                      "link-text-split", "zero-width")


def generate(pattern: str) -> str:
    """A string the regular expression matches: each class and repeat drawn at random (bounded)."""
    def walk(items) -> str:
        out = []
        for op, arg in items:
            if op is sre_constants.LITERAL:
                out.append(chr(arg))
            elif op is sre_constants.IN:
                chars = []
                for kind, value in arg:
                    if kind is sre_constants.LITERAL:
                        chars.append(chr(value))
                    elif kind is sre_constants.RANGE:
                        chars.extend(chr(c) for c in range(value[0], value[1] + 1))
                    elif kind is sre_constants.CATEGORY:
                        chars.extend(string.ascii_letters + string.digits + "_")
                out.append(rng.choice(chars))
            elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
                low, high, body = arg
                high = low + 10 if high is sre_constants.MAXREPEAT else high
                out.extend(walk(body) for _ in range(rng.randint(low, high)))
            elif op is sre_constants.SUBPATTERN:
                out.append(walk(arg[-1]))
            elif op is sre_constants.BRANCH:
                out.append(walk(rng.choice(arg[1])))
            else:
                raise ValueError(f"unsupported construct {op} in {pattern}")
        return "".join(out)
    return walk(sre_parse.parse(pattern))


def _expand(snippet: str, secret: str) -> tuple[str, str]:
    generated = []

    def draw(m: re.Match[str]) -> str:
        generated.append(generate(m.group(1)))
        return generated[-1]

    snippet = _GEN.sub(draw, snippet)
    return snippet, secret.replace("{gen}", generated[0]) if generated else secret


def _place(template: str, snippet: str) -> tuple[str, int]:
    """The note text and where the snippet starts in it (a frontmatter block indents continuation lines)."""
    if template == "frontmatter":
        snippet = snippet.replace("\n", "\n  ")
    text = TEMPLATES[template]
    at = text.index("{s}")
    return text[:at] + snippet + text[at + 3:], at


def _spell(secret: str, spelling: str) -> str:
    """``secret`` as a Markdown/HTML source spells it so that it renders as the secret."""
    k = len(secret) // 2
    if spelling == "escaped-underscore":
        mark = next((c for c in "_-.~+/" if c in secret), "")
        if mark:
            return secret.replace(mark, "\\" + mark)
        spelling = "html-reference"       # nothing to escape in this one: spell a character as HTML does
    if spelling == "emphasis-inside":
        return secret[:k] + "**" + secret[k:k + 4] + "**" + secret[k + 4:]
    if spelling == "inline-code-split":
        return secret[:k] + "`" + secret[k:k + 4] + "`" + secret[k + 4:]
    if spelling == "html-reference":
        return secret[:k] + f"&#{ord(secret[k])};" + secret[k + 1:]
    if spelling == "link-text-split":
        return "[" + secret[:k] + "](https://wiki.internal/keys)" + secret[k:]
    return secret[:k] + "\u200b" + secret[k:]


def _parts(value: str, size: int = 16) -> list[str]:
    return [value[i:i + size] for i in range(0, len(value), size)] or [""]


def build() -> tuple[list[dict], list[dict]]:
    sources = [json.loads(line) for line in (HERE / "public_sources.jsonl").read_text().splitlines() if line]
    secrets, lookalikes = [], []
    templates = list(TEMPLATES)
    spelled = 0
    for index, record in enumerate(sources):
        template = templates[index % len(templates)]
        snippet = "".join(record["snippet"])
        if record["role"] == "lookalike":
            text, _ = _place(template, snippet)
            lookalikes.append({"kind": record["kind"], "variant": template, "source": record["source"],
                               "context": _parts(text), "value": [""]})
            continue
        snippet, secret = _expand(snippet, "".join(record["secret"]))
        text, at = _place(template, snippet)
        start = text.index(secret.replace("\n", "\n  ") if template == "frontmatter" else secret, at)
        shown = text[start:start + len(secret.replace("\n", "\n  ") if template == "frontmatter" else secret)]
        secrets.append({"kind": record["kind"], "variant": template, "source": record["source"],
                        "context": _parts(text[:start] + "{value}" + text[start + len(shown):]), "value": _parts(shown)})
        if "\n" in secret or "\n" in snippet or (index % 3):
            continue
        spelling = MARKDOWN_SPELLINGS[spelled % len(MARKDOWN_SPELLINGS)]
        spelled += 1
        prose, prose_at = _place("prose", snippet)
        start = prose.index(secret, prose_at)
        secrets.append({"kind": record["kind"], "variant": spelling, "source": record["source"],
                        "context": _parts(prose[:start] + "{value}" + prose[start + len(secret):]),
                        "value": _parts(_spell(secret, spelling))})
    return secrets, lookalikes


def _write(name: str, records: list[dict]) -> None:
    with open(HERE / name, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    built_secrets, built_lookalikes = build()
    _write("public_secrets.jsonl", built_secrets)
    _write("public_lookalikes.jsonl", built_lookalikes)
    print(f"{len(built_secrets)} secrets of {len({r['kind'] for r in built_secrets})} kinds, "
          f"{len(built_lookalikes)} look-alikes")
