"""Outbound path: redact + neutralise throughput on ~1 MB of realistic note text.

Target: at least 5 MB/s for the whole of ``prepare`` (redaction then link
neutralisation), so a full 25,000-token result (~100 KB) is prepared in
about 20 ms. Token counting and budget fitting are reported beside it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import timed, write_result  # noqa: E402
from fastpad.outbound.budget import fit_blocks  # noqa: E402
from fastpad.outbound.links import neutralize  # noqa: E402
from fastpad.outbound.pipeline import OutboundPolicy, prepare, prepare_blocks  # noqa: E402
from fastpad.outbound.secrets import redact  # noqa: E402
from fastpad.outbound.tokens import count_tokens  # noqa: E402

TARGET_BYTES = 1_000_000
KEY = b"bench-secret-key-0123456789abcdef"
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_WORDS = (
    "the retrieval arm uses rank fusion over block anchors so an agent can cite what it read while a person "
    "reviews every proposal before it lands in the note and nothing is written without a turn being accepted "
    "meeting follow up decision owner deadline migrate schema index latency budget cursor token window"
).split()


def _ulid(rng: random.Random) -> str:
    return "0" + "".join(rng.choice(_CROCKFORD) for _ in range(25))


def _alnum(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(n))


def sample_blocks(target_bytes: int = TARGET_BYTES, seed: int = 7) -> list[tuple[str, str]]:
    """Blocks as the canonical codec writes them: prose, lists, code, links, a secret now and then."""
    rng = random.Random(seed)
    blocks: list[tuple[str, str]] = []
    size = 0
    n = 0
    while size < target_bytes:
        block_id = _ulid(rng)
        kind = n % 10
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(25, 70)))
        if kind == 0:
            text = f"## Section {n} {{#{block_id}}}"
        elif kind == 1:
            text = f"{words.capitalize()}, see [the design doc](https://docs.example.com/design/{n}?v=2) and https://github.com/fastpad/fastpad/issues/{n}. {{#{block_id}}}"
        elif kind == 2:
            text = f"- follow up on `cursor_{n}` with commit {rng.getrandbits(160):040x} {{#{block_id}}}"
        elif kind == 3:
            text = f"```python {{#{block_id}}}\nresponse = client.get(\"https://api.example.com/v1/notes/{n}\", timeout=5)\nassert response.status_code == 200\n```"
        elif kind == 4 and n % 40 == 4:
            secret = rng.choice([
                f"AKIA{''.join(rng.choice('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567') for _ in range(16))}",
                f"ghp_{_alnum(rng, 36)}",
                f"postgres://app:{_alnum(rng, 14)}@db.internal:5432/app",
                f"api_key = {_alnum(rng, 32)}",
            ])
            text = f"Staging credentials (rotate!): {secret} {{#{block_id}}}"
        elif kind == 5:
            text = f"> {words} {{#{block_id}}}"
        elif kind == 6:
            text = f"| {rng.choice(_WORDS)} | {rng.randint(1, 999)} ms | {_ulid(rng)} {{#{block_id}}} |"
        else:
            text = f"{words.capitalize()}. {{#{block_id}}}"
        blocks.append((block_id, text))
        size += len(text.encode()) + 2
        n += 1
    return blocks


def main() -> None:
    blocks = sample_blocks()
    text = "\n\n".join(markdown for _, markdown in blocks)
    megabytes = len(text.encode()) / 1_000_000
    policy = OutboundPolicy(KEY, ("github.com",), 25_000)
    count_tokens("warm up")  # vocabulary load is a one-off, not part of the figures

    redact_t = timed(lambda: redact(text, KEY))
    neutralize_t = timed(lambda: neutralize(text, policy.allow_hosts))
    prepare_t = timed(lambda: prepare(text, policy))
    count_t = timed(lambda: count_tokens(text))
    page_t = timed(lambda: prepare_blocks(blocks, policy))
    fit_t = timed(lambda: fit_blocks(blocks, 25_000))

    prepared = prepare(text, policy)
    page = prepare_blocks(blocks, policy)
    tokens = count_tokens(text)

    def rate(t: dict[str, float]) -> float:
        return round(megabytes / (t["median_ms"] / 1000), 2)

    figures = {
        "input_bytes": len(text.encode()),
        "input_blocks": len(blocks),
        "input_tokens_o200k": tokens,
        "secrets_redacted": len(prepared.redactions),
        "links_neutralized": prepared.neutralized_links,
        "redact": redact_t | {"mb_per_s": rate(redact_t)},
        "neutralize": neutralize_t | {"mb_per_s": rate(neutralize_t)},
        "prepare_redact_then_neutralize": prepare_t | {"mb_per_s": rate(prepare_t)},
        "count_tokens_o200k": count_t | {"mb_per_s": rate(count_t)},
        "prepare_blocks_first_25k_page": page_t | {"blocks_in_page": len(page.result.included_block_ids), "page_tokens": page.result.tokens},
        "fit_blocks_first_25k_page": fit_t,
    }
    targets = {"prepare_redact_then_neutralize.mb_per_s": ">= 5", "prepare_blocks_first_25k_page.median_ms": "< 100"}
    path = write_result("outbound", figures, targets)
    print(path.read_text())


if __name__ == "__main__":
    main()
