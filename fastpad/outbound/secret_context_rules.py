"""Credentials known by where they sit: URL userinfo, curl's -u, Authorization headers, ``name = value``.

The second half of the catalogue (:data:`fastpad.outbound.secret_rules.RULES`
lists the vendor shapes first, then these): rules that key on a name or a
position and mask the value only, so the context stays readable.
"""

from __future__ import annotations

import re

from fastpad.outbound.secret_checks import (  # noqa: F401 - the catalogue's vocabulary, shared inside the package
    _bearer_value,
    _chosen_secret,
    GENERIC_MIN_ENTROPY,
    _looks_like_password,
    looks_random,
    _named_secret,
    _quoted_literal,
    _service_key,
    PASSWORD_MIN_ENTROPY,
    _url_password,
)
from fastpad.outbound.secret_patterns import (  # noqa: F401 - the catalogue's vocabulary, shared inside the package
    _ASSIGN,
    _curl_context,
    _generic_context,
    _NAME_TAIL,
    _QUOTED_LITERAL,
    _names_the_secret,
    _service_names_the_secret,
    Rule,
    _SECRET_VALUE,
)

CONTEXT_RULES: tuple[Rule, ...] = (
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
        "credential in an Authorization header (Bearer, Token, Api-Token, Basic, or no scheme)",
        re.compile(r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:bearer|token|api-token|basic)[ \t]+)?"
                   r"([a-z0-9._~+/=-]{8,8192})"),
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
    *(
        Rule(
            "service-credential",
            "a random value assigned to a name that names a service whose keys scanners know by their name only "
            "(sumo…, facebook…, atlassian/confluence/jira…, okta…, datadog…, dropbox…, cloudflare…, newrelic…, "
            "mailgun…, heroku…: gitleaks' keyword-anchored rules)",
            re.compile((r"new[_-]?relic" if service == "new" else service) + r"[a-z0-9_.-]{0,40}?" + _ASSIGN
                       + _SECRET_VALUE),
            group=1,
            validate=_service_key,
            context=_service_names_the_secret,
            lower=True,
        )
        # one pattern per service name: each starts with a literal (gated when 6+ characters long)
        for service in ("sumo", "facebook", "atlassian", "confluence", "jira", "okta", "datadog", "dropbox",
                        "cloudflare", "new", "mailgun", "heroku")
    ),
    *(
        Rule(
            rule_id,
            "a quoted literal assigned to a credential name (password, secret, api key, token, credentials): "
            "the whole literal, whatever its characters, unless a template, a placeholder or a word",
            re.compile(keyword + _NAME_TAIL + _QUOTED_LITERAL),
            group=1,
            validate=_quoted_literal,
            context=context,
            lower=True,
        )
        # before the unquoted rules: quotes say where the value ends, so any character may be in it
        for rule_id, keyword, context in (
            ("generic-password", r"(?:passw(?:or)?d|pwd|passphrase)", _names_the_secret),
            ("generic-secret", "secret", _generic_context), ("generic-secret", "key", _generic_context),
            ("generic-secret", "token", _generic_context), ("generic-secret", "credentials?", _generic_context),
        )
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
