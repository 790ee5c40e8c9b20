"""What makes a matched string a secret: entropy, "looks random", placeholders, documented examples.

The validators the rule catalogue (:mod:`fastpad.outbound.secret_rules`) calls on
a candidate's text. Never a model: the same text always gives the same answer.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from urllib.parse import unquote

GENERIC_MIN_ENTROPY = 3.5
PASSWORD_MIN_ENTROPY = 2.5


def shannon_entropy(value: str) -> float:
    """Bits per character of ``value`` over its own character distribution."""
    if not value:
        return 0.0
    total = len(value)
    # -sum(p * log2(p)) with p = n / total, rearranged so that each count costs one log
    return math.log2(total) - sum(n * math.log2(n) for n in Counter(value).values()) / total


_ENV_NAME = re.compile(r"[A-Z][A-Z_]*")          # YOUR_API_KEY, API_TOKEN: an env-var name, no digits
_FILLER = re.compile(r"[xX*#._-]{3,}")          # xxxx, ****, ...
_FILLER_RUNS = ("xxxxxx", "XXXXXX", "00000000", "****")   # ghp_xxxxxx…, sk_live_00000000…: a template, not a key
# AIzaaaaaaaa…, AKIAZZZZZZZZ…, ####…: random text almost never repeats a letter or mark 8 times (digits may: ids).
# Counted only where the run is a quarter of the value or more: the base64 of binary data repeats A for its zero
# bytes (every OpenSSH private key holds AAAAAAAAA), and a long key is no less a key for it.
_SAME_CHARACTER_RUN = re.compile(r"([^\d])\1{7,}")
_YOUR_SECRET = re.compile(r"your[_-]?(?:api[_-]?)?(?:key|token|secret|password)").search
_PLACEHOLDER_WORDS = ("example", "placeholder", "changeme", "redacted", "fake")
# A template at the start of a value: ${VAR}, ${{ secrets.X }}, {{ .Values.x }}, {Name}, <name>, %(name)s,
# %{x}, [NAME], $(command), $VAR, $1. A value that merely starts with such a character, long and random, is not one.
_TEMPLATE = re.compile(r"\$\{\{[^{}]*\}\}|\$\{[^{}]*\}|\{\{[^{}]*\}\}|\{[A-Za-z_][\w.:-]*\}|<[^<>]*>|%\([^()]*\)"
                       r"|%\{[^{}]*\}|\[[^\[\]]*\]|\$\([^()]*\)|\$\w+|\([^()]*\)")
_TEMPLATE_START = ("$", "<", "{", "%", "[", "(")
_YAML_TAG = re.compile(r"![A-Za-z][\w.-]*")      # password: !vault |, Password: !Ref DbPassword
_DOTTED_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")
_ULID = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")

# Published sample credentials that do not say "example" (adjacent literals keep scanners off this file).
_DOCUMENTED_EXAMPLES = frozenset({
    "sk_test_" "4eC39HqLyjWDarjtT1zdp7dc",                      # Stripe's API reference
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" "."                  # jwt.io's sample token
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" "."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"   # Azurite's devstoreaccount1
    "K1SZFPTOtr/KBHBeksoGMGw==",
})


def is_placeholder(value: str) -> bool:
    """Template or example text standing where a secret would go."""
    if not value or "..." in value or "\u2026" in value:
        return True
    if value.startswith(_TEMPLATE_START) and (_TEMPLATE.match(value) or len(value) < 16
                                              or shannon_entropy(value) < GENERIC_MIN_ENTROPY):
        return True
    if _ENV_NAME.fullmatch(value) or _FILLER.fullmatch(value) or _YAML_TAG.fullmatch(value):
        return True
    lowered = value.lower()
    return any(word in lowered for word in _PLACEHOLDER_WORDS) or _YOUR_SECRET(lowered) is not None


def is_documented_example(value: str) -> bool:
    """A credential published in documentation (``AKIAIOSFODNN7EXAMPLE``) or a template of one (``ghp_xxxx…``).

    Checked for every rule: such a value is public, and masking it would only hide the docs being quoted.
    """
    return ("example" in value.lower() or any(run in value for run in _FILLER_RUNS) or value in _DOCUMENTED_EXAMPLES
            or any(len(run.group()) * 4 >= len(value) for run in _SAME_CHARACTER_RUN.finditer(value)))


_HAS_DIGIT = re.compile(r"\d").search
_HAS_LETTER = re.compile(r"[^\W\d_]").search
_HAS_LOWER = re.compile(r"[a-z]").search
_HAS_UPPER = re.compile(r"[A-Z]").search
_HAS_SYMBOL = re.compile(r"[^A-Za-z0-9]").search
_ASCII_LETTERS = re.compile(r"[A-Za-z]+")
_CAMEL_CASE_WORDS = re.compile(r"[a-z]*(?:[A-Z]+[a-z]{2,})+[A-Z]*")   # random letters almost never are
_WORDLIKE = re.compile(r"[A-Za-z_.-]+")          # required, get_password, prod-db: a word or a code name
_PATH_START = ("/", "./", "../", "~/")
_RELATIVE_FILE = re.compile(r"[\w.-]+(?:/[\w.-]+)+\.[A-Za-z]{1,5}")      # certs/server.pem: where a key is kept


def _classes(value: str) -> int:
    """How many of lower, upper, digit and symbol ``value`` uses (ASCII letters; others count as symbols)."""
    return sum(1 for has in (_HAS_LOWER, _HAS_UPPER, _HAS_DIGIT, _HAS_SYMBOL) if has(value))


def _random_letters(value: str) -> bool:
    """Letters only, yet a token: both cases, and not CamelCase words (``getAccessToken``, ``XMLHttpRequest``)."""
    if not _ASCII_LETTERS.fullmatch(value) or not (_HAS_LOWER(value) and _HAS_UPPER(value)):
        return False
    return _CAMEL_CASE_WORDS.fullmatch(value) is None


def _entropy_floor(length: int, ceiling: float) -> float:
    """The entropy a random value of ``length`` characters reliably reaches, capped at ``ceiling``."""
    return min(ceiling, math.log2(length) - 0.7)


def looks_random(value: str, *, min_length: int = 16, min_entropy: float = GENERIC_MIN_ENTROPY,
                 named: bool = False) -> bool:
    """A token-like value: long enough, letters and digits, high entropy, not an identifier.

    ULIDs, UUIDs and hex digests (git SHAs) are identifiers, not secrets, and a
    value needs digits, unless ``named``: the value sits under a credential
    name (``api_key =``, ``Bearer``), where a hex or UUID value *is* the
    credential (hex then held to 3.0 bits/char, since its alphabet caps
    entropy at 4) and so is a string of random-looking letters.
    """
    if len(value) < min_length or is_placeholder(value) or _dotted_name(value):
        return False
    if _ULID.match(value) or _UUID.match(value) or _HEX.match(value):
        if not named:
            return False
        if _HEX.match(value):
            return len(value) >= 16 and shannon_entropy(value) >= 3.0
        return True
    if not _HAS_LETTER(value):
        return False
    if not _HAS_DIGIT(value) and not (named and _random_letters(value)):
        return False
    return shannon_entropy(value) >= _entropy_floor(len(value), min_entropy)


def _dotted_name(value: str) -> bool:
    """``settings.api_key``, ``os.environ.TOKEN``: a name, not a value — unless a part is itself a token.

    Vault's ``s.Z4bTMtngfLeQ18AqVoBBkUAOD1`` is shaped like a dotted name too, but one of its parts is no name:
    random, with no ``_`` between words and letters that are not CamelCase words (``getApiKeyFor2Region`` is one).
    """
    return _DOTTED_IDENTIFIER.match(value) is not None and not any(_token_part(part) for part in value.split("."))


def _token_part(part: str) -> bool:
    return "_" not in part and looks_random(part) and any(map(_random_letters, _ASCII_LETTERS.findall(part)))


def _looks_like_password(value: str) -> bool:
    if len(value) < 6 or is_placeholder(value) or _DOTTED_IDENTIFIER.match(value):
        return False
    if _ULID.match(value) or _UUID.match(value) or _WORDLIKE.fullmatch(value) or value.isdigit():
        return False
    if value.startswith(_PATH_START) or "://" in value or _RELATIVE_FILE.fullmatch(value):
        return False
    return _classes(value) >= 2 and shannon_entropy(value) >= PASSWORD_MIN_ENTROPY


def _named_secret(value: str) -> bool:
    """The value of an ``api_key``/``access_token``-like name: machine-made, so it must look random."""
    return looks_random(value, min_length=10, named=True)


def _service_key(value: str) -> bool:
    """A service's key under its name: random, and with a digit (``sumOfExposures`` is code beside the name)."""
    return _named_secret(value) and _HAS_DIGIT(value) is not None


def _quoted_literal(value: str) -> bool:
    """A quoted literal under a credential name: password-like (two classes, not a word, number, path or
    identifier) with 8+ characters and 3.0 bits/char; the quotes are what says where it ends."""
    return len(value) >= 8 and _looks_like_password(value) and shannon_entropy(value) >= 3.0


def _chosen_secret(value: str) -> bool:
    """The value of a ``secret``/``credentials`` name: machine-made, or chosen by a person like a password."""
    return _named_secret(value) or (len(value) >= 8 and _looks_like_password(value))


def _openai_like(value: str) -> bool:
    body = value.split("-", 1)[1] if "-" in value else value
    for prefix in ("proj-", "svcacct-", "admin-", "None-"):
        if body.startswith(prefix):
            body = body[len(prefix):]
    # random base64url has few hyphens; kebab-case identifiers (sk-learn-…) have many
    if body.count("-") + body.count("_") > max(2, len(body) // 10):
        return False
    return looks_random(body, min_length=20)


def _bearer_value(value: str) -> bool:
    if is_placeholder(value) or len(value) < 12 or shannon_entropy(value) < 3.0:
        return False
    return bool(_HAS_DIGIT(value)) or _random_letters(value)


_PLACEHOLDER_PASSWORDS = frozenset({"password", "pass", "passwd", "secret", "pwd", "test", "token", "changeit", "changeme"})


def _url_password(value: str) -> bool:
    """Not a template (``<password>``, ``${PASS}``), a placeholder word (``user:pass``) or one repeated letter (``yyy``)."""
    if is_placeholder(value) or value.endswith((">", "]", "}")) or len(set(value)) == 1:
        return False
    return value.lower() not in _PLACEHOLDER_PASSWORDS


_SLACK_PREFIX = re.compile(r"(?:xox[a-z]|xapp)(?:\.xox[a-z])?-(?:\d-)?")


def _slack_token(value: str) -> bool:
    """Random after the prefix: numeric ids of 6+ digits (``xoxp-1234-1234-…`` is a template) and a last part
    that holds a letter (the secret part; ``…-572331691188-####`` stops at the digits)."""
    parts = _SLACK_PREFIX.sub("", value, count=1).split("-")
    if not _HAS_DIGIT("".join(parts)) or is_placeholder(value):
        return False
    if any(part.isdigit() and len(part) < 6 for part in parts):
        return False
    return _HAS_LETTER(parts[-1]) is not None


def _aws_secret_near_key_id(value: str) -> bool:
    # 40 random base64 characters have all three classes; a hex SHA or a path beside the key id does not
    mixed = _HAS_LOWER(value) and _HAS_UPPER(value) and _HAS_DIGIT(value)
    return bool(mixed) and shannon_entropy(value) >= GENERIC_MIN_ENTROPY


def _discord_bot_token(value: str) -> bool:
    """The first part of a Discord bot token is the bot's numeric user id, base64-encoded."""
    user_id = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(user_id + "=" * (-len(user_id) % 4))
    except (binascii.Error, ValueError):
        return False
    if decoded.isdigit() and 17 <= len(decoded) <= 20:
        return True
    # Newer tokens' first part is not always a clean id; it still starts as base64 of a leading digit
    # (M, N or O) and the whole token is random.
    return user_id[:1] in "MNO" and looks_random(value, min_length=50)


_HMAC_SHA256_BASE64 = re.compile(r"[A-Za-z0-9+/]{43}=")


def _sas_signature(value: str) -> bool:
    """An Azure SAS ``sig`` is an HMAC-SHA256: 44 base64 characters once URL-decoded."""
    decoded = unquote(value)
    return _HMAC_SHA256_BASE64.fullmatch(decoded) is not None and shannon_entropy(decoded) >= 4.0


def _azure_ad_secret(value: str) -> bool:
    """Entra ID client secrets read ``xxx8Q~…``: three characters, a digit, then ``Q~``."""
    return value[3].isdigit() and shannon_entropy(value) >= 3.5


def _random_hex(value: str) -> bool:
    return bool(_HAS_DIGIT(value) and _HAS_LETTER(value)) and shannon_entropy(value) >= 3.0

