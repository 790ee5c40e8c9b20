"""The outbound path end to end: redact, then neutralise, then fence or budget."""

from __future__ import annotations

import pytest

from fastpad.outbound.fence import unfence
from fastpad.outbound.pipeline import OutboundPolicy, prepare, prepare_blocks, prepare_note, prepare_value
from fastpad.outbound.secrets import find_secrets, redact
from fastpad.outbound.tokens import count_tokens
from tests.outbound.corpus import POSITIVES

KEY = b"pipeline-key-0123456789abcdef012"


def policy(*allow: str, max_tokens: int = 25_000) -> OutboundPolicy:
    return OutboundPolicy(KEY, allow, max_tokens)


def test_password_in_a_url_is_redacted_before_the_url_is_neutralised() -> None:
    text = "DB: postgres://app:S3cr3t-pa55@db.internal:5432/app"
    out = prepare(text, policy())
    fp = redact(text, KEY).matches[0].fingerprint
    assert out.text == f"DB: postgres[:]//app:[redacted:url-password:{fp}]@db[.]internal:5432/app"
    assert [r.rule_id for r in out.redactions] == ["url-password"] and out.neutralized_links == 1


def test_an_allowlisted_url_stays_live_but_never_carries_its_password() -> None:
    text = "[admin](https://root:Zq8x!pLm2@intranet.example.com/admin)"
    out = prepare(text, policy("intranet.example.com"))
    assert out.text.startswith("[admin](https://root:[redacted:url-password:")
    assert "Zq8x" not in out.text and out.neutralized_links == 0


def test_a_slack_webhook_is_caught_even_though_it_is_a_url() -> None:
    rule, text, secret = next(p for p in POSITIVES if p[0] == "slack-webhook")
    out = prepare(text, policy())
    assert secret not in out.text and "[redacted:slack-webhook:" in out.text


def test_every_secret_in_the_corpus_is_gone_after_prepare() -> None:
    document = "\n\n".join(text for _, text, _ in POSITIVES)
    out = prepare(document, policy())
    for _, _, secret in POSITIVES:
        assert secret not in out.text
    assert find_secrets(out.text) == []


def test_prepare_does_not_touch_the_input() -> None:
    text = "password = Tr0ub4dor&3 and https://example.com"
    copy = str(text)
    prepare(text, policy())
    assert text == copy


def test_prepare_blocks_budgets_prepared_text_and_reports_redactions() -> None:
    blocks = [(f"01JB2K7Q9XN4M8YV3TD0FZ5E{i:02d}", f"para {i} https://example.com/{i} " + "word " * 50) for i in range(60)]
    secret_id = blocks[1][0]
    blocks[1] = (secret_id, blocks[1][1] + " api_key = Zx81kQ0pLm27Vb64Nc3Ty9")
    pages = []
    cursor = None
    while True:
        page = prepare_blocks(blocks, policy(max_tokens=1_000), cursor, scope="fetch")
        pages.append(page)
        result = page.result
        assert count_tokens(result.text) + count_tokens(result.hint) <= 1_000
        assert "https://example.com" not in result.text and "Zx81kQ" not in result.text
        if not result.truncated:
            break
        cursor = result.next_cursor
    assert len(pages) > 3
    assert set(pages[0].redactions) == {secret_id}
    assert all(not p.redactions for p in pages[1:])
    assert [b for p in pages for b in p.result.included_block_ids] == [b for b, _ in blocks]


def test_prepare_note_redacts_title_and_body_then_fences() -> None:
    _, text, secret = next(p for p in POSITIVES if p[0] == "github-token")
    fenced = prepare_note("01JB2K7Q9XN4M8YV3TD0FZ5ERW", f"creds {secret}", f"{text}\nsee https://evil.com", policy())
    ((note_id, title, body),) = unfence(fenced)
    assert secret not in fenced
    assert title.startswith("creds [redacted:github-token:")
    assert body.endswith("see hxxps://evil[.]com\n")


def test_prepare_value_walks_json_like_results() -> None:
    value = {"id": "01JB2K7Q9XN4M8YV3TD0FZ5ERW", "hits": [{"snippet": "token: ghp_" + "a1B2" * 9, "score": 0.5}],
             "url": "https://example.com/x", "tags": ("a", "b")}
    out = prepare_value(value, policy())
    assert out["id"] == value["id"] and out["hits"][0]["score"] == 0.5 and out["tags"] == ("a", "b")
    assert out["hits"][0]["snippet"].startswith("token: [redacted:github-token:")
    assert out["url"] == "hxxps://example[.]com/x"


@pytest.mark.parametrize(
    "kwargs",
    [dict(secret_key=b"short"), dict(secret_key="not-bytes-0123456789"), dict(max_tokens=0), dict(allow_hosts=("*",))],
)
def test_policy_is_validated(kwargs) -> None:
    base = dict(secret_key=KEY, allow_hosts=(), max_tokens=25_000)
    with pytest.raises(ValueError):
        OutboundPolicy(**(base | kwargs))


def test_policy_normalises_its_allowlist() -> None:
    assert OutboundPolicy(KEY, ("Docs.Example.com", "*.Fastpad.ai")).allow_hosts == ("docs.example.com", "*.fastpad.ai")
