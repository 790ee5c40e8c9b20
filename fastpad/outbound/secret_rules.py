"""What a secret looks like: the rule catalogue :mod:`fastpad.outbound.secrets` detects with.

Rules in the style of gitleaks' default set: a regular expression per kind of
credential, a few with a cheap validator (Shannon entropy, "looks random", not
a placeholder). Never a model: the same text always gives the same matches.
Where two rules claim overlapping text, the one listed first in :data:`RULES`
wins (vendor shapes before the generic ones).

Spans: most rules mask the whole credential; rules that key on a name
(``password=``, ``Authorization: Bearer``, ``aws_secret_access_key =``, a URL's
``user:password@``) mask the value only, so the context stays readable:
``password=[redacted:generic-password:1a2b3c]``.

Values known only by their name. A generic assignment (``api_key = …``,
``client_secret: …``, ``"access_token": "…"``, ``credentials: …``, a bare
``token: …``; in prose, YAML frontmatter or a property line alike, the name
possibly in Markdown bold) is a secret when its value looks random: at least
10 characters, letters and digits (or mixed-case letters that do not read as
CamelCase words), and an entropy of at least :data:`GENERIC_MIN_ENTROPY` = 3.5
bits/char (gitleaks' own threshold) — less for short values, which cannot reach
it: ``log2(length) - 0.7``, so 10 random characters need 2.6. Under such a name
ULIDs, UUIDs and hex digests *are* the credential (hex then needs 20+
characters and 3.0 bits/char, its alphabet capping entropy at 4). A bare
``key`` counts only with a credential-ish prefix (``api_``, ``access_``,
``secret_``, ``account_``…); any other ``*token`` name (``page_token``,
``csrf_token``) goes to ``generic-token``, where identifiers are not secrets. A
``password``/``passwd``/``pwd``/``passphrase`` value is held to a lower bar,
because passwords are short and human: at least 6 characters, two of the four
classes (lower, upper, digit, symbol), :data:`PASSWORD_MIN_ENTROPY` = 2.5
bits/char, and not a plain word, number or path. A name that *describes* the
secret (``password_file``, ``token_url``, ``secret_name``, ``api_key_id``)
holds metadata, not the secret.

Never secrets: placeholders (``<token>``, ``${API_KEY}``, ``YOUR_API_KEY``,
``xxxx``, ``****``, ``…``, anything saying ``example``/``changeme``), dotted
code paths (``request.form``, ``settings.SECRET_KEY``), and documented example
credentials (:func:`is_documented_example`: AWS's ``…EXAMPLE`` keys, Stripe's
and jwt.io's published samples, the storage emulator's well-known key).

Speed: every pattern starts with a literal, so the regex engine can jump from
one occurrence of it to the next instead of trying every position (~0.8 ms per
rule per MB; a leading character class or an alternation without a common
first character costs 10–20 times that). A rule whose literal runs to 6+
characters is not scanned at all when the text lacks it (:attr:`Rule.gate`:
looking costs half a scan). The left word boundary is a look-behind placed
*after* the literal (``_wb(n)`` checks the characters n positions back). Where
the distinctive literal sits inside the credential (``123456789:AA…``,
``…-us21``, ``….atlasv1.…``), the pattern starts at the literal and a
:class:`Lead` takes the part before it back. Rules marked ``lower`` are written
in lower case and run on the lower-cased text (same offsets), several times
faster than ``re.IGNORECASE``. Every repetition is bounded, so the work stays
linear on hostile input.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Callable
from urllib.parse import unquote

GENERIC_MIN_ENTROPY = 3.5
PASSWORD_MIN_ENTROPY = 2.5
_ALNUM = frozenset(string.ascii_letters + string.digits)
_HEX_CHARS = frozenset("0123456789abcdef")


def _at_word_start(text: str, index: int) -> bool:
    """No letter or digit right before ``index``, skipping a Markdown emphasis run (``_tok_``, ``__tok__``)."""
    before = index
    while before > max(0, index - 3) and text[before - 1] == "_":
        before -= 1
    return before == 0 or text[before - 1] not in _ALNUM


@dataclass(frozen=True)
class Lead:
    """The part of a credential before its pattern's literal: ``shortest``–``longest`` characters of ``chars``.

    It must start at a word boundary, or right after one of ``glued`` (Telegram's
    API URLs write ``/bot123456789:AA…``).
    """

    chars: frozenset[str]
    shortest: int
    longest: int
    glued: tuple[str, ...] = ()

    def start(self, text: str, position: int) -> int | None:
        """Where the credential starts, given that its pattern matched at ``position``; None if it does not."""
        start = position
        while start > position - self.longest and start > 0 and text[start - 1] in self.chars:
            start -= 1
        if position - start < self.shortest:
            return None
        if not _at_word_start(text, start) and not text.endswith(self.glued, 0, start):
            return None
        return start


@dataclass(frozen=True, eq=False)
class Rule:
    """One shape of one kind of credential; several rules may share an id (one literal each)."""

    id: str
    description: str
    pattern: re.Pattern[str]
    group: int = 0                     # which group is the secret (0: the whole match)
    validate: Callable[[str], bool] | None = None              # on the secret's text
    lower: bool = False                # the pattern is lower-case and runs on the lower-cased text
    context: Callable[[str, re.Match[str]], bool] | None = None  # (text, match) -> keep?
    lead: Lead | None = None           # the credential starts before the match

    @functools.cached_property
    def ignorecase(self) -> re.Pattern[str]:
        """The same pattern for the original text, when lower-casing changed the text's length."""
        return re.compile(self.pattern.pattern, self.pattern.flags | re.IGNORECASE)

    @functools.cached_property
    def gate(self) -> str:
        """A string every match starts with, where looking for it costs less than the scan (6+ characters,
        ~0.4 ms/MB against ~0.9): a text without it is not scanned at all."""
        literal = leading_literal(self.pattern.pattern)
        return literal if len(literal) >= 6 else ""


_REGEX_SYNTAX = frozenset(".^$*+?{}[]|()\\")


def leading_literal(pattern: str) -> str:
    """The plain characters a regular expression starts with, up to its first construct or quantified
    character: ``gh`` for ``gh[pousr]_…``, ``hooks.slack.com/`` for ``hooks\\.slack\\.com/…``."""
    chars: list[str] = []
    at = 0
    while at < len(pattern):
        if pattern[at] == "\\" and at + 1 < len(pattern) and not pattern[at + 1].isalnum():
            char, width = pattern[at + 1], 2           # an escaped punctuation mark stands for itself
        elif pattern[at] in _REGEX_SYNTAX:
            break
        else:
            char, width = pattern[at], 1
        if pattern.startswith(("?", "*", "+", "{"), at + width):
            break
        chars.append(char)
        at += width
    return "".join(chars)


# ---------------------------------------------------------------------------
# validators


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
_YOUR_SECRET = re.compile(r"your[_-]?(?:api[_-]?)?(?:key|token|secret|password)").search
_PLACEHOLDER_WORDS = ("example", "placeholder", "changeme", "redacted")
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
    if not value or value.startswith(_TEMPLATE_START) or "..." in value or "\u2026" in value:
        return True
    if _ENV_NAME.fullmatch(value) or _FILLER.fullmatch(value) or _YAML_TAG.fullmatch(value):
        return True
    lowered = value.lower()
    return any(word in lowered for word in _PLACEHOLDER_WORDS) or _YOUR_SECRET(lowered) is not None


def is_documented_example(value: str) -> bool:
    """A credential published in documentation (``AKIAIOSFODNN7EXAMPLE``) or a template of one (``ghp_xxxx…``).

    Checked for every rule: such a value is public, and masking it would only hide the docs being quoted.
    """
    return "example" in value.lower() or any(run in value for run in _FILLER_RUNS) or value in _DOCUMENTED_EXAMPLES


_HAS_DIGIT = re.compile(r"\d").search
_HAS_LETTER = re.compile(r"[^\W\d_]").search
_HAS_LOWER = re.compile(r"[a-z]").search
_HAS_UPPER = re.compile(r"[A-Z]").search
_HAS_SYMBOL = re.compile(r"[^A-Za-z0-9]").search
_ASCII_LETTERS = re.compile(r"[A-Za-z]+")
_CAMEL_CASE_WORDS = re.compile(r"[a-z]*(?:[A-Z]+[a-z]{2,})+[A-Z]*")   # random letters almost never are
_WORDLIKE = re.compile(r"[A-Za-z_.-]+")          # required, get_password, prod-db: a word or a code name
_PATH_START = ("/", "./", "../", "~/")


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
    if len(value) < min_length or is_placeholder(value) or _DOTTED_IDENTIFIER.match(value):
        return False
    if _ULID.match(value) or _UUID.match(value) or _HEX.match(value):
        if not named:
            return False
        if _HEX.match(value):
            return len(value) >= 20 and shannon_entropy(value) >= 3.0
        return True
    if not _HAS_LETTER(value):
        return False
    if not _HAS_DIGIT(value) and not (named and _random_letters(value)):
        return False
    return shannon_entropy(value) >= _entropy_floor(len(value), min_entropy)


def _looks_like_password(value: str) -> bool:
    if len(value) < 6 or is_placeholder(value) or _DOTTED_IDENTIFIER.match(value):
        return False
    if _ULID.match(value) or _UUID.match(value) or _WORDLIKE.fullmatch(value) or value.isdigit():
        return False
    if value.startswith(_PATH_START):
        return False
    return _classes(value) >= 2 and shannon_entropy(value) >= PASSWORD_MIN_ENTROPY


def _named_secret(value: str) -> bool:
    """The value of an ``api_key``/``access_token``-like name: machine-made, so it must look random."""
    return looks_random(value, min_length=10, named=True)


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


def _url_password(value: str) -> bool:
    return not is_placeholder(value) and value.lower() not in {"password", "pass", "secret", "pwd"}


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
    return decoded.isdigit() and 17 <= len(decoded) <= 20


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


# ---------------------------------------------------------------------------
# pattern pieces


def _wb(width: int) -> str:
    """After a ``width``-character literal: no letter, digit or identifier underscore before it.

    A Markdown emphasis run (``_tok_``, ``__tok__``) may stand before the literal, when no
    letter or digit stands before the run (``my_ghp_…`` is an identifier, not a token).
    """
    return "".join(r"(?<![A-Za-z0-9]%s[\s\S]{%d})" % ("_" * n, width) for n in range(4))


def _end(alphabet: str) -> str:
    """The right boundary of a body drawn from ``alphabet`` (a class, without '_'): no such character next,
    nor after an emphasis run (``_tok_`` ends before the ``_``)."""
    return r"(?!_{0,3}[%s])" % alphabet


_END = _end("A-Za-z0-9")
_B64URL_END = _end("A-Za-z0-9-")
_B64URL = r"[A-Za-z0-9_-]"


def _token(literal: str, body: str, end: str = _END) -> re.Pattern[str]:
    """A credential that starts with ``literal`` at a word boundary, then ``body``."""
    return re.compile(re.escape(literal) + _wb(len(literal)) + body + end)


def _rules(rule_id: str, description: str, *patterns: re.Pattern[str], **options) -> tuple[Rule, ...]:
    """One rule id for several patterns (one literal each, which is what keeps the scan fast)."""
    return tuple(Rule(rule_id, description, pattern, **options) for pattern in patterns)


# name = value, name: value, "name": "value", **Name:** value, | name | value | (a Markdown table row)
_ASSIGN = r"""["'*_]{0,3}[ \t]*(?::=|=>|\?=|=|:|\|)(?![=|])[ \t*_]{0,6}["'`]?"""
_NAME_TAIL = r"(?:[_.-][a-z0-9]{1,20}){0,6}"
_SECRET_VALUE = r"([A-Za-z0-9_+/=.~!@#$%^&*-]{10,256})"
_STRONG_KEY_PREFIX = re.compile(
    r"(?:api|access|auth|private|signing|encryption|master|secret|client|app|account|storage|shared|hmac|jwt"
    r"|webhook|consumer|license)[ _.-]?$")                                       # api_key, "API key"
_STRONG_TOKEN_PREFIX = re.compile(r"(?:auth|access|refresh|api|bearer|session|secret|personal|oauth|bot|app)[ _.-]?$")
_AFTER_A_WORD = re.compile(r"[A-Za-z0-9][ _.-]?$")
_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_NAME_SEPARATOR = re.compile(r"[_.-]")
_DESCRIPTORS = frozenset({
    "id", "name", "file", "path", "dir", "url", "uri", "endpoint", "length", "size", "type", "version", "policy",
    "expiry", "expires", "ttl", "at", "date", "hint", "header", "env", "field", "prompt", "placeholder",
})


def _names_the_secret(text: str, m: re.Match[str]) -> bool:
    """``password_file``, ``token_url``, ``secret_name``, ``api_key_id`` describe a secret: their values are not one."""
    name = _NAME.match(text, m.start()).group()
    return _NAME_SEPARATOR.split(name.lower())[-1] not in _DESCRIPTORS


def _generic_context(text: str, m: re.Match[str]) -> bool:
    """``key`` counts only as ``api_key``, ``access_key``…; ``token`` also bare; ``secret``/``credentials`` always."""
    start = m.start()
    word = text[start:start + 3].lower()
    before = text[max(0, start - 12):start].lower()
    if word == "key" and _STRONG_KEY_PREFIX.search(before) is None:
        return False
    bare = _AFTER_A_WORD.search(before) is None             # token: …, "token": …; not csrf-token, page token
    if word == "tok" and not bare and _STRONG_TOKEN_PREFIX.search(before) is None:
        return False
    return _names_the_secret(text, m)


def _curl_context(text: str, m: re.Match[str]) -> bool:
    """``-u user:pass`` is curl's basic auth only on a curl command line (``docker run -u 1000:1000`` is not)."""
    line_start = text.rfind("\n", 0, m.start()) + 1
    return "curl " in text[line_start:m.start()]


_AWS_KEY_ID = r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)" + _wb(4) + r"[A-Z2-7]{16}"


# ---------------------------------------------------------------------------
# rules — order is priority: where two rules overlap, the earlier one wins

RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        "PEM private key block (RSA, EC, DSA, OpenSSH, PGP, PKCS#8, encrypted)",
        re.compile(
            r"-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:(?:[^-]|-(?!----BEGIN)){0,20000}?-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
            # no END line (pasted truncated): the header and base64 lines that follow, and nothing after them
            # (RFC 1421 shape: header lines, one blank line after them, then base64 lines)
            r"|(?:(?:\r?\n[ \t>]*[A-Za-z-]{1,40}:[ \t][^\n]{0,200})+(?:\r?\n[ \t>]*(?=\r?\n))?)?"
            r"(?:\r?\n[ \t>]*[A-Za-z0-9+/=]{4,}(?=[ \t]*(?:\r?\n|$|\{#)))*)"
        ),
    ),
    # --- cloud providers
    Rule(
        "aws-access-key",
        "AWS access key id (AKIA…, ASIA…, ABIA…, ACCA…, A3T…)",
        re.compile(_AWS_KEY_ID + _END),
    ),
    Rule(
        "aws-secret-key",
        "AWS secret access key: 40 base64 characters assigned to an aws…secret… name",
        re.compile(r"aws(?<![a-z0-9]aws)[\w .-]{0,24}?(?:secret|private)[\w .-]{0,24}?" + _ASSIGN
                   + r"([a-z0-9/+]{40})(?![a-z0-9/+=])"),
        group=1,
        validate=lambda v: shannon_entropy(v) >= GENERIC_MIN_ENTROPY,
        lower=True,
    ),
    Rule(
        "aws-secret-key",
        "AWS secret access key written beside its access key id (same line or the next)",
        re.compile(_AWS_KEY_ID + r"(?![A-Za-z0-9])[^\n]{0,80}?(?:\n[^\n]{0,80}?)??"
                   r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        group=1,
        validate=_aws_secret_near_key_id,
    ),
    *_rules(
        "azure-connection-string-key",
        "the key in an Azure connection string: a storage account's AccountKey=… or a Service Bus, "
        "Event Hubs or IoT Hub SharedAccessKey=…",
        re.compile(r"accountkey[ \t]*=[ \t]*([a-z0-9+/]{86}==)"),
        re.compile(r"sharedaccesskey[ \t]*=[ \t]*([a-z0-9+/]{43}=)"),
        group=1,
        lower=True,
    ),
    Rule(
        "azure-sas-signature",
        "the signature (sig=…) of an Azure shared access signature URL or token",
        re.compile(r"sig=(?<=[?&;]sig=)([A-Za-z0-9%+/]{43,80}={0,1})"),
        group=1,
        validate=_sas_signature,
    ),
    Rule(
        "azure-ad-client-secret",
        "Azure AD (Entra ID) application client secret (…8Q~…)",
        re.compile(r"Q~[A-Za-z0-9_~.-]{31,34}" + _end("A-Za-z0-9~.-")),
        validate=_azure_ad_secret,
        lead=Lead(frozenset(string.ascii_letters + string.digits + "_~."), 4, 4),
    ),
    Rule(
        "google-api-key",
        "Google API key (AIza…)",
        _token("AIza", r"[0-9A-Za-z_-]{35}", _B64URL_END),
    ),
    Rule(
        "google-oauth-secret",
        "Google OAuth client secret (GOCSPX-…)",
        _token("GOCSPX-", r"[0-9A-Za-z_-]{28}", _B64URL_END),
    ),
    Rule(
        "digitalocean-token",
        "DigitalOcean personal access, OAuth and refresh tokens (dop_v1_, doo_v1_, dor_v1_)",
        _token("do", r"[opr]_v1_[a-f0-9]{64}"),
    ),
    Rule(
        "heroku-api-key",
        "Heroku API key (HRKU-AA…)",
        _token("HRKU-AA", r"[0-9A-Za-z_-]{58}", _B64URL_END),
    ),
    *_rules(
        "hashicorp-vault-token",
        "HashiCorp Vault service, batch and recovery tokens (hvs., hvb., hvr.) and legacy service tokens (s.…)",
        _token("hv", r"[sbr]\.[A-Za-z0-9_-]{24,300}", _B64URL_END),
        _token("s.", r"[A-Za-z0-9]{24}"),
        validate=lambda v: looks_random(v.split(".", 1)[1], min_length=24),
    ),
    Rule(
        "terraform-cloud-token",
        "HashiCorp Terraform Cloud / Enterprise API token (….atlasv1.…)",
        re.compile(r"\.atlasv1\.[A-Za-z0-9_=-]{60,70}" + _end("A-Za-z0-9=-")),
        lead=Lead(_ALNUM, 14, 14),
    ),
    Rule(
        "databricks-token",
        "Databricks personal access token (dapi…)",
        _token("dapi", r"[a-f0-9]{32}(?:-[0-9])?"),
        validate=_random_hex,
    ),
    Rule(
        "planetscale-token",
        "PlanetScale API, OAuth tokens and passwords (pscale_tkn_, pscale_oauth_, pscale_pw_)",
        _token("pscale_", r"(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}", _end("A-Za-z0-9=.-")),
    ),
    # --- code hosting, CI, package registries
    Rule(
        "github-token",
        "GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens (ghp_, gho_, ghu_, ghs_, ghr_)",
        _token("gh", r"[pousr]_[A-Za-z0-9]{36,251}"),
    ),
    Rule(
        "github-fine-grained-pat",
        "GitHub fine-grained personal access token (github_pat_…)",
        _token("github_pat_", r"[A-Za-z0-9_]{40,255}"),
    ),
    Rule(
        "gitlab-token",
        "GitLab tokens (glpat-, gldt-, glrt-, glptt-, glcbt-, gloas-, glft-, glimt-, glsoat-, glffct-, glagent-)",
        _token("gl", r"(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat|ffct|agent)-[A-Za-z0-9_-]{20,255}"
                     r"(?:\.[A-Za-z0-9_.-]{0,255}[A-Za-z0-9_-])?", ""),
    ),
    Rule(
        "gitlab-runner-registration",
        "GitLab runner registration token (GR1348941…)",
        _token("GR1348941", r"[A-Za-z0-9_-]{20}"),
    ),
    Rule(
        "npm-token",
        "npm access token (npm_…)",
        _token("npm_", r"[A-Za-z0-9]{36}"),
        validate=lambda v: looks_random(v[4:], min_length=20),
    ),
    Rule(
        "pypi-token",
        "PyPI upload token (pypi-AgEIcHlwaS5vcmc…)",
        _token("pypi-AgEIcHlwaS5vcmc", r"[A-Za-z0-9_-]{50,1024}", ""),
    ),
    Rule(
        "pulumi-token",
        "Pulumi access token (pul-…)",
        _token("pul-", r"[a-f0-9]{40}"),
    ),
    Rule(
        "doppler-token",
        "Doppler personal, service, service-account, CLI, SCIM and audit tokens (dp.pt., dp.st., …)",
        _token("dp.", r"(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{2,40}\.)?[A-Za-z0-9]{40,44}"),   # dp.st.prd.…
    ),
    # --- chat and messaging
    Rule(
        "slack-webhook",
        "Slack incoming-webhook / workflow URL",
        re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,255}"),
    ),
    Rule(
        "slack-token",
        "Slack bot, user, app, config and refresh tokens (xoxb-, xoxp-, xoxa-, xoxe-, xoxr-, xoxs-, xapp-)",
        re.compile(r"(?:xox[abposre]|xapp)" + _wb(4) + r"(?:\.[a-z0-9]{1,20})?-[0-9A-Za-z-]{10,255}[0-9A-Za-z]"),
        validate=lambda v: bool(_HAS_DIGIT(v)) and not is_placeholder(v),
    ),
    Rule(
        "discord-webhook",
        "Discord webhook URL (discord.com/api/webhooks/ID/TOKEN)",
        re.compile(r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,68}" + _B64URL_END),
    ),
    Rule(
        "discord-bot-token",
        "Discord bot token (base64 user id . timestamp . HMAC)",
        re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}" + _B64URL_END),
        validate=_discord_bot_token,
        lead=Lead(_ALNUM, 23, 27),          # base64 of digits never holds '-' or '_'
    ),
    Rule(
        "telegram-bot-token",
        "Telegram bot token (numeric bot id:AA…)",
        re.compile(r":AA[A-Za-z0-9_-]{33}" + _B64URL_END),
        lead=Lead(frozenset(string.digits), 5, 16, glued=("bot",)),
    ),
    *_rules(
        "twilio-key",
        "Twilio account SID and API key SID (AC… / SK… + 32 hex)",
        _token("AC", r"[0-9a-fA-F]{32}"),
        _token("SK", r"[0-9a-fA-F]{32}"),
        validate=_random_hex,
    ),
    Rule(
        "sendgrid-api-key",
        "SendGrid API key (SG.xxx.yyy)",
        _token("SG.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", _B64URL_END),
    ),
    Rule(
        "mailchimp-api-key",
        "Mailchimp API key (32 hex -usNN)",
        re.compile(r"-us[0-9]{1,2}" + _END),
        lead=Lead(_HEX_CHARS, 32, 32),
    ),
    # --- payments and commerce
    *_rules(
        "stripe-key",
        "Stripe secret / restricted keys (sk_live_, sk_test_, rk_live_, rk_test_)",
        _token("sk_", r"(?:live|test|prod)_[A-Za-z0-9]{10,247}"),
        _token("rk_", r"(?:live|test|prod)_[A-Za-z0-9]{10,247}"),
    ),
    Rule(
        "stripe-webhook-secret",
        "Stripe webhook signing secret (whsec_…)",
        _token("whsec_", r"[A-Za-z0-9+/=]{24,255}", ""),
    ),
    Rule(
        "shopify-token",
        "Shopify access, custom-app, private-app tokens and shared secrets (shpat_, shpca_, shppa_, shpss_)",
        _token("shp", r"(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
    ),
    # --- AI providers
    Rule(
        "anthropic-api-key",
        "Anthropic API and admin keys (sk-ant-…)",
        _token("sk-ant-", r"(?:api|admin|sid)?\d{0,2}-?" + _B64URL + r"{32,512}", ""),
    ),
    Rule(
        "openai-api-key",
        "OpenAI-style secret keys (sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…) with a random body",
        _token("sk-", _B64URL + r"{20,512}", ""),
        validate=_openai_like,
    ),
    Rule(
        "huggingface-token",
        "Hugging Face access token (hf_…)",
        _token("hf_", r"[A-Za-z]{34}"),
        validate=lambda v: _random_letters(v[3:]),
    ),
    # --- other services
    Rule(
        "fastpad-token",
        "Fastpad API token (fpk_live_…, fpk_test_…)",
        _token("fpk_", r"(?:live|test)_[0-9A-Za-z]{20,64}"),
    ),
    Rule(
        "linear-api-key",
        "Linear API key (lin_api_…)",
        _token("lin_api_", r"[A-Za-z0-9]{40}"),
    ),
    *_rules(
        "notion-token",
        "Notion integration tokens (ntn_…, secret_…)",
        _token("ntn_", r"[0-9]{11}[A-Za-z0-9]{35}"),
        _token("secret_", r"[A-Za-z0-9]{43}"),
        validate=lambda v: looks_random(v, min_length=40),
    ),
    Rule(
        "sentry-token",
        "Sentry user and organization auth tokens (sntryu_…, sntrys_…)",
        _token("sntry", r"(?:u_[a-f0-9]{64}|s_eyJ[A-Za-z0-9+/=_]{40,600})", _end("A-Za-z0-9+/=")),
    ),
    Rule(
        "grafana-token",
        "Grafana Cloud API token and service-account token (glc_…, glsa_…)",
        _token("gl", r"(?:c_[A-Za-z0-9+/]{32,400}={0,3}|sa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})", _end("A-Za-z0-9+/=")),
    ),

    Rule(
        "jwt",
        "JSON Web Token (three base64url parts, the first two JSON objects)",
        _token("eyJ", _B64URL + r"{10,8192}\.eyJ" + _B64URL + r"{10,8192}\.(?:" + _B64URL + r"{10,8192})?", ""),
    ),
    # --- credentials known by where they sit
    Rule(
        "url-password",
        "password in a URL's userinfo (scheme://user:password@host, also scheme://:password@host)",
        re.compile(r"://(?<=[A-Za-z0-9+.-]://)[^\s:/?#@\[\]]{0,128}:([^\s/?#]{1,256})@(?=[^\s@/?#]*[A-Za-z0-9])"),
        group=1,
        validate=_url_password,
    ),
    Rule(
        "curl-user-password",
        "the password in curl's basic-auth option (curl -u user:password, --user user:password)",
        re.compile(r"-(?:u|-user)(?:[ \t]+|=)[\"']?[^\s:\"']{1,64}:([^\s\"']{3,128})"),
        group=1,
        validate=_url_password,
        context=_curl_context,
    ),
    Rule(
        "authorization-header",
        "credential in an Authorization header (Bearer, Token, Basic)",
        re.compile(r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|token|basic)[ \t]+([a-z0-9._~+/=-]{8,8192})"),
        group=1,
        validate=_bearer_value,
        lower=True,
    ),
    Rule(
        "bearer-token",
        "a token after the word Bearer (e.g. a header written without its name)",
        re.compile(r"bearer(?<![a-z0-9_]bearer)[ \t]+([a-z0-9._~+/-]{20,8192}={0,3})"),
        group=1,
        validate=lambda v: looks_random(v.rstrip("="), min_length=20, named=True),
        lower=True,
    ),
    Rule(
        "generic-password",
        "a password/passwd/pwd/passphrase assignment (or 'the password is …') whose value looks like a password "
        "(see PASSWORD_MIN_ENTROPY)",
        re.compile(r"(?:passw(?:or)?d|pwd|passphrase)" + _NAME_TAIL + r"(?:" + _ASSIGN + r"|[ \t]+is[ \t]+[\"'`]?)"
                   r"([^\s\"'`,;()\[\]{}<>]{6,128})"),
        group=1,
        validate=_looks_like_password,
        lower=True,
        context=_names_the_secret,
    ),
    *(
        Rule(
            "generic-secret",
            "an assignment to a secret-looking name (…secret…, api_key, access_key, private_key, client_secret, "
            "a bare token, auth/access/refresh/session/api token, credentials…) whose value is random "
            "(see GENERIC_MIN_ENTROPY)",
            re.compile(keyword + _NAME_TAIL + _ASSIGN + _SECRET_VALUE),
            group=1,
            validate=validate,
            context=_generic_context,
            lower=True,
        )
        # one pattern per keyword: each starts with a literal, which is what keeps the scan fast
        for keyword, validate in (("secret", _chosen_secret), ("key", _named_secret), ("token", _named_secret),
                                  ("credentials?", _chosen_secret))
    ),
    Rule(
        "generic-token",
        "an assignment to another *token name whose value is random and not an identifier "
        "(page_token = <ULID> is a cursor, not a secret)",
        re.compile(r"token" + _NAME_TAIL + _ASSIGN + _SECRET_VALUE),
        group=1,
        validate=looks_random,
        context=_names_the_secret,
        lower=True,
    ),
)

RULE_IDS: tuple[str, ...] = tuple(dict.fromkeys(rule.id for rule in RULES))


def describe_rules() -> list[dict[str, str]]:
    """The rule catalogue (id and description), for docs and the capabilities tool."""
    described = {rule.id: rule.description for rule in reversed(RULES)}
    return [{"id": rule_id, "description": described[rule_id]} for rule_id in RULE_IDS]
