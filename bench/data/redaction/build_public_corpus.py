"""Build the public redaction corpora beside this file: ``public`` and ``heldout`` (secrets and look-alikes each).

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

The ``heldout`` corpus (heldout_sources.jsonl, the same record form plus
``licence`` and, where the secret's text occurs twice in its snippet,
``occurrence``) was built afterwards to judge the rules on secrets they were
not widened against: the public corpus above is where they were tuned. Its
strings come from two other scanners' test data, never from gitleaks or
detect-secrets (one token also in gitleaks' tests was dropped), each with its
repository, commit and path:

- Nosey Parker (praetorian-inc/noseyparker, Apache-2.0): the ``examples`` and
  ``negative_examples`` of its rules,
  crates/noseyparker/data/default/builtin/rules/*.yml (34 of its ~90 rule
  files, picked for breadth before any was measured: generic passwords and
  keys, cloud, VCS, chat, databases, CI, AI vendors; one base64 PEM example
  of two not copied for its length).
- secretlint (secretlint/secretlint, MIT): the inputs of its rule snapshot
  tests, ``ng.*`` (found) and ``ok.*`` (not found), one line a record.

The role of each string was decided from the string and the test's own words,
before any rule was run on it: a literal credential value is a secret (also a
negative example its authors mark FIXME or wish matched, or one that only
misses the rule's format while a key name says what it is); a placeholder by
its form (one repeated character, x's or zeros, alphabet or digit runs,
DEADBEEF, ``<...>``, ``${...}``, ``######``, the words secret, password,
myPassword, YOURPASSWORD), a variable or interpolation, a public identifier
(an OAuth client ID, a publishable key) or text holding no credential is a
look-alike, whichever way the test filed it; a documented sample credential
(RFC 7617's Aladdin, RFC 6750's bearer token, Wikipedia's JWT, MongoDB's
manual's ``D1fficultP%40ssw0rd``, Cribl's Slack samples) is ``left-out``, as is
anything a reader could not call either way; identifiers such as bucket names,
ARNs and account IDs were not copied. Where a rule captures a user and a
password, the password is the secret; a webhook's secret is its whole URL.

Run it again only to change a corpus: ``.venv/bin/python bench/data/redaction/build_public_corpus.py``.
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


def _find(text: str, needle: str, at: int, occurrence: int) -> int:
    """Where the ``occurrence``-th (from 0) ``needle`` at or after ``at`` starts."""
    start = text.index(needle, at)
    for _ in range(occurrence):
        start = text.index(needle, start + 1)
    return start


def build(sources_name: str) -> tuple[list[dict], list[dict]]:
    sources = [json.loads(line) for line in (HERE / sources_name).read_text().splitlines() if line]
    sources = [record for record in sources if record["role"] != "left-out"]
    secrets, lookalikes = [], []
    templates = list(TEMPLATES)
    spelled = 0
    for index, record in enumerate(sources):
        template = templates[index % len(templates)]
        snippet = "".join(record["snippet"])
        provenance = {"source": record["source"]} | ({"licence": record["licence"]} if "licence" in record else {})
        if record["role"] == "lookalike":
            text, _ = _place(template, snippet)
            lookalikes.append({"kind": record["kind"], "variant": template, **provenance,
                               "context": _parts(text), "value": [""]})
            continue
        snippet, secret = _expand(snippet, "".join(record["secret"]))
        occurrence = record.get("occurrence", 0)
        text, at = _place(template, snippet)
        start = _find(text, secret.replace("\n", "\n  ") if template == "frontmatter" else secret, at, occurrence)
        shown = text[start:start + len(secret.replace("\n", "\n  ") if template == "frontmatter" else secret)]
        secrets.append({"kind": record["kind"], "variant": template, **provenance,
                        "context": _parts(text[:start] + "{value}" + text[start + len(shown):]), "value": _parts(shown)})
        if "\n" in secret or "\n" in snippet or (index % 3):
            continue
        spelling = MARKDOWN_SPELLINGS[spelled % len(MARKDOWN_SPELLINGS)]
        spelled += 1
        prose, prose_at = _place("prose", snippet)
        start = _find(prose, secret, prose_at, occurrence)
        secrets.append({"kind": record["kind"], "variant": spelling, **provenance,
                        "context": _parts(prose[:start] + "{value}" + prose[start + len(secret):]),
                        "value": _parts(_spell(secret, spelling))})
    return secrets, lookalikes


def _write(name: str, records: list[dict]) -> None:
    with open(HERE / name, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    for corpus in ("public", "heldout"):          # public first: its generated values take the seeded draws
        built_secrets, built_lookalikes = build(f"{corpus}_sources.jsonl")
        _write(f"{corpus}_secrets.jsonl", built_secrets)
        _write(f"{corpus}_lookalikes.jsonl", built_lookalikes)
        print(f"{corpus}: {len(built_secrets)} secrets of {len({r['kind'] for r in built_secrets})} kinds, "
              f"{len(built_lookalikes)} look-alikes")
