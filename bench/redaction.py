"""Redaction measured, not assumed: recall on secrets, false positives on look-alikes, throughput.

Two corpora, both in bench/data/redaction/:

- ``public`` (the acceptance figure; built by build_public_corpus.py): the
  published test strings of gitleaks (MIT) and Yelp's detect-secrets
  (Apache-2.0), which the rules were not written against, each in a sentence
  of a note (prose, config line, code block, list item, YAML frontmatter) and
  some spelled the ways Markdown and HTML render as the secret; reported per
  kind and per template/spelling.
- ``project`` (kept for comparison with earlier runs; built by
  build_corpus.py): secrets of many kinds, each in a short sentence of
context and some written through a zero-width character or inside Markdown
emphasis; and look-alikes that must stay visible — UUIDs, git SHAs, ULIDs,
base64 data URIs, placeholders, documented example keys, hex colours,
versions, file hashes, code names, prose about secrets.

- Recall: a secret is caught when the masks cover every character of its value.
- False positives: a look-alike sentence with anything masked in it.
- Throughput: ``fastpad.outbound.prepare`` (redact, then neutralise links) on
  the corpus's sentences shuffled together and repeated to ~5 MB; and
  ``redact`` alone on bench/outbound.py's generated notes, the text behind the
  README's outbound row.

Targets: recall >= 0.98, false positives <= 2%.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import timed, write_result  # noqa: E402
from bench.outbound import sample_blocks  # noqa: E402
from fastpad.outbound.pipeline import OutboundPolicy, prepare  # noqa: E402
from fastpad.outbound.secrets import SecretMatch, find_secrets, redact  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "data" / "redaction"
KEY = b"bench-redaction-key-0123456789ab"
THROUGHPUT_BYTES = 5_000_000


def load(name: str) -> list[dict]:
    return [json.loads(line) for line in (CORPUS / name).read_text().splitlines() if line]


def render(record: dict) -> tuple[str, int, int]:
    """The record's sentence, and where its value sits in it."""
    value = "".join(record["value"])
    before, marker, after = "".join(record["context"]).partition("{value}")
    if not marker:          # a look-alike that is the whole sentence
        return before, 0, 0
    return before + value + after, len(before), len(before) + len(value)


def covered(matches: list[SecretMatch], start: int, end: int) -> bool:
    """Whether the (non-overlapping, ordered) masks cover every character of ``[start, end)``."""
    position = start
    for m in matches:
        if m.start <= position < m.end:
            position = m.end
        if position >= end:
            return True
    return False


def measure_recall(secrets: list[dict]) -> dict:
    """Recall overall, per kind (caught/total) and per variant; the misses with what was masked."""
    caught: Counter[str] = Counter()
    total: Counter[str] = Counter()
    by_variant: Counter[str] = Counter()
    variant_total: Counter[str] = Counter()
    misses = []
    for record in secrets:
        text, start, end = render(record)
        matches = find_secrets(text)
        total[record["kind"]] += 1
        variant_total[record["variant"]] += 1
        if covered(matches, start, end):
            caught[record["kind"]] += 1
            by_variant[record["variant"]] += 1
        else:
            misses.append({"kind": record["kind"], "variant": record["variant"], "text": text,
                           "masked": [text[m.start:m.end] for m in matches]})
    return {
        "secrets": len(secrets),
        "kinds": len(total),
        "recall": round(sum(caught.values()) / len(secrets), 4),
        "recall_by_variant": {v: round(by_variant[v] / n, 4) for v, n in sorted(variant_total.items())},
        "missed_by_kind": {kind: total[kind] - caught[kind] for kind in sorted(total) if caught[kind] < total[kind]},
        "recall_by_kind": {kind: f"{caught[kind]}/{n}" for kind, n in sorted(total.items())},
        "misses": misses,
    }


def measure_false_positives(lookalikes: list[dict]) -> dict:
    flagged = []
    by_kind: Counter[str] = Counter()
    for record in lookalikes:
        text, _, _ = render(record)
        matches = find_secrets(text)
        if matches:
            by_kind[record["kind"]] += 1
            flagged.append({"kind": record["kind"], "text": text,
                            "masked": [(m.rule_id, text[m.start:m.end]) for m in matches]})
    return {
        "lookalikes": len(lookalikes),
        "false_positive_rate": round(len(flagged) / len(lookalikes), 4),
        "flagged_by_kind": dict(sorted(by_kind.items())),
        "flagged": flagged,
    }


def mixed_text(records: list[dict], target_bytes: int) -> str:
    """The corpus's sentences, shuffled together as paragraphs and repeated to ``target_bytes``."""
    sentences = [render(record)[0] for record in records]
    rng = random.Random(6)
    parts: list[str] = []
    size = 0
    while size < target_bytes:
        rng.shuffle(sentences)
        parts.extend(sentences)
        size += sum(len(s.encode()) + 2 for s in sentences)
    return "\n\n".join(parts)


def throughput(records: list[dict]) -> dict:
    text = mixed_text(records, THROUGHPUT_BYTES)
    notes = "\n\n".join(markdown for _, markdown in sample_blocks())
    policy = OutboundPolicy(KEY, ("github.com",), 25_000)

    def rate(source: str, seconds: dict[str, float]) -> float:
        return round(len(source.encode()) / 1_000_000 / (seconds["median_ms"] / 1000), 2)

    prepare_t = timed(lambda: prepare(text, policy))
    notes_t = timed(lambda: redact(notes, KEY))
    return {
        "prepare_corpus_mixed": prepare_t | {"input_bytes": len(text.encode()), "mb_per_s": rate(text, prepare_t)},
        "redact_outbound_notes": notes_t | {"input_bytes": len(notes.encode()), "mb_per_s": rate(notes, notes_t)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="print every miss and every false positive")
    args = parser.parse_args()
    figures: dict = {}
    for corpus, prefix in (("public", "public_"), ("project", "")):
        secrets, lookalikes = load(f"{prefix}secrets.jsonl"), load(f"{prefix}lookalikes.jsonl")
        figures[corpus] = {"recall": measure_recall(secrets), "false_positives": measure_false_positives(lookalikes)}
    project = load("secrets.jsonl") + load("lookalikes.jsonl")
    figures["throughput"] = throughput(project)      # the same text as earlier runs: figures stay comparable
    targets = {"public.recall.recall": ">= 0.98", "public.false_positives.false_positive_rate": "<= 0.02"}
    path = write_result("redaction", figures, targets)
    for corpus in ("public", "project"):
        recall, false_positives = figures[corpus]["recall"], figures[corpus]["false_positives"]
        print(corpus, json.dumps({
            "recall": recall["recall"], "secrets": recall["secrets"], "kinds": recall["kinds"],
            "recall_by_variant": recall["recall_by_variant"], "missed_by_kind": recall["missed_by_kind"],
            "false_positive_rate": false_positives["false_positive_rate"], "lookalikes": false_positives["lookalikes"],
            "flagged_by_kind": false_positives["flagged_by_kind"],
        }, indent=2))
        if args.show:
            for miss in recall["misses"]:
                print("MISS", json.dumps(miss, ensure_ascii=False))
            for hit in false_positives["flagged"]:
                print("FP  ", json.dumps(hit, ensure_ascii=False))
    print("mb_per_s", {name: t["mb_per_s"] for name, t in figures["throughput"].items()})
    print(f"written to {path}")


if __name__ == "__main__":
    main()
