"""Secrets and look-alikes for the redaction tests, generated deterministically.

Credentials are assembled from parts at import time (no scanner-bait literals
in the repository) and are random: none is real.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from urllib.parse import quote

_rng = random.Random(20261130)
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_B64URL = _ALNUM + "-_"
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_HEX = "0123456789abcdef"


def rand(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def ulid() -> str:
    return _rng.choice("01") + rand(25, _CROCKFORD)


def b64(nbytes: int) -> str:
    return base64.b64encode(bytes(_rng.getrandbits(8) for _ in range(nbytes))).decode()


def _b64url_json(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def jwt() -> str:
    return ".".join([_b64url_json({"alg": "HS256", "typ": "JWT"}), _b64url_json({"sub": rand(10), "iat": 1700000000}), rand(43, _B64URL)])


PEM = "-----BEGIN {kind}PRIVATE KEY-----\n" + "\n".join(rand(64, _ALNUM + "+/") for _ in range(4)) + "\nAB==\n-----END {kind}PRIVATE KEY-----"

AWS_SECRET = rand(40, _ALNUM + "/+")

# (rule id, text, the exact secret that must be masked)
POSITIVES: list[tuple[str, str, str]] = []


def _add(rule: str, template: str, secret: str) -> None:
    POSITIVES.append((rule, template.format(s=secret), secret))


for prefix in ("AKIA", "ASIA"):
    _add("aws-access-key", "aws_access_key_id = {s}", prefix + rand(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))
_add("aws-access-key", "the key {s} was rotated", "AKIA" + rand(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))
_add("aws-secret-key", "aws_secret_access_key = {s}", AWS_SECRET)
_add("aws-secret-key", 'export AWS_SECRET_ACCESS_KEY="{s}"', rand(40, _ALNUM + "/+"))
for kind in ("ghp", "gho", "ghu", "ghs", "ghr"):
    _add("github-token", "token: {s}", f"{kind}_" + rand(36))
_add("github-token", "git clone https://{s}@github.com/acme/repo.git", "ghp_" + rand(36))
_add("github-fine-grained-pat", "GH_TOKEN={s}", "github_pat_" + rand(22) + "_" + rand(59))
_add("gitlab-token", "gitlab: {s}", "glpat-" + rand(20, _B64URL))
_add("gitlab-token", "deploy token {s}.", "gldt-" + rand(20, _B64URL))
_add("gitlab-runner-registration", "register with {s}", "GR1348941" + rand(20, _B64URL))
_add("slack-token", "SLACK_BOT_TOKEN={s}", "xoxb-" + rand(12, "0123456789") + "-" + rand(13, "0123456789") + "-" + rand(24))
_add("slack-token", "user token {s}", "xoxp-" + "-".join(rand(11, "0123456789") for _ in range(3)) + "-" + rand(32, "abcdef0123456789"))
_add("slack-webhook", "POST to https://{s}", "hooks.slack.com/services/T" + rand(10, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") + "/B" + rand(10, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") + "/" + rand(24))
_add("stripe-key", "stripe.api_key = '{s}'", "sk_live_" + rand(24))
_add("stripe-key", "restricted {s}", "rk_test_" + rand(24))
_add("stripe-webhook-secret", "STRIPE_WEBHOOK_SECRET={s}", "whsec_" + rand(32))
_add("google-api-key", "maps key {s}", "AIza" + rand(35, _B64URL))
_add("google-oauth-secret", "client secret {s}", "GOCSPX-" + rand(28, _B64URL))
_add("anthropic-api-key", "ANTHROPIC_API_KEY={s}", "sk-ant-api03-" + rand(93, _B64URL) + "AA")
_add("openai-api-key", "OPENAI_API_KEY={s}", "sk-proj-" + rand(74, _B64URL) + "T3BlbkFJ" + rand(74, _B64URL))
_add("openai-api-key", "old style {s} here", "sk-" + rand(48))
_add("fastpad-token", "Authorization: Bearer {s}", "fpk_live_" + rand(43))
_add("npm-token", "//registry.npmjs.org/:_authToken={s}", "npm_" + rand(36))
_add("pypi-token", "password = {s}", "pypi-AgEIcHlwaS5vcmc" + rand(60, _B64URL))
_add("sendgrid-api-key", "SENDGRID={s}", "SG." + rand(22, _B64URL) + "." + rand(43, _B64URL))
_add("jwt", "session cookie: {s}", jwt())
_add("private-key", "```\n{s}\n```", PEM.format(kind="RSA "))
_add("private-key", "{s}", PEM.format(kind="OPENSSH "))
_add("private-key", "> {s}", PEM.format(kind="EC "))
_add("private-key", "{s}", PEM.format(kind=""))
_add("url-password", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", rand(18))
_add("url-password", "[db](mysql://root:{s}@10.0.0.5/prod)", "p4ss-" + rand(10))
_add("url-password", "redis://default:{s}@cache:6379", rand(12) + "@!" + rand(4))
_add("authorization-header", "curl -H 'Authorization: Bearer {s}' https://api.example.com", rand(32, _B64URL))
_add("authorization-header", "Authorization: Basic {s}", base64.b64encode(b"admin:" + rand(14).encode()).decode())
_add("authorization-header", '"authorization": "token {s}"', rand(40, "abcdef0123456789"))
_add("bearer-token", "send Bearer {s} with each call", rand(40, _B64URL + "."))
_add("generic-password", "password = {s}", "Tr0ub4dor&3")
_add("generic-password", "DB_PASSWORD={s}", "Summer2024!x")
_add("generic-password", "  pwd: {s}", "hX9#kq2Lm")
_add("generic-secret", "api_key: {s}", rand(32))
_add("generic-secret", "API_KEY={s}", hashlib.sha1(b"not a commit").hexdigest())   # hex under api_key: a secret
_add("generic-secret", 'client_secret = "{s}"', rand(40, _B64URL))
_add("generic-secret", 'SECRET_KEY = "{s}"', "django-insecure-" + rand(30, _ALNUM + "!@#$%^&*"))
_add("generic-secret", '{{"access_token": "{s}"}}', rand(48, _B64URL))
_add("generic-secret", "session_token={s}", str(uuid.UUID(int=_rng.getrandbits(128))))
_add("generic-secret", "credentials: {s}", rand(24))
_add("generic-token", "DISCORD_TOKEN={s}", rand(24) + "." + rand(6) + "." + rand(27))
_add("generic-secret", "---\ntitle: Billing\nwebhook_secret: {s}\n---", rand(24))
_add("generic-secret", "| API key | {s} |", rand(30))
_add("generic-password", "**Password:** {s}", "Lantern-57!x")
_add("generic-password", "The staging password is {s} for now.", "kettle9Drum")
_add("url-password", "redis://:{s}@cache.internal:6379/0", rand(16))
_add("authorization-header", "Authorization: Bearer {s}", rand(36, string.ascii_letters))   # letters only
_add("curl-user-password", "curl -u deploy:{s} https://ci.example.com/job", rand(16))
_add("azure-connection-string-key", "AccountName=unitlogs;AccountKey={s};EndpointSuffix=core.windows.net", b64(64))
_add("azure-connection-string-key", "Endpoint=sb://unit.servicebus.windows.net/;SharedAccessKeyName=x;SharedAccessKey={s}", b64(32))
_add("azure-sas-signature", "https://unit.blob.core.windows.net/c/f.csv?sv=2022-11-02&sp=r&sig={s}", quote(b64(32), safe=""))
_add("azure-ad-client-secret", "tenant app secret {s} (expires in May)", rand(3) + "8Q~" + rand(34, _ALNUM + "_~.-"))
_add("digitalocean-token", "doctl token {s}", "dop_v1_" + rand(64, _HEX))
_add("heroku-api-key", "heroku login {s}", "HRKU-AA" + rand(58, _B64URL))
_add("hashicorp-vault-token", "vault login {s}", "hvs." + rand(92, _B64URL))
_add("hashicorp-vault-token", "legacy root {s}", "s." + rand(20) + "4k9Z")   # with a digit, as random ones almost always have
_add("terraform-cloud-token", "TFE user token {s}", rand(14) + ".atlasv1." + rand(67, _ALNUM + "_=-"))
_add("databricks-token", "databricks PAT {s}", "dapi" + rand(32, _HEX))
_add("planetscale-token", "branch password {s}", "pscale_pw_" + rand(43))
_add("pulumi-token", "pulumi login {s}", "pul-" + rand(40, _HEX))
_add("doppler-token", "doppler service token {s}", "dp.st.prd." + rand(40))
_add("discord-webhook", "ping https://{s} on deploy", "discord.com/api/webhooks/" + rand(18, string.digits) + "/" + rand(68, _B64URL))
_add("discord-bot-token", "bot.run({s})", base64.b64encode(rand(18, string.digits).encode()).decode().rstrip("=") + "." + rand(6, _B64URL) + "." + rand(38, _B64URL))
_add("telegram-bot-token", "curl https://api.telegram.org/bot{s}/getMe", rand(9, string.digits) + ":AA" + rand(33, _B64URL))
_add("twilio-key", "sms via {s}", "AC" + rand(32, _HEX))
_add("twilio-key", "api key sid {s}", "SK" + rand(32, _HEX))
_add("mailchimp-api-key", "newsletter key {s}", rand(32, _HEX) + "-us14")
_add("shopify-token", "shop secret {s}", "shpss_" + rand(32, _HEX))
_add("huggingface-token", "hub token {s}", "hf_" + rand(34, string.ascii_letters))
_add("huggingface-token", "org token {s}", "api_org_" + rand(34, string.ascii_letters))
_add("onepassword-token", "OP_SERVICE_ACCOUNT_TOKEN={s}", "ops_eyJ" + rand(300, _ALNUM + "+/"))
_add("onepassword-secret-key", "emergency kit: {s}", "A3-" + "-".join(rand(n, string.ascii_uppercase + string.digits) for n in (6, 6, 5, 5, 5, 5)))
_add("openshift-token", "oc login --token={s} --server=https://api.example.test:6443", "sha256~" + rand(43, _B64URL))
_add("flyio-token", "FLY_API_TOKEN={s}", "fo1_" + rand(43, _B64URL))
_add("flyio-token", "fly macaroon {s}", "fm2_" + rand(140, _ALNUM + "+/"))
_add("sourcegraph-token", "SRC_ACCESS_TOKEN={s}", "sgp_" + rand(16, _HEX) + "_" + rand(40, _HEX))
_add("newrelic-key", "license {s}", "NRAK-" + rand(27, string.ascii_uppercase + string.digits))
_add("cloudflare-origin-ca-key", "origin ca: {s}", "v1.0-" + rand(24, _HEX) + "-" + rand(146, _HEX))
_add("postman-token", "postman {s}", "PMAK-" + rand(24, _HEX) + "-" + rand(34, _HEX))
_add("generic-secret", 'db_credentials = "{s}"', "Xq7!" + rand(12) + "#{")         # quoted: any character
_add("generic-secret", "client_secret '{s}';", rand(10) + "$(" + rand(6))             # a config directive
_add("generic-password", 'admin_password := "{s}"', "{{" + rand(14) + "}" + rand(4))  # not a template
for _service in ("sumologic_access_id", "FACEBOOK_APP_SECRET", "atlassian.api_token", "confluence_pat", "jira-auth",
                 "okta_client_secret", "datadog_app_key", "dropbox_app_token", "cloudflare_global_api_key",
                 "NEW_RELIC_LICENSE", "mailgun_signing", "HEROKU_KEY"):
    _add("service-credential", _service + " = {s}", rand(6) + "7" + rand(17))
_add("linear-api-key", "linear {s}", "lin_api_" + rand(40))
_add("notion-token", "notion {s}", "ntn_" + rand(11, string.digits) + rand(35))
_add("notion-token", "old integration {s}", "secret_" + rand(43))
_add("sentry-token", "sentry-cli uses {s}", "sntryu_" + rand(64, _HEX))
_add("grafana-token", "dashboards token {s}", "glsa_" + rand(32) + "_" + rand(8, _HEX))
_add("grafana-token", "loki push {s}", "glc_" + rand(60, _ALNUM + "+/"))

# Things that must never be masked.
_NEGATIVES: list[str] = [
    # quoted literals under a credential name that are not one: a file, a URL, a template, a fake
    'private_key: "keys/private.pem"', 'secret: "https://vault.internal/v1/kv"', 'api_key = "${{ secrets.API_KEY }}"',
    'password = "{{ .Values.db.password }}"', 'client_secret: "%(client_secret)s"', 'token = "somefaketoken"',
    # identifiers
    *(ulid() for _ in range(200)),
    *(f"Anchored paragraph {{#{ulid()}}}" for _ in range(50)),
    *(hashlib.sha1(str(i).encode()).hexdigest() for i in range(200)),
    *(hashlib.sha256(str(i).encode()).hexdigest() for i in range(100)),
    *(f"commit {hashlib.sha1(str(i).encode()).hexdigest()[:12]} fixed it" for i in range(50)),
    *(str(uuid.UUID(int=_rng.getrandbits(128))) for _ in range(200)),
    *(f"page_token = {ulid()}" for _ in range(20)),
    *(f"next_cursor: {uuid.UUID(int=_rng.getrandbits(128))}" for _ in range(20)),
    *(f"id: {ulid()}, sha: {hashlib.sha1(str(i).encode()).hexdigest()}" for i in range(20)),
    # fragments of base64 images and data
    *(rand(40, _ALNUM + "+/") + "==" for _ in range(20)),
    "![tiny](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    # prose about secrets
    "The password policy requires 12 characters; rotate every API key quarterly.",
    "Store the secret in the vault, never in a note. The token expires after 30 days.",
    "Password: see 1Password, entry 'staging db'.",
    "my password is in the vault",
    "Ask Sam for the API key, the secret: is in the usual place.",
    "The bearer of this letter is our new tech lead.",
    "Authorization: Bearer <token>",
    "Authorization: Bearer $FASTPAD_TOKEN",
    "Authorization: Bearer fpk_live_…",
    "Authorization: Bearer YOUR_API_KEY",
    "password = ${DB_PASSWORD}",
    "password: <your password here>",
    "api_key = os.environ['API_KEY']",
    "api_key: YOUR_API_KEY_HERE",
    "token: xxxxxxxxxxxxxxxxxxxxxxxx",
    "secret: ************************",
    "postgres://user:password@localhost:5432/db",
    "postgres://app:${PGPASSWORD}@db:5432/app",
    "https://user@example.com/path",
    "git@github.com:acme/repo.git",
    "ssh://git@github.com:22/acme/repo.git",
    "https://example.com:8443/a:b@c",
    "Budget is 25,000 tokens; max_tokens=25000 and tokens: 1,024.",
    "monkey: bananas and a donkey: carrots",
    # code identifiers
    "token = self.next_token()",
    "password = request.form['password']",
    "DB_PASSWORD=request.form",
    "secret_key = settings.SECRET_KEY",
    "access_token = response.json()['access_token']",
    "const apiKey = process.env.OPENAI_API_KEY;",
    "if token == expected_token: return True",
    "if token != other_token_value_here_ok:",
    "def get_api_key_for_workspace_owner(workspace): ...",
    "sk-learn-compatible-estimator-wrapper",
    "from sklearn.pipeline import make_pipeline  # risk-adjusted-return-calculation",
    "task-force-sk-meeting-notes-for-the-quarterly-review",
    "AKIAlowercase is not a key, nor is AKIA123",
    "ghp_short",
    "xoxb-not-a-token",
    "eyJhbGciOiJIUzI1NiJ9 alone is just a header",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----",
    "getAccessTokenFromHeaders(request)",
    "camelCaseSecretKeyHolderFactoryBean",
    "sha256:" + hashlib.sha256(b"layer").hexdigest(),
    "docker pull ghcr.io/acme/app@sha256:" + hashlib.sha256(b"img").hexdigest(),
    "| key | value |\n| --- | --- |\n| timeout | 30s |",
    "```python\nfor key, value in items.items():\n    print(key, value)\n```",
    "Use `SECRET_KEY` from the environment; see [settings](https://docs.example.com/settings).",
    "The quick brown fox jumps over the lazy dog. " * 20,
    # near misses of each vendor shape
    "AccountKey=;AccountName=emptykey",
    "AccountKey=<your storage key>",
    "https://unit.blob.core.windows.net/c?sig=" + rand(20),
    "Q~" + rand(20) + " is not a client secret",
    "dop_v1_" + rand(64, "ghijklmnop"),
    "HRKU-AA" + rand(20),
    "The s.toString() call and s." + rand(24, string.ascii_letters) + " are code",
    "hvs." + rand(10),
    "module.atlasv1.config",
    "dapi_client_version = 3",
    "pscale_tkn_short",
    "pul-request-template",
    "dp.pt.abc",
    "discord.com/api/webhooks/123/abc",
    rand(24) + "." + rand(6) + "." + rand(27),               # a bot-token shape whose first part is not a user id
    "12345:AAbc and chat -1001234567890",
    "ACCESS_CONTROL_ALLOW_ORIGIN_HEADER_VALUE_XYZ",
    "SK" + rand(31, _HEX),
    "locale en-us1 and " + rand(31, _HEX) + "-us1",
    "shpat_" + rand(31, _HEX),
    "hf_hub_download(repo_id)",
    "hf_" + rand(34, string.ascii_lowercase),
    "lin_api_version",
    "secret_santa_list",
    "ntn_123",
    "sntryu_" + rand(63, _HEX),
    "glsa_wrong_shape",
    "docker run -u 501:20 alpine id and git push -u upstream trunk",
    "my_ghp_" + rand(36),                                     # an identifier, not a token in emphasis
    "zero\u200bwidth\u200cspaces\u200dinside\u2060plain\ufefftext",
    # documented example credentials and templates of them
    "AKIA" "IOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/" "bPxRfiCYEXAMPLEKEY",
    "AKIA" "IOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/" "bPxRfiCYEXAMPLEKEY",
    "stripe.api_key = 'sk_test_" "4eC39HqLyjWDarjtT1zdp7dc'",
    "AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
    "K1SZFPTOtr/KBHBeksoGMGw==;",
    "ghp_" + "x" * 36,
    "sk_live_" + "0" * 24,
    # names that describe a secret, and values that only stand for one
    "admin_password_file: /run/secrets/admin",
    "refresh_token_url: https://login.example.net/token",
    "api_key_id: " + str(uuid.UUID(int=_rng.getrandbits(128))),
    "client_secret_name: billing-oauth",
    "page token: " + ulid(),
    "password: !secret db_password",
    "password is required",
    "| password | string | required |",
    "pwd: ~/src/fastpad-mirror",
]
NEGATIVES: list[str] = _NEGATIVES
