"""What a secret looks like: the rule catalogue :mod:`fastpad.outbound.secrets` detects with.

This module holds the vendor shapes and assembles :data:`RULES` (vendor shapes first, then
:mod:`~fastpad.outbound.secret_context_rules`: credentials known by a name or a position); the
validators are in :mod:`~fastpad.outbound.secret_checks`, the rule shape and the pattern pieces
in :mod:`~fastpad.outbound.secret_patterns`. The rules run on the text as it renders
(:mod:`~fastpad.outbound.rendered`).

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

import re
import string

from fastpad.outbound.secret_checks import (  # noqa: F401 - the catalogue's vocabulary, shared inside the package
    _aws_secret_near_key_id,
    _azure_ad_secret,
    _discord_bot_token,
    GENERIC_MIN_ENTROPY,
    is_documented_example,
    is_placeholder,
    looks_random,
    _openai_like,
    _random_hex,
    _random_letters,
    _slack_token,
    _sas_signature,
    shannon_entropy,
)
from fastpad.outbound.secret_patterns import (  # noqa: F401 - the catalogue's vocabulary, shared inside the package
    _ALNUM,
    _ASSIGN,
    _AWS_KEY_ID,
    _B64URL,
    _B64URL_END,
    _END,
    _end,
    _HEX_CHARS,
    Lead,
    Rule,
    _rules,
    _token,
    _wb,
)
from fastpad.outbound.secret_context_rules import CONTEXT_RULES

# ---------------------------------------------------------------------------
# vendor shapes — order is priority: where two rules overlap, the earlier one wins

_VENDOR_RULES: tuple[Rule, ...] = (
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
        validate=lambda v: shannon_entropy(v[9:]) >= 3.0,       # GR1348941123123123…: a template
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
        validate=_slack_token,
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
        "huggingface-token",
        "Hugging Face organization API token (api_org_…)",
        _token("api_org_", r"[A-Za-z]{34}"),
        validate=lambda v: _random_letters(v[8:]),
    ),
    Rule(
        "onepassword-token",
        "1Password service account token (ops_eyJ…)",
        _token("ops_eyJ", r"[A-Za-z0-9+/]{250,8192}={0,3}", _end("A-Za-z0-9+/=")),
    ),
    Rule(
        "onepassword-secret-key",
        "1Password account secret key (A3-XXXXXX-…)",
        _token("A3-", r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}"),
        validate=lambda v: shannon_entropy(v[3:].replace("-", "")) >= 3.5,
    ),
    Rule(
        "openshift-token",
        "OpenShift user token (sha256~…)",
        _token("sha256~", r"[A-Za-z0-9_-]{43}", _B64URL_END),
        validate=lambda v: shannon_entropy(v[7:]) >= 3.5,
    ),
    *_rules(
        "flyio-token",
        "Fly.io access tokens and macaroons (fo1_…, fm1a_/fm1r_/fm2_…, comma-joined)",
        _token("fo1_", r"[A-Za-z0-9_-]{43}", _B64URL_END),
        _token("fm", r"(?:1[ar]|2)_[A-Za-z0-9+/]{100,4096}={0,3}(?:,fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,4096}={0,3}){0,8}",
               _end("A-Za-z0-9+/=")),
        validate=lambda v: shannon_entropy(v) >= 4.0,
    ),
    Rule(
        "sourcegraph-token",
        "Sourcegraph access token (sgp_…)",
        _token("sgp_", r"(?:(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|[a-fA-F0-9]{40})"),
        validate=lambda v: _random_hex(v.rsplit("_", 1)[1]),
    ),
    Rule(
        "newrelic-key",
        "New Relic user API key, browser token and insert key (NRAK-, NRJS-, NRII-)",
        _token("NR", r"(?:AK-[A-Z0-9]{27}|JS-[a-f0-9]{19}|II-[A-Za-z0-9_-]{32})", _B64URL_END),
    ),
    Rule(
        "cloudflare-origin-ca-key",
        "Cloudflare Origin CA key (v1.0-…)",
        _token("v1.0-", r"[a-f0-9]{24}-[a-f0-9]{146}"),
    ),
    Rule(
        "postman-token",
        "Postman API key (PMAK-…)",
        _token("PMAK-", r"[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ),
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
        "JSON Web Token (base64url JSON header and claims, the signature if any)",
        _token("eyJ", _B64URL + r"{10,8192}\.eyJ" + _B64URL + r"{10,8192}(?:\.(?:" + _B64URL + r"{10,8192}={0,2})?)?",
               _B64URL_END),
    ),
)

RULES: tuple[Rule, ...] = _VENDOR_RULES + CONTEXT_RULES
RULE_IDS: tuple[str, ...] = tuple(dict.fromkeys(rule.id for rule in RULES))


def describe_rules() -> list[dict[str, str]]:
    """The rule catalogue (id and description), for docs and the capabilities tool."""
    described = {rule.id: rule.description for rule in reversed(RULES)}
    return [{"id": rule_id, "description": described[rule_id]} for rule_id in RULE_IDS]

