"""How a rule is written: :class:`Rule`, :class:`Lead`, and the regular-expression pieces rules share.

Speed and boundaries are described in :mod:`fastpad.outbound.secret_rules`; the
pieces here are what implements them (word boundaries as look-behinds after a
literal, emphasis-aware ends, the ``name = value`` assignment shapes, and the
context checks of a name that *describes* a secret rather than holding one).
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass
from typing import Callable

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
# A quoted literal: name = "value", name: 'value', name := "value", name = @"value", and the
# directive form of nginx/BIND-like configs, name "value"; -- the value is everything inside the quotes.
_QUOTED_LITERAL = (r"""["'*_]{0,3}[ \t]*(?:(?::=|=>|\?=|=|:)(?![=|])[ \t]*@?["']|["'](?=[^"'\s]{8,256}["'];))"""
                   r"""([^"'\s]{8,256})(?=["'])""")
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


def _service_names_the_secret(text: str, m: re.Match[str]) -> bool:
    """Like :func:`_names_the_secret`, except that a service's access id (``SUMO_ACCESS_ID``,
    ``sumologic.accessId``) is the public half of its key pair, masked like AWS's key id."""
    parts = _NAME_SEPARATOR.split(_NAME.match(text, m.start()).group().lower())
    if parts[-1] == "id" and len(parts) > 1 and parts[-2].endswith("access"):
        return True
    return parts[-1] not in _DESCRIPTORS


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
    # a command continued over lines ("\" at the end of each) is one command line
    while line_start > 1 and text[:line_start - 1].rstrip(" \t").endswith("\\"):
        line_start = text.rfind("\n", 0, line_start - 1) + 1
    return "curl " in text[line_start:m.start()]


_AWS_KEY_ID = r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)" + _wb(4) + r"[A-Z2-7]{16}"
