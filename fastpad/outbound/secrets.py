"""Deterministic secret detection and masking for everything that leaves the machine.

Rules in the style of gitleaks: a regular expression per kind of credential, a
few with a cheap validator (Shannon entropy, "looks random", not a
placeholder). Never a model: the same text always gives the same matches.

Masking happens on the way out only. :func:`redact` is a pure function of the
text and a server key; the note itself is never edited. Each secret becomes a
visible placeholder ``[redacted:RULE:FINGERPRINT]``, so a false positive is
something a person can see and ask to expand (:func:`locate` finds the original
span again from the fingerprint), never silent loss.

The fingerprint is ``HMAC-SHA256(key, rule_id + "\\0" + secret)`` truncated to
:data:`FINGERPRINT_HEX` hex digits: stable across calls and notes (the same key
pasted twice shows the same suffix), useless to someone without the server key
(no offline guessing of short passwords), and short enough to read aloud.

Spans: most rules mask the whole credential; rules that key on a name
(``password=``, ``Authorization: Bearer``, ``aws_secret_access_key =``, a URL's
``user:password@``) mask the value only, so the context stays readable:
``password=[redacted:generic-password:1a2b3c]``. Where two rules claim
overlapping text, the one listed first in :data:`RULES` wins (specific before
generic), so results never overlap.

Entropy: :func:`shannon_entropy` is bits per character over the value's own
character distribution. A generic assignment (``api_key = …``,
``client_secret: …``, ``access_token=…``, ``credentials: …``) is a secret when
its value is at least 16 characters, mixes letters and digits and has at least
:data:`GENERIC_MIN_ENTROPY` = 3.5 bits/char (gitleaks' own threshold; random
base62 of that length scores ~3.8–4.0, words and code identifiers below). A
bare ``key``/``token`` name counts only with a credential-ish prefix
(``api_``, ``access_``, ``auth_``, ``secret_``, ``session_``…); any other
``*token`` name (``page_token``, ``csrf_token``) goes to ``generic-token``,
where ULIDs, UUIDs and hex digests are identifiers, not secrets — under a
strong name they *are* the credential (hex then needs 20+ characters and 3.0
bits/char, its alphabet capping entropy at 4). A
``password``/``passwd``/``pwd``/``passphrase`` assignment is held to a lower
bar because passwords are short: at least 8 characters, three of the four
classes (lower, upper, digit, symbol) and :data:`PASSWORD_MIN_ENTROPY` = 3.0
bits/char. Placeholders (``<token>``, ``${API_KEY}``, ``YOUR_API_KEY``,
``xxxx``, ``****``, ``…``, anything saying ``example``/``changeme``) and dotted
code paths (``request.form``, ``settings.SECRET_KEY``) never count.

A placeholder typed into a note by hand is just text: it is never re-detected
(masking is idempotent) and :func:`locate` finds nothing behind it.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import hmac
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable

FINGERPRINT_HEX = 6
GENERIC_MIN_ENTROPY = 3.5
PASSWORD_MIN_ENTROPY = 3.0
PLACEHOLDER_FORMAT = "[redacted:{rule}:{fingerprint}]"
PLACEHOLDER_RE = re.compile(r"\[redacted:([a-z0-9-]+):([0-9a-f]{%d})\]" % FINGERPRINT_HEX)

_END = r"(?![A-Za-z0-9_])"


@dataclass(frozen=True)
class SecretMatch:
    """One detected secret: ``text[start:end]`` is the part that gets masked."""

    rule_id: str
    start: int
    end: int


@dataclass(frozen=True)
class Redaction(SecretMatch):
    """A match as it was masked: the fingerprint and the placeholder that replaced it."""

    fingerprint: str = ""
    placeholder: str = ""


@dataclass(frozen=True)
class RedactionResult:
    """The masked text; ``matches`` carry offsets into the *original* text."""

    text: str
    matches: tuple[Redaction, ...]

    @property
    def redacted(self) -> bool:
        return bool(self.matches)


@dataclass(frozen=True, eq=False)
class Rule:
    id: str
    description: str
    pattern: re.Pattern[str]
    group: int = 0                     # which group is the secret (0: the whole match)
    validate: Callable[[str], bool] | None = None              # on the secret's original text
    lower: bool = False                # the pattern is lower-case and runs on the lower-cased text
    context: Callable[[str, int], bool] | None = None          # (text, match start) -> keep?

    @functools.cached_property
    def ignorecase(self) -> re.Pattern[str]:
        """The same pattern for the original text, when lower-casing changed the text's length."""
        return re.compile(self.pattern.pattern, self.pattern.flags | re.IGNORECASE)


# ---------------------------------------------------------------------------
# validators


def shannon_entropy(value: str) -> float:
    """Bits per character of ``value`` over its own character distribution."""
    if not value:
        return 0.0
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


_ENV_NAME = re.compile(r"[A-Z][A-Z_]*")          # YOUR_API_KEY, API_TOKEN: an env-var name, no digits
_FILLER = re.compile(r"[xX*#._-]{3,}")          # xxxx, ****, ...
_YOUR_SECRET = re.compile(r"your[_-]?(?:api[_-]?)?(?:key|token|secret|password)").search
_PLACEHOLDER_WORDS = ("example", "placeholder", "changeme", "redacted")
_TEMPLATE_START = ("$", "<", "{", "%", "[", "(")
_DOTTED_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")
_ULID = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")


def is_placeholder(value: str) -> bool:
    """Template or example text standing where a secret would go."""
    if not value or value.startswith(_TEMPLATE_START) or "..." in value or "\u2026" in value:
        return True
    if _ENV_NAME.fullmatch(value) or _FILLER.fullmatch(value):
        return True
    lowered = value.lower()
    return any(word in lowered for word in _PLACEHOLDER_WORDS) or _YOUR_SECRET(lowered) is not None


_HAS_DIGIT = re.compile(r"\d").search
_HAS_LETTER = re.compile(r"[^\W\d_]").search
_HAS_LOWER = re.compile(r"[a-z]").search
_HAS_UPPER = re.compile(r"[A-Z]").search
_HAS_SYMBOL = re.compile(r"[^A-Za-z0-9]").search


def _classes(value: str) -> int:
    """How many of lower, upper, digit and symbol ``value`` uses (ASCII letters; others count as symbols)."""
    return sum(1 for has in (_HAS_LOWER, _HAS_UPPER, _HAS_DIGIT, _HAS_SYMBOL) if has(value))


def looks_random(
    value: str, *, min_length: int = 16, min_entropy: float = GENERIC_MIN_ENTROPY, identifiers: bool = False
) -> bool:
    """A token-like value: long enough, letters and digits, high entropy, not an identifier.

    ULIDs, UUIDs and hex digests (git SHAs) are identifiers, not secrets, unless
    ``identifiers`` is true (the value sits under a name like ``api_key``, where
    a hex or UUID value *is* the credential); hex is then held to 3.0 bits/char,
    since its alphabet caps entropy at 4.
    """
    if len(value) < min_length or is_placeholder(value) or _DOTTED_IDENTIFIER.match(value):
        return False
    if not (_HAS_LETTER(value) and _HAS_DIGIT(value)):
        return False
    if _ULID.match(value) or _UUID.match(value) or _HEX.match(value):
        if not identifiers:
            return False
        if _HEX.match(value):
            return len(value) >= 20 and shannon_entropy(value) >= 3.0
        return True
    return shannon_entropy(value) >= min_entropy


def _looks_like_password(value: str) -> bool:
    if len(value) < 8 or is_placeholder(value) or _DOTTED_IDENTIFIER.match(value):
        return False
    if _ULID.match(value) or _UUID.match(value):
        return False
    return _classes(value) >= 3 and shannon_entropy(value) >= PASSWORD_MIN_ENTROPY


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
    if is_placeholder(value):
        return False
    return len(value) >= 12 and bool(_HAS_DIGIT(value)) and shannon_entropy(value) >= 3.0


def _url_password(value: str) -> bool:
    return not is_placeholder(value) and value.lower() not in {"password", "pass", "secret", "pwd"}


# ---------------------------------------------------------------------------
# rules — order is priority: where two rules overlap, the earlier one wins
#
# Speed: every pattern starts with a literal, so the regex engine can jump from
# one occurrence of it to the next instead of trying every position (~0.5 ms
# per rule per MB; a leading look-behind or an alternation of words costs
# 10–20 times that). The left word boundary is a look-behind placed *after*
# that literal (``_wb(n)`` checks the character n positions back). Rules marked
# ``lower`` are written in lower case and run on the lower-cased text (same
# offsets; see ``_candidates``), several times faster than ``re.IGNORECASE``.
# Every repetition is bounded, so the work stays linear on hostile input.


def _wb(width: int) -> str:
    """After a ``width``-character literal: the character before it is not a word character."""
    return r"(?<![A-Za-z0-9_][\s\S]{%d})" % width


_B64URL = r"[A-Za-z0-9_-]"
_ASSIGN = r"""["']?[ \t]*(?::=|=>|\?=|=|:)(?!=)[ \t]*["'`]?"""
_SECRET_VALUE = r"([A-Za-z0-9_+/=.~!@#$%^&*-]{16,256})"
_STRONG_KEY_PREFIX = re.compile(r"(?:api|access|auth|private|signing|encryption|master|secret|client|app)[_.-]?$")
_STRONG_TOKEN_PREFIX = re.compile(r"(?:auth|access|refresh|api|bearer|session|secret|personal|oauth|bot|app)[_.-]?$")


def _generic_context(text: str, start: int) -> bool:
    """``key`` and ``token`` count only as ``api_key``, ``access_token``…; ``secret``/``credentials`` always."""
    word = text[start:start + 3].lower()
    before = text[max(0, start - 12):start].lower()
    if word == "key":
        return _STRONG_KEY_PREFIX.search(before) is not None
    if word == "tok":
        return _STRONG_TOKEN_PREFIX.search(before) is not None
    return True


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
    Rule(
        "aws-access-key",
        "AWS access key id (AKIA…, ASIA…, ABIA…, ACCA…, A3T…)",
        re.compile(r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)" + _wb(4) + r"[A-Z2-7]{16}" + _END),
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
        "github-token",
        "GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens (ghp_, gho_, ghu_, ghs_, ghr_)",
        re.compile(r"gh[pousr]_" + _wb(4) + r"[A-Za-z0-9]{36,251}" + _END),
    ),
    Rule(
        "github-fine-grained-pat",
        "GitHub fine-grained personal access token (github_pat_…)",
        re.compile(r"github_pat_" + _wb(11) + r"[A-Za-z0-9_]{40,255}" + _END),
    ),
    Rule(
        "gitlab-token",
        "GitLab tokens (glpat-, gldt-, glrt-, glptt-, glcbt-, gloas-, glft-, glimt-, glsoat-, glffct-, glagent-)",
        re.compile(r"gl" + _wb(2) + r"(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat|ffct|agent)-[A-Za-z0-9_-]{20,255}(?:\.[A-Za-z0-9_.-]{0,255}[A-Za-z0-9_-])?"),
    ),
    Rule(
        "gitlab-runner-registration",
        "GitLab runner registration token (GR1348941…)",
        re.compile(r"GR1348941" + _wb(9) + r"[A-Za-z0-9_-]{20}" + _END),
    ),
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
        "stripe-key",
        "Stripe secret / restricted keys (sk_live_, sk_test_, rk_live_, rk_test_)",
        re.compile(r"(?:sk|rk)_" + _wb(3) + r"(?:live|test|prod)_[A-Za-z0-9]{10,247}" + _END),
    ),
    Rule(
        "stripe-webhook-secret",
        "Stripe webhook signing secret (whsec_…)",
        re.compile(r"whsec_" + _wb(6) + r"[A-Za-z0-9+/=]{24,255}"),
    ),
    Rule(
        "google-api-key",
        "Google API key (AIza…)",
        re.compile(r"AIza" + _wb(4) + r"[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    ),
    Rule(
        "google-oauth-secret",
        "Google OAuth client secret (GOCSPX-…)",
        re.compile(r"GOCSPX-" + _wb(7) + r"[0-9A-Za-z_-]{28}(?![0-9A-Za-z_-])"),
    ),
    Rule(
        "anthropic-api-key",
        "Anthropic API and admin keys (sk-ant-…)",
        re.compile(r"sk-ant-" + _wb(7) + r"(?:api|admin|sid)?\d{0,2}-?" + _B64URL + r"{32,512}"),
    ),
    Rule(
        "openai-api-key",
        "OpenAI-style secret keys (sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…) with a random body",
        re.compile(r"sk-" + _wb(3) + _B64URL + r"{20,512}"),
        validate=_openai_like,
    ),
    Rule(
        "fastpad-token",
        "Fastpad API token (fpk_live_…, fpk_test_…)",
        re.compile(r"fpk_" + _wb(4) + r"(?:live|test)_[0-9A-Za-z]{20,64}" + _END),
    ),
    Rule(
        "npm-token",
        "npm access token (npm_…)",
        re.compile(r"npm_" + _wb(4) + r"[A-Za-z0-9]{36}" + _END),
        validate=lambda v: looks_random(v[4:], min_length=20),
    ),
    Rule(
        "pypi-token",
        "PyPI upload token (pypi-AgEIcHlwaS5vcmc…)",
        re.compile(r"pypi-AgEIcHlwaS5vcmc" + _wb(20) + r"[A-Za-z0-9_-]{50,1024}"),
    ),
    Rule(
        "sendgrid-api-key",
        "SendGrid API key (SG.xxx.yyy)",
        re.compile(r"SG\." + _wb(3) + r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"),
    ),
    Rule(
        "jwt",
        "JSON Web Token (three base64url parts, the first two JSON objects)",
        re.compile(r"eyJ" + _wb(3) + _B64URL + r"{10,8192}\.eyJ" + _B64URL + r"{10,8192}\.(?:" + _B64URL + r"{10,8192})?"),
    ),
    Rule(
        "url-password",
        "password in a URL's userinfo (scheme://user:password@host)",
        re.compile(r"://(?<=[A-Za-z0-9+.-]://)[^\s:/?#@\[\]]{1,128}:([^\s/?#]{1,256})@(?=[^\s@/?#]*[A-Za-z0-9])"),
        group=1,
        validate=_url_password,
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
        validate=lambda v: looks_random(v.rstrip("="), min_length=20),
        lower=True,
    ),
    Rule(
        "generic-password",
        "a password/passwd/pwd/passphrase assignment whose value looks like a password (see PASSWORD_MIN_ENTROPY)",
        re.compile(r"(?:passw(?:or)?d|pwd|passphrase)(?:[_.-][a-z0-9]{1,20}){0,6}" + _ASSIGN + r"([^\s\"'`,;()\[\]{}<>]{8,128})"),
        group=1,
        validate=_looks_like_password,
        lower=True,
    ),
    *(
        Rule(
            "generic-secret",
            "an assignment to a secret-looking name (…secret…, api_key, access_key, private_key, client_secret, "
            "auth/access/refresh/session/api token, credentials…) whose value is random (see GENERIC_MIN_ENTROPY)",
            re.compile(keyword + r"(?:[_.-][a-z0-9]{1,20}){0,6}" + _ASSIGN + _SECRET_VALUE),
            group=1,
            validate=lambda v: looks_random(v, identifiers=True),
            context=_generic_context,
            lower=True,
        )
        # one pattern per keyword: each starts with a literal, which is what keeps the scan fast
        for keyword in ("secret", "key", "token", "credentials?")
    ),
    Rule(
        "generic-token",
        "an assignment to another *token name whose value is random and not an identifier "
        "(page_token = <ULID> is a cursor, not a secret)",
        re.compile(r"token(?:[_.-][a-z0-9]{1,20}){0,6}" + _ASSIGN + _SECRET_VALUE),
        group=1,
        validate=looks_random,
        lower=True,
    ),
)

RULE_IDS: tuple[str, ...] = tuple(dict.fromkeys(rule.id for rule in RULES))


# ---------------------------------------------------------------------------
# detection


_TRAILING = " \t\r\n"
_TRAILING_PROSE = _TRAILING + ".,"


def _trim(rule: Rule, text: str, start: int, end: int) -> int:
    """The end after dropping whitespace and, for greedy rules, sentence punctuation (``…token.``)."""
    strip = _TRAILING_PROSE if rule.id.startswith(("generic", "gitlab")) else _TRAILING
    while end > start and text[end - 1] in strip:
        end -= 1
    return end


def _candidates(text: str, rules: Iterable[Rule]) -> list[tuple[int, SecretMatch]]:
    lowered = text.lower()
    # Lower-casing maps each character to one or more; equal lengths mean offsets line up exactly.
    aligned = len(lowered) == len(text)
    found: list[tuple[int, SecretMatch]] = []
    for priority, rule in enumerate(rules):
        if rule.lower:
            pattern, subject = (rule.pattern, lowered) if aligned else (rule.ignorecase, text)
        else:
            pattern, subject = rule.pattern, text
        position = 0
        while (m := pattern.search(subject, position)) is not None:
            start, end = m.span(rule.group)
            value = text[start:_trim(rule, text, start, end)] if end > start else ""
            if (
                not value
                or (rule.context is not None and not rule.context(text, m.start()))
                or (rule.validate is not None and not rule.validate(value))
            ):
                # A rejected name = value must not hide a name that starts inside it (key_secret = …);
                # a rejected token is skipped whole, which keeps adversarial input linear.
                position = m.start() + 1 if rule.lower else max(m.end(), m.start() + 1)
                continue
            found.append((priority, SecretMatch(rule.id, start, start + len(value))))
            position = max(m.end(), m.start() + 1)
    return found


def find_secrets(text: str) -> list[SecretMatch]:
    """Every secret in ``text``, non-overlapping, in text order.

    Where two rules claim overlapping spans, the rule listed first in
    :data:`RULES` wins (specific rules come before the generic ones).
    """
    accepted: list[SecretMatch] = []     # kept sorted by start; never overlapping
    starts: list[int] = []
    for _, match in sorted(_candidates(text, RULES), key=lambda c: (c[0], c[1].start, -c[1].end)):
        at = bisect.bisect_right(starts, match.start)
        if at > 0 and accepted[at - 1].end > match.start:
            continue
        if at < len(accepted) and accepted[at].start < match.end:
            continue
        accepted.insert(at, match)
        starts.insert(at, match.start)
    return accepted


def fingerprint(secret_key: bytes, rule_id: str, value: str) -> str:
    """The stable keyed short id of one secret value (see the module docstring)."""
    if not secret_key:
        raise ValueError("a non-empty server secret key is required to fingerprint redactions")
    digest = hmac.new(secret_key, f"{rule_id}\0{value}".encode("utf-8"), hashlib.sha256).hexdigest()
    return digest[:FINGERPRINT_HEX]


def placeholder(rule_id: str, fp: str) -> str:
    return PLACEHOLDER_FORMAT.format(rule=rule_id, fingerprint=fp)


def redact(text: str, secret_key: bytes) -> RedactionResult:
    """``text`` with every secret replaced by ``[redacted:RULE:FINGERPRINT]``.

    Pure: the input is not modified and the same input and key always give the
    same output. ``matches`` give the spans in the original text.
    """
    if not secret_key:
        raise ValueError("a non-empty server secret key is required to fingerprint redactions")
    matches = find_secrets(text)
    if not matches:
        return RedactionResult(text, ())
    parts: list[str] = []
    done: list[Redaction] = []
    position = 0
    for m in matches:
        fp = fingerprint(secret_key, m.rule_id, text[m.start:m.end])
        mask = placeholder(m.rule_id, fp)
        parts.append(text[position:m.start])
        parts.append(mask)
        done.append(Redaction(m.rule_id, m.start, m.end, fp, mask))
        position = m.end
    parts.append(text[position:])
    return RedactionResult("".join(parts), tuple(done))


def locate(text: str, secret_key: bytes, rule_id: str, fp: str) -> list[SecretMatch]:
    """The spans of ``text`` a placeholder ``[redacted:rule_id:fp]`` stood for.

    This is how a person's "expand" request is answered (after checking that
    the person may read the note): re-detect in the stored text and compare
    fingerprints. A placeholder typed into a note by hand finds nothing.
    """
    return [
        m for m in find_secrets(text)
        if m.rule_id == rule_id and hmac.compare_digest(fingerprint(secret_key, m.rule_id, text[m.start:m.end]), fp)
    ]


def describe_rules() -> list[dict[str, str]]:
    """The rule catalogue (id and description), for docs and the capabilities tool."""
    described = {rule.id: rule.description for rule in reversed(RULES)}
    return [{"id": rule_id, "description": described[rule_id]} for rule_id in RULE_IDS]
