"""Secret detection: every rule on true positives, zero false positives on look-alikes, and masking."""

from __future__ import annotations

import hashlib

import pytest

from fastpad.outbound import secrets
from fastpad.outbound.secret_rules import RULE_IDS, RULES, Rule, describe_rules, shannon_entropy
from fastpad.outbound.secrets import FINGERPRINT_HEX, PLACEHOLDER_RE, block_scope, find_secrets, locate, redact
from tests.outbound.corpus import NEGATIVES, POSITIVES
from tests.outbound.spellings import SPELLINGS, TOKEN, leaked

KEY = b"test-server-key-0123456789abcdef"


@pytest.mark.parametrize(("rule", "text", "secret"), POSITIVES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(POSITIVES)])
def test_true_positive_is_found_exactly(rule: str, text: str, secret: str) -> None:
    matches = find_secrets(text)
    assert [(m.rule_id, text[m.start:m.end]) for m in matches] == [(rule, secret)]


def test_every_rule_has_a_true_positive() -> None:
    assert set(RULE_IDS) == {rule for rule, _, _ in POSITIVES}


@pytest.mark.parametrize("rule", [rule for rule in RULES if rule.gate], ids=lambda rule: f"{rule.id}:{rule.gate}")
def test_a_rule_skipped_for_want_of_its_gate_could_not_have_matched(rule: Rule) -> None:
    subjects = [text.lower() if rule.lower else text for rule_id, text, _ in POSITIVES if rule_id == rule.id]
    matched = [subject[m.start():] for subject in subjects for m in rule.pattern.finditer(subject)]
    assert matched and all(rest.startswith(rule.gate) for rest in matched)


def test_the_short_text_screen_changes_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short texts are screened by one combined pattern before the rules run one by one; the answers
    must be those of the rules alone, on every positive, look-alike and spelling of the corpus."""
    texts = [text for _, text, _ in POSITIVES] + list(NEGATIVES) + list(SPELLINGS.values())
    short = [text for text in texts if len(text) < secrets._SCREEN_BELOW]
    assert len(short) > len(texts) // 2 and any(find_secrets(text) for text in short)
    screened = [find_secrets(text) for text in short]
    monkeypatch.setattr(secrets, "_SCREEN_BELOW", 0)
    assert [find_secrets(text) for text in short] == screened


def test_zero_false_positives_on_look_alikes() -> None:
    flagged = {text: [(m.rule_id, text[m.start:m.end]) for m in find_secrets(text)] for text in NEGATIVES}
    assert {text: hits for text, hits in flagged.items() if hits} == {}
    assert len(NEGATIVES) > 900   # ULIDs, SHAs, UUIDs, base64, prose, code


def test_negatives_stay_clean_inside_one_big_document() -> None:
    document = "\n\n".join(NEGATIVES)
    assert find_secrets(document) == []


def test_all_positives_in_one_document_are_found_non_overlapping_and_in_order() -> None:
    document = "\n\nSome prose between.\n\n".join(text for _, text, _ in POSITIVES)
    matches = find_secrets(document)
    assert [document[m.start:m.end] for m in matches] == [secret for _, _, secret in POSITIVES]
    assert all(a.end <= b.start for a, b in zip(matches, matches[1:]))


def test_a_secret_glued_inside_a_word_is_not_a_prefixed_token() -> None:
    _, _, token = next(p for p in POSITIVES if p[0] == "github-token")
    assert find_secrets("x" + token) == []


def test_specific_rule_wins_over_generic_on_the_same_span() -> None:
    _, _, token = next(p for p in POSITIVES if p[0] == "stripe-key")
    assert [m.rule_id for m in find_secrets(f"api_key = {token}")] == ["stripe-key"]


def test_redact_masks_with_visible_stable_placeholders() -> None:
    rule, text, secret = next(p for p in POSITIVES if p[0] == "url-password")
    result = redact(text, KEY)
    assert secret not in result.text
    (match,) = result.matches
    assert match.placeholder == f"[redacted:url-password:{match.fingerprint}]"
    assert len(match.fingerprint) == FINGERPRINT_HEX
    assert result.text == text[: match.start] + match.placeholder + text[match.end:]
    assert PLACEHOLDER_RE.fullmatch(match.placeholder)
    # stable for the same key, text and scope, different under another key, one per place in the text
    assert redact(text, KEY) == result
    assert redact(text, b"another-key-0123456789abcdefghij").matches[0].fingerprint != match.fingerprint
    twice = redact(text + "\n" + text, KEY)
    assert len({m.fingerprint for m in twice.matches}) == 2


def _another_of_its_class(character: str) -> str:
    """Another digit for a digit, another letter of the same case for a letter — and a hex digit
    either way, so a value stays of its rule's shape even where the rule takes only hex."""
    if character.isdigit():
        return "7" if character != "7" else "3"
    if character.isupper():
        return "B" if character != "B" else "A"
    return "b" if character != "b" else "a"


@pytest.mark.parametrize(("rule", "text", "secret"), POSITIVES[::3], ids=[r for r, _, _ in POSITIVES[::3]])
def test_the_fingerprint_names_the_place_not_the_value(rule: str, text: str, secret: str) -> None:
    """No oracle: a reader who has the server mask a guess of its own learns nothing from the suffix. The
    same text with a different secret of the same shape masks to the same placeholder, in any scope;
    the same secret in another block (scope) masks to another."""
    at = next(i for i in range(len(secret) // 2, len(secret)) if secret[i].isalnum())  # a character inside the value
    guess = secret[:at] + _another_of_its_class(secret[at]) + secret[at + 1:]
    assert [m.rule_id for m in find_secrets(text.replace(secret, guess))] == [rule]  # a guess of the rule's shape
    for scope in ("", block_scope("01JB2K7Q9XN4M8YV3TD0FZ5ERW")):
        assert redact(text, KEY, scope).text == redact(text.replace(secret, guess), KEY, scope).text
    assert redact(text, KEY, block_scope("01JB2K7Q9XN4M8YV3TD0FZ5ERW")).text != redact(
        text, KEY, block_scope("01JB2K7Q9XN4M8YV3TD0FZ5ERX")).text


def test_redact_is_pure_and_idempotent() -> None:
    document = "\n".join(text for _, text, _ in POSITIVES)
    before = str(document)
    once = redact(document, KEY)
    assert document == before
    assert len(once.matches) == len(POSITIVES)
    assert redact(once.text, KEY).text == once.text    # a placeholder is never re-detected


def test_redact_without_secrets_returns_the_text_itself() -> None:
    text = "Nothing to see {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}"
    result = redact(text, KEY)
    assert result.text is text and result.matches == () and not result.redacted


def test_redact_requires_a_key() -> None:
    with pytest.raises(ValueError):
        redact("password = Tr0ub4dor&3", b"")
    with pytest.raises(ValueError):
        redact("nothing secret here", b"")


def test_locate_expands_a_placeholder_and_ignores_forged_ones() -> None:
    _, text, secret = next(p for p in POSITIVES if p[0] == "aws-secret-key")
    match = redact(text, KEY).matches[0]
    (found,) = locate(text, KEY, "aws-secret-key", match.fingerprint)
    assert text[found.start:found.end] == secret
    assert locate(text, KEY, "aws-secret-key", "000000") == []
    assert locate("[redacted:aws-secret-key:abcdef]", KEY, "aws-secret-key", "abcdef") == []
    # bound to its block: the same text in another block holds nothing that placeholder stands for
    scoped = redact(text, KEY, block_scope("01JB2K7Q9XN4M8YV3TD0FZ5ERW")).matches[0].fingerprint
    assert [text[m.start:m.end] for m in locate(text, KEY, "aws-secret-key", scoped,
                                                 block_scope("01JB2K7Q9XN4M8YV3TD0FZ5ERW"))] == [secret]
    assert locate(text, KEY, "aws-secret-key", scoped, block_scope("01JB2K7Q9XN4M8YV3TD0FZ5ERX")) == []


def test_offsets_survive_characters_whose_lower_case_is_longer() -> None:
    # "İ".lower() is two characters: the lower-cased fast path must not shift spans
    _, text, secret = next(p for p in POSITIVES if p[0] == "authorization-header")
    shifted = "İİİ " + text
    (match,) = find_secrets(shifted)
    assert shifted[match.start:match.end] == secret


def test_entropy_threshold_is_what_separates_generic_values() -> None:
    assert shannon_entropy("aaaaaaaa") == 0
    assert shannon_entropy("abcd") == 2
    assert find_secrets("api_key = abababababababab12") == []          # low entropy
    assert find_secrets("api_key = Zx81kQ0pLm27Vb64Nc3Ty9")            # high entropy


def test_rule_catalogue_names_every_rule_once() -> None:
    catalogue = describe_rules()
    assert [entry["id"] for entry in catalogue] == list(RULE_IDS)
    assert len(set(RULE_IDS)) == len(RULE_IDS) >= 25
    assert all(entry["description"] for entry in catalogue)


def test_a_truncated_private_key_is_masked_without_eating_the_prose_after_it() -> None:
    anchor = "{#01JB2K7Q9XN4M8YV3TD0FZ5ERW}"
    encrypted = (
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,ABC123\n\n"
        f"MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\nabcdEFGH== {anchor}\n\nThanks for reading.\nMore prose."
    )
    assert redact(encrypted, KEY).text.endswith(f"] {anchor}\n\nThanks for reading.\nMore prose.")
    bare = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACDx\n\nThanks\nmore prose"
    masked = redact(bare, KEY).text
    assert masked.startswith("[redacted:private-key:") and masked.endswith("]\n\nThanks\nmore prose")


@pytest.mark.parametrize("algorithm", ["ed25519", "rsa"])
def test_a_whole_openssh_private_key_is_masked_though_its_zero_bytes_repeat_a_letter(algorithm: str) -> None:
    # ssh-keygen's format: its base64 always holds a run of A (zero bytes), which a placeholder check must not
    # take for filler (AKIAZZZZ…): the block is masked whole, header to footer.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

    key = ed25519.Ed25519PrivateKey.generate() if algorithm == "ed25519" else rsa.generate_private_key(65537, 2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                            serialization.NoEncryption()).decode().strip()
    assert "AAAAAAAA" in pem
    text = f"Deploy key for the staging box:\n\n```\n{pem}\n```\n\nRotate it after the demo."
    assert [(m.rule_id, text[m.start:m.end]) for m in find_secrets(text)] == [("private-key", pem)]


@pytest.mark.parametrize("text, secret", [
    ('VAULT_CLIENT_TOKEN="s.Hq3NvR8wLk2TzYp6MdXc4BfJ"', "s.Hq3NvR8wLk2TzYp6MdXc4BfJ"),   # Vault before 1.10
    ("vault_token: b.Kq7LmW2xPz9RtYb4NcVd8HgF", "b.Kq7LmW2xPz9RtYb4NcVd8HgF"),
    ("token = settings.STRIPE_API_KEY_V2", None),             # dotted names under a credential name: references
    ("secret = app.config.JWT_SECRET_KEY_2023", None),
    ("api_key = config.getApiKeyForTenant2Region", None),
    ("token = ctx.obj.auth_token_v2_refresh_handler", None),
    ("key = proto.v1beta1.ListKeysRequest", None),
])
def test_a_dotted_value_is_a_name_unless_a_part_of_it_is_a_token(text: str, secret: str | None) -> None:
    assert [text[m.start:m.end] for m in find_secrets(text)] == ([secret] if secret else [])


def _token(rule: str) -> str:
    return next(secret for rule_id, _, secret in POSITIVES if rule_id == rule)


@pytest.mark.parametrize("invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
def test_a_zero_width_character_does_not_hide_a_token(invisible: str) -> None:
    token = _token("github-token")
    split = token[:9] + invisible + token[9:]
    text = f"the CI token is {split} for now"
    (match,) = find_secrets(text)
    assert (match.rule_id, text[match.start:match.end]) == ("github-token", split)   # the mask covers the invisible too
    masked = redact(text, KEY)
    assert invisible not in masked.text and token[9:] not in masked.text
    assert masked.matches[0].fingerprint == redact(f"the CI token is {token} for now", KEY).matches[0].fingerprint


def test_zero_width_characters_around_a_value_keep_their_offsets() -> None:
    text = "\u200bapi\u200b_key: " + "Zx81\u200bkQ0pLm27Vb64Nc3Ty9" + "\ufeff and more"
    (match,) = find_secrets(text)
    assert text[match.start:match.end] == "Zx81\u200bkQ0pLm27Vb64Nc3Ty9"


@pytest.mark.parametrize("emphasis", ["*{}*", "_{}_", "**{}**", "__{}__"])
@pytest.mark.parametrize("rule", ["stripe-key", "gitlab-token", "google-api-key", "telegram-bot-token", "sentry-token"])
def test_markdown_emphasis_around_a_token_stays_outside_the_mask(emphasis: str, rule: str) -> None:
    token = _token(rule)
    text = "The new one is " + emphasis.format(token) + ", the old one is revoked."
    assert [(m.rule_id, text[m.start:m.end]) for m in find_secrets(text)] == [(rule, token)]


AWS_KEY_ID = "AKIA" + "Q3EGUV7ZRT5W2YHB"
AWS_SECRET = "doiFrZRwsz6ZT9n2AXZD41M2SwV/" + "4exBaRc5uLFv"


@pytest.mark.parametrize("layout", ["{id} / {secret}", "{id},{secret}", "Access key: {id}\nSecret: {secret}",
                                    "key id {id} with secret {secret} (staging)"])
def test_an_aws_secret_beside_its_key_id_is_masked_with_it(layout: str) -> None:
    text = layout.format(id=AWS_KEY_ID, secret=AWS_SECRET)
    found = [(m.rule_id, text[m.start:m.end]) for m in find_secrets(text)]
    assert found == [("aws-access-key", AWS_KEY_ID), ("aws-secret-key", AWS_SECRET)]


def test_a_commit_sha_beside_a_key_id_is_not_its_secret() -> None:
    text = f"{AWS_KEY_ID} was rotated in {hashlib.sha1(b'rotation').hexdigest()}"
    assert [m.rule_id for m in find_secrets(text)] == ["aws-access-key"]


@pytest.mark.parametrize("layout", [
    "api_key: {v}", "api_key={v}", '{{"api_key": "{v}"}}', "---\ntitle: Ops\nsecret: {v}\n---", "token: {v}",
    "  access_token: {v}", "**API key:** {v}", "| client_secret | {v} |", "The API key: {v}",
])
def test_a_value_known_only_by_its_name_is_masked(layout: str) -> None:
    value = "Qm3x9ZkL0aP8"       # 12 characters: short, but random, and under a credential name
    text = layout.format(v=value)
    assert [text[m.start:m.end] for m in find_secrets(text)] == [value]


@pytest.mark.parametrize("text", [
    "AKIA" "IOSFODNN7EXAMPLE",
    "aws_secret_access_key: wJalrXUtnFEMI/K7MDENG/" "bPxRfiCYEXAMPLEKEY",
    "stripe.api_key = 'sk_test_" "4eC39HqLyjWDarjtT1zdp7dc'",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "GITHUB_TOKEN=ghp_" + "X" * 36,
])
def test_documented_example_keys_stay_visible(text: str) -> None:
    assert find_secrets(text) == []


def test_a_placeholder_in_the_text_is_never_detected_again() -> None:
    text = "redis://:[redacted:url-password:fe4607]@cache:6379 and password:[redacted:generic-password:0a1b2c]"
    assert find_secrets(text) == []


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_a_token_is_masked_however_markdown_or_html_spells_it(spelling: str) -> None:
    spelled = SPELLINGS[spelling]
    text = f"The CI token is {spelled} for now."
    (match,) = find_secrets(text)
    masked = text[match.start:match.end]
    assert match.rule_id == "github-token" and masked.lstrip("[") == spelled.lstrip("[")   # exactly what renders as it
    assert text[:match.start] == "The CI token is " and text[match.end:] == " for now."    # the rest untouched
    result = redact(text, KEY)
    assert leaked(result.text) == []
    # the fingerprint is the rendered token's: the same as the token typed plainly
    assert result.matches[0].fingerprint == redact(f"The CI token is {TOKEN} for now.", KEY).matches[0].fingerprint
    assert locate(text, KEY, "github-token", result.matches[0].fingerprint)


def test_markup_between_words_is_left_alone() -> None:
    prose = "Use **bold** and `code`, see [the docs](https://example.com/x) and 2*3=6 &amp; more."
    assert find_secrets(prose) == [] and redact(prose, KEY).text == prose


def test_a_url_password_in_a_glued_links_destination_is_still_found() -> None:
    text = "see[db](postgres://app:Xk9vQ2mZ7rTp@db.internal/prod)now"
    assert [(m.rule_id, text[m.start:m.end]) for m in find_secrets(text)] == [("url-password", "Xk9vQ2mZ7rTp")]
