"""Build the redaction benchmark's corpus: secrets.jsonl and lookalikes.jsonl beside this file.

Held out from the unit tests: its own seed, its own sentences, its own values
(tests/outbound/ shares none of its strings but the published example keys). Every value is
synthetic, generated in the shape of the credential's public format (the rule
shapes gitleaks and the vendors document); none is real.

One JSON object per line: ``kind`` (the credential, or what the look-alike is),
``variant`` (plain, or written through a zero-width character, or inside
Markdown emphasis), ``context`` (a short sentence with ``{value}`` where the
value goes) and ``value``, both lists of parts to concatenate: stored in parts,
and split inside anything credential-shaped, so that secret scanners (and push
protection) do not take the corpus for leaked keys.

Run it again only to change the corpus: ``.venv/bin/python bench/data/redaction/build_corpus.py``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from pathlib import Path
from typing import Callable
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
rng = random.Random(1515_2026)

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64(nbytes: int) -> str:
    return base64.b64encode(rng.randbytes(nbytes)).decode()


def b64url_json(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


def ulid() -> str:
    return "01" + rand(24, CROCKFORD)


# ---------------------------------------------------------------------------
# secrets: kind -> (how to make one value as [prefix, body] parts, contexts)


def _jwt() -> list[str]:
    header = b64url_json({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"})
    claims = b64url_json({"sub": rand(12), "iat": rng.randint(1_700_000_000, 1_800_000_000), "role": "service"})
    return [header, "." + claims + "." + rand(43, B64URL)]


def _pem() -> list[str]:
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", ""])
    lines = "\n".join(rand(64, B64) for _ in range(rng.randint(3, 6)))
    return [f"-----BEGIN {kind}PRIVATE", f" KEY-----\n{lines}\n{rand(20, B64)}==\n-----END {kind}PRIVATE KEY-----"]


def _discord_bot() -> list[str]:
    user_id = str(rng.randint(10**17, 10**19 - 1)).encode()
    return [base64.urlsafe_b64encode(user_id).decode().rstrip("="), "." + rand(6, B64URL) + "." + rand(rng.choice([27, 38]), B64URL)]


def _password() -> list[str]:
    words = ["Harbor", "violet", "Quartz", "maple", "Ember", "orbit", "Falcon", "tundra", "Cobalt", "saffron"]
    return [rng.choice(words) + rng.choice(["", "_", "-", "."]), rng.choice(words) + str(rng.randint(1, 999)) + rng.choice("!#$%&*?@")]


SECRETS: dict[str, tuple[Callable[[], list[str]], list[str | tuple[str, ...]]]] = {
    "aws-access-key": (lambda: [rng.choice(["AKIA", "ASIA"]), rand(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")], [
        "The nightly export assumes the role with access key {value} from the ops account.",
        "aws_access_key_id = {value}",
        "Rotated {value} on Friday; the old one is disabled in IAM.",
        "CI reads AWS_ACCESS_KEY_ID={value} from the runner's environment.",
        "- [ ] revoke {value} after the audit",
    ]),
    "aws-secret-key": (lambda: ["", rand(40, B64)], [
        "aws_secret_access_key = {value}",
        'export AWS_SECRET_ACCESS_KEY="{value}"',
        "  aws_secret_access_key: {value}",
        ("Key id AKIA", rand(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") + " with secret {value} (staging only)."),
        ("AKIA", rand(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") + ",{value}"),
        ("Access key: ASIA", rand(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") + "\nSecret: {value}"),
    ]),
    "azure-connection-string-key": (lambda: ["", b64(64)], [
        "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={value};EndpointSuffix=core.windows.net",
        "The blob backup uses `AccountName=mediaprod;AccountKey={value}` for now.",
        'AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=stg01;AccountKey={value}"',
        "Storage account key (primary): AccountKey={value}",
    ]),
    "azure-shared-access-key": (lambda: ["", b64(32)], [
        "Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={value}",
        "The IoT hub connection: HostName=plant.azure-devices.net;SharedAccessKeyName=iothubowner;SharedAccessKey={value}",
        "Event Hubs listener uses SharedAccessKey={value} on the telemetry namespace.",
        "EntityPath=orders;SharedAccessKeyName=send;SharedAccessKey={value}",
    ]),
    "azure-sas-signature": (lambda: ["", quote(b64(32), safe="")], [
        "Upload with https://acme.blob.core.windows.net/drop/report.csv?sv=2022-11-02&ss=b&srt=o&sp=rw&se=2026-12-31T00:00:00Z&sig={value}",
        "SAS for the export container: ?sp=r&st=2026-01-01&se=2026-02-01&spr=https&sv=2022-11-02&sr=c&sig={value}",
        "BlobEndpoint=https://logs.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=bfqt&sig={value}",
        "The share link ends in &sig={value} and expires next week.",
    ]),
    "azure-ad-client-secret": (lambda: [rand(3, ALNUM) + rng.choice("0123456789") + "Q~", rand(34, ALNUM + "_~.-")], [
        "App registration 'billing-sync' client secret: {value}",
        "AZURE_CLIENT_SECRET={value}",
        "Entra ID secret for the SSO app is {value} (expires in 6 months).",
        "  client_secret: {value}",
    ]),
    "google-api-key": (lambda: ["AIza", "Sy" + rand(33, B64URL)], [
        "Maps embed key {value} is restricted to our domain.",
        "GOOGLE_API_KEY={value}",
        "firebaseConfig.apiKey = '{value}'",
        "The YouTube quota belongs to key {value}.",
    ]),
    "google-oauth-secret": (lambda: ["GOCSPX-", rand(28, B64URL)], [
        "OAuth client secret for the calendar sync: {value}",
        'GOOGLE_CLIENT_SECRET="{value}"',
        "Replace {value} once the consent screen is verified.",
        "client_secret: {value}",
    ]),
    "digitalocean-token": (lambda: [rng.choice(["dop_v1_", "doo_v1_", "dor_v1_"]), rand(64, HEX)], [
        "doctl auth init --access-token {value}",
        "DIGITALOCEAN_TOKEN={value}",
        "Droplet automation token {value} has write scope.",
        "Terraform's DO provider reads {value} from the vars file.",
    ]),
    "heroku-api-key": (lambda: ["HRKU-AA", rand(58, B64URL)], [
        "HEROKU_API_KEY={value}",
        "The deploy bot logs in with {value}.",
        "heroku authorizations token: {value}",
        "Pipeline promotion uses {value} in GitHub Actions.",
    ]),
    "hashicorp-vault-token": (lambda: rng.choice([["hvs.", rand(rng.randint(24, 95), B64URL)], ["hvb.", rand(140, B64URL)], ["s.", rand(24, ALNUM)]]), [
        "VAULT_TOKEN={value}",
        "vault login {value}",
        "Root token from the unseal ceremony: {value}",
        "The CI role hands out {value} with a 1h TTL.",
        "X-Vault-Token: {value}",
    ]),
    "terraform-cloud-token": (lambda: [rand(14, ALNUM), ".atlasv1." + rand(67, ALNUM + "_=-")], [
        'credentials "app.terraform.io" { token = "{value}" }',
        "TF_TOKEN_app_terraform_io={value}",
        "Team token for the infra workspace: {value}",
        "Terraform Cloud user token {value} was created by ana.",
    ]),
    "databricks-token": (lambda: ["dapi", rand(32, HEX)], [
        "DATABRICKS_TOKEN={value}",
        "The notebook job calls the REST API with {value}.",
        "PAT for the warehouse: {value} (90 days).",
        "databricks configure --token, then paste {value}",
    ]),
    "planetscale-token": (lambda: [rng.choice(["pscale_tkn_", "pscale_pw_", "pscale_oauth_"]), rand(43, ALNUM + "_-")], [
        "PLANETSCALE_SERVICE_TOKEN={value}",
        "Branch password for main: {value}",
        "pscale connect uses {value} in CI.",
        "DATABASE_PASSWORD={value}",
    ]),
    "github-token": (lambda: [rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), rand(36)], [
        "GH_TOKEN={value}",
        "The release bot pushes tags with {value}.",
        "git remote set-url origin https://{value}@github.com/acme/site.git",
        "gh auth login --with-token <<< {value}",
        "Personal token (repo scope): {value}",
    ]),
    "github-fine-grained-pat": (lambda: ["github_pat_", rand(22) + "_" + rand(59)], [
        "Fine-grained token for the docs repo: {value}",
        "GITHUB_TOKEN={value}",
        "renovate uses {value} with contents:write.",
        "The token {value} expires on March 1.",
    ]),
    "gitlab-token": (lambda: [rng.choice(["glpat-", "gldt-", "glrt-", "glptt-"]), rand(20, B64URL)], [
        "GITLAB_TOKEN={value}",
        "Deploy token for the registry: {value}",
        "The runner was registered with {value}.",
        "curl --header \"PRIVATE-TOKEN: {value}\" https://gitlab.example.com/api/v4/projects",
    ]),
    "gitlab-runner-registration": (lambda: ["GR1348941", rand(20, B64URL)], [
        "gitlab-runner register --registration-token {value}",
        "Registration token from the admin page: {value}",
        "REGISTRATION_TOKEN={value}",
        "Old shared runners used {value}.",
    ]),
    "npm-token": (lambda: ["npm_", rand(36)], [
        "//registry.npmjs.org/:_authToken={value}",
        "NPM_TOKEN={value}",
        "Publish with {value} from the release machine.",
        "The automation token {value} bypasses 2FA.",
    ]),
    "pypi-token": (lambda: ["pypi-AgEIcHlwaS5vcmc", rand(70, B64URL)], [
        "TWINE_PASSWORD={value}",
        "[pypi]\nusername = __token__\npassword = {value}",
        "Upload token scoped to fastpad-client: {value}",
        "uv publish --token {value}",
    ]),
    "pulumi-token": (lambda: ["pul-", rand(40, HEX)], [
        "PULUMI_ACCESS_TOKEN={value}",
        "pulumi login with {value}",
        "The stack's CI token is {value}.",
        "Org token (admin): {value}",
    ]),
    "doppler-token": (lambda: [rng.choice(["dp.pt.", "dp.st.", "dp.sa."]), rand(43)], [
        "DOPPLER_TOKEN={value}",
        "doppler configure set token {value}",
        "Service token for prd config: {value}",
        "The personal token {value} belongs to ops.",
    ]),
    "slack-webhook": (lambda: ["hooks.slack", ".com/services/T" + rand(10, string.ascii_uppercase + string.digits) + "/B" + rand(10, string.ascii_uppercase + string.digits) + "/" + rand(24)], [
        "Alerts post to https://{value} (channel #ops-alerts).",
        "SLACK_WEBHOOK_URL=https://{value}",
        "webhook: https://{value}",
        "curl -X POST -d '{\"text\":\"deploy done\"}' https://{value}",
    ]),
    "slack-token": (lambda: [rng.choice(["xoxb-", "xoxp-"]), rand(12, string.digits) + "-" + rand(13, string.digits) + "-" + rand(24)], [
        "SLACK_BOT_TOKEN={value}",
        "The standup bot uses {value}.",
        "slack_token: {value}",
        "User token with chat:write: {value}",
    ]),
    "discord-webhook": (lambda: ["discord", ".com/api/webhooks/" + rand(19, string.digits) + "/" + rand(68, B64URL)], [
        "Build notifications go to https://{value}",
        "DISCORD_WEBHOOK=https://{value}",
        "The raid bot posts to https://{value} every evening.",
        "webhook_url: https://{value}",
    ]),
    "discord-bot-token": (_discord_bot, [
        "DISCORD_BOT_TOKEN={value}",
        "The moderation bot runs with token {value}.",
        "client.run('{value}')",
        "Reset {value} after the leak in #general.",
    ]),
    "telegram-bot-token": (lambda: [str(rng.randint(10**7, 10**10 - 1)), ":AA" + rand(33, B64URL)], [
        "BotFather gave us {value} for the alerts bot.",
        "TELEGRAM_BOT_TOKEN={value}",
        "curl https://api.telegram.org/bot{value}/getMe",
        "telegram:\n  token: {value}",
    ]),
    "twilio-key": (lambda: [rng.choice(["AC", "SK"]), rand(32, HEX)], [
        "TWILIO_ACCOUNT_SID={value}",
        "The SMS fallback uses API key {value}.",
        "Twilio account {value} is the production one.",
        "twilio api:core:messages:create --account-sid {value}",
    ]),
    "sendgrid-api-key": (lambda: ["SG.", rand(22, B64URL) + "." + rand(43, B64URL)], [
        "SENDGRID_API_KEY={value}",
        "Transactional mail goes out with {value}.",
        "sendgrid:\n  key: {value}",
        "The marketing team's key {value} has full access.",
    ]),
    "mailchimp-api-key": (lambda: [rand(32, HEX), "-us" + str(rng.randint(1, 21))], [
        "MAILCHIMP_API_KEY={value}",
        "Newsletter sync uses {value}.",
        "mailchimp key: {value}",
        "The audience export script reads {value} from settings.",
    ]),
    "stripe-key": (lambda: [rng.choice(["sk_live_", "sk_test_", "rk_live_"]), rand(rng.choice([24, 99]))], [
        "STRIPE_SECRET_KEY={value}",
        "Billing is switched to {value} since the migration.",
        "stripe.api_key = \"{value}\"",
        "Restricted key for the reporting job: {value}",
        "curl https://api.stripe.com/v1/charges -u {value}:",
    ]),
    "stripe-webhook-secret": (lambda: ["whsec_", rand(32)], [
        "STRIPE_WEBHOOK_SECRET={value}",
        "Signing secret for the /hooks/stripe endpoint: {value}",
        "stripe listen printed {value}",
        "webhook_secret: {value}",
    ]),
    "shopify-token": (lambda: [rng.choice(["shpat_", "shpss_", "shpca_", "shppa_"]), rand(32, HEX)], [
        "SHOPIFY_ACCESS_TOKEN={value}",
        "Admin API token for the storefront: {value}",
        "The app's shared secret is {value}.",
        "X-Shopify-Access-Token: {value}",
    ]),
    "anthropic-api-key": (lambda: ["sk-ant-", "api03-" + rand(93, B64URL) + "AA"], [
        "ANTHROPIC_API_KEY={value}",
        "The eval harness bills to {value}.",
        "anthropic.Anthropic(api_key=\"{value}\")",
        "Workspace key for research: {value}",
    ]),
    "openai-api-key": (lambda: rng.choice([["sk-proj-", rand(58, B64URL) + "T3BlbkFJ" + rand(58, B64URL)], ["sk-", rand(48)]]), [
        "OPENAI_API_KEY={value}",
        "The summariser runs on {value}.",
        "openai.api_key = '{value}'",
        "Project key (batch jobs): {value}",
    ]),
    "huggingface-token": (lambda: ["hf_", rand(34, string.ascii_letters)], [
        "HF_TOKEN={value}",
        "huggingface-cli login --token {value}",
        "Read token for the gated model: {value}",
        "The fine-tune job pushes with {value}.",
    ]),
    "fastpad-token": (lambda: [rng.choice(["fpk_live_", "fpk_test_"]), rand(43)], [
        "FASTPAD_TOKEN={value}",
        "The capture shortcut sends {value}.",
        "Agent token for the research assistant: {value}",
        "fp login --token {value}",
    ]),
    "linear-api-key": (lambda: ["lin_api_", rand(40)], [
        "LINEAR_API_KEY={value}",
        "The triage script talks to Linear with {value}.",
        "Personal API key: {value}",
        "linear:\n  key: {value}",
    ]),
    "notion-token": (lambda: rng.choice([["ntn_", rand(11, string.digits) + rand(35)], ["secret_", rand(43)]]), [
        "NOTION_TOKEN={value}",
        "Internal integration secret: {value}",
        "The wiki importer uses {value}.",
        "notion_api_key: {value}",
    ]),
    "sentry-token": (lambda: ["sntryu_", rand(64, HEX)], [
        "SENTRY_AUTH_TOKEN={value}",
        "sentry-cli uses {value} to upload source maps.",
        "User auth token: {value}",
        "The release job reads {value} from the vault.",
    ]),
    "grafana-token": (lambda: rng.choice([["glc_", rand(60, B64)], ["glsa_", rand(32) + "_" + rand(8, HEX)]]), [
        "GRAFANA_TOKEN={value}",
        "Service account token for dashboards-as-code: {value}",
        "The Loki push uses {value}.",
        "grafana:\n  api_key: {value}",
    ]),
    "jwt": (_jwt, [
        "Session cookie from the staging login: {value}",
        "Authorization: Bearer {value}",
        "id_token={value}",
        "The webhook signs its body with a JWT like {value}",
    ]),
    "private-key": (_pem, [
        "Deploy key for the backup host:\n\n{value}",
        "```\n{value}\n```",
        "> {value}",
        "ssh key (don't share):\n{value}",
    ]),
    "url-password": (lambda: ["", rand(rng.randint(10, 20), ALNUM + "!$-_")], [
        "DATABASE_URL=postgres://app:{value}@db.internal:5432/app",
        "redis://:{value}@cache.internal:6379/0",
        "Connect with mongodb+srv://reporting:{value}@cluster0.abcde.mongodb.net/analytics",
        "[broker](amqp://worker:{value}@mq.internal:5672/)",
        "ftp://backup:{value}@files.example.org/nightly",
    ]),
    "curl-user-password": (lambda: ["", rand(14, ALNUM + "!#%")], [
        "curl -u admin:{value} https://jenkins.internal/api/json",
        "curl --user ci-bot:{value} -X POST https://nexus.internal/service/rest/v1/components",
        "Health check: `curl -s -u monitor:{value} https://es.internal:9200/_cluster/health`",
        "curl -fsS --user=deploy:{value} https://artifacts.internal/upload",
    ]),
    "authorization-header": (lambda: rng.choice([["", rand(40, B64URL)], ["", rand(32, string.ascii_letters)], ["", b64(24)]]), [
        "Authorization: Bearer {value}",
        "curl -H 'Authorization: Token {value}' https://api.internal/v2/jobs",
        '"Authorization": "Bearer {value}"',
        "Authorization: Basic {value}",
    ]),
    "bearer-token": (lambda: ["", rand(44, B64URL)], [
        "Send Bearer {value} with every request to the metrics API.",
        "The gateway expects Bearer {value}",
        "headers = {'auth': 'Bearer {value}'}",
        "Use bearer {value} until SSO lands.",
    ]),
    "generic-password": (_password, [
        "password = \"{value}\"",
        "password: {value}",
        "DB_PASSWORD={value}",
        "**Password:** {value}",
        '"password": "{value}"',
        "Wi-Fi for the offsite — passphrase: {value}",
        "| DB password | {value} | rotated monthly |",
        "The staging password is {value} until the demo is over.",
    ]),
    "generic-secret": (lambda: ["", rng.choice([rand(rng.randint(12, 40)), rand(rng.randint(20, 48), B64URL),
                                                rand(rng.choice([32, 40, 64]), HEX)])], [
        "api_key: {value}",
        "client_secret = \"{value}\"",
        '{"api_key": "{value}"}',
        "SECRET_KEY={value}",
        "---\ntitle: Payments runbook\napi_secret: {value}\n---",
        "token: {value}",
        "access_token={value}",
        "webhook_secret: {value}",
        "DD_API_KEY={value}",
        "ALGOLIA_ADMIN_API_KEY={value}",
        "private_key: {value}",
        "credentials: {value}",
        "| API key | {value} |",
        "The API key: {value}",
    ]),
    "generic-token": (lambda: ["", rand(40, B64URL)], [
        "CLOUDFLARE_API_TOKEN={value}",
        "NETLIFY_AUTH_TOKEN={value}",
        "DISCORD_TOKEN={value}",
        "TRAVIS_TOKEN={value}",
        "OKTA_API_TOKEN=00{value}",
    ]),
}

# How some secrets are also written: through a zero-width character, inside Markdown emphasis.
EMPHASIS = ("*{value}*", "_{value}_", "**{value}**", "__{value}__")


def _with_zero_width(parts: list[str]) -> list[str]:
    """The same value with a zero-width character slipped into its body."""
    body = parts[-1]
    at = rng.randint(1, len(body) - 1)
    return parts[:-1] + [body[:at] + rng.choice(ZERO_WIDTH) + body[at:]]


def _stands_alone(context: str) -> bool:
    """The value is a word of its own in the context (not inside a URL or quotes), so emphasis can wrap it."""
    before, _, after = context.partition("{value}")
    return before[-1:] == " " and after[:1] in ("", " ", ".", ",", "\n")


def build_secrets() -> list[dict]:
    records = []
    for kind, (make, contexts) in SECRETS.items():
        for context in contexts:
            records.append({"kind": kind, "variant": "plain", "context": _parts(context), "value": make()})
    for kind in rng.sample(sorted(SECRETS), 16):
        make, contexts = SECRETS[kind]
        records.append({"kind": kind, "variant": "zero-width", "context": _parts(rng.choice(contexts)),
                        "value": _with_zero_width(make())})
    alone = {kind: [c for c in contexts if isinstance(c, str) and _stands_alone(c)]
             for kind, (_, contexts) in SECRETS.items()}
    for kind in rng.sample(sorted(kind for kind, contexts in alone.items() if contexts), 16):
        make, _ = SECRETS[kind]
        context = rng.choice(alone[kind]).replace("{value}", rng.choice(EMPHASIS))
        records.append({"kind": kind, "variant": "emphasis", "context": [context], "value": make()})
    return records


# ---------------------------------------------------------------------------
# look-alikes: things that must never be masked


def _sha1() -> str:
    return hashlib.sha1(rng.randbytes(16)).hexdigest()


def _sha256() -> str:
    return hashlib.sha256(rng.randbytes(16)).hexdigest()


def _semver() -> str:
    return f"{rng.randint(0, 12)}.{rng.randint(0, 40)}.{rng.randint(0, 99)}"


def _colour() -> str:
    return "#" + rand(rng.choice([3, 6]), HEX)


LOOKALIKES: dict[str, tuple[Callable[[], str], list[str]]] = {
    "uuid": (lambda: str(uuid.UUID(int=rng.getrandbits(128))), [
        "Request {value} failed with a 502 at the edge.",
        "tenant_id: {value}",
        "The trace id {value} shows the retry storm.",
        "next_cursor: {value}",
        "client_id = \"{value}\"",
        "See incident {value} for the timeline.",
    ]),
    "git-sha": (lambda: rng.choice([_sha1(), _sha1()[:7], _sha1()[:12]]), [
        "Fixed in commit {value}, released on Tuesday.",
        "git cherry-pick {value}",
        "Bisect points at {value} as the first bad commit.",
        "sha: {value}",
        "Reverted by {value} (see the PR).",
        "The deploy at {value} is the last good one.",
    ]),
    "ulid": (ulid, [
        "Paragraph about the rollout plan. {#{value}}",
        "page_token = {value}",
        "Note {value} links here.",
        "turn_id: {value}",
        "- follow up with the vendor {#{value}}",
    ]),
    "data-uri": (lambda: "data:image/png;base64," + b64(rng.randint(60, 200)), [
        "![chart]({value})",
        "<img src=\"{value}\" alt=\"logo\">",
        "background: url({value});",
        "The inline favicon is {value}",
    ]),
    "placeholder": (lambda: rng.choice([
        "<your-token-here>", "xxxx", "${API_KEY}", "YOUR_API_KEY", "<token>", "****", "sk_live_" + "x" * 24,
        "ghp_" + "X" * 36, "{{ secrets.DEPLOY_TOKEN }}", "$GITHUB_TOKEN", "changeme", "<redacted>", "%API_TOKEN%",
        "AKIA" + "X" * 16, "xoxb-your-bot-token", "hf_" + "x" * 34, "<paste your key>", "...",
    ]), [
        "api_key: {value}",
        "Authorization: Bearer {value}",
        "Set STRIPE_SECRET_KEY={value} in your .env file.",
        "token = \"{value}\"",
        "password: {value}",
        "Replace {value} with the key from the dashboard.",
        "client_secret: {value}",
        "export TOKEN={value}",
    ]),
    "documented-example": (lambda: rng.choice([
        "AKIA" "IOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/" "bPxRfiCYEXAMPLEKEY",
        "sk_test_" "4eC39HqLyjWDarjtT1zdp7dc",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/" "K1SZFPTOtr/KBHBeksoGMGw==",
        "AC" + "X" * 32,
        "hooks.slack.com/services/T00000000/B00000000/" + "X" * 24,
        "xoxb-" "not-a-real-token-this-will-not-work",
    ]), [
        "The AWS docs use {value} in every example.",
        "aws_access_key_id = {value}",
        "aws_secret_access_key = {value}",
        "From the Stripe quickstart: stripe.api_key = '{value}'",
        "jwt.io decodes {value} to John Doe.",
        "Azurite: DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={value};",
        "The tutorial's sample value is {value}.",
        "Example from the vendor docs: {value}",
    ]),
    "hex-colour": (_colour, [
        "The brand colour is {value} on dark backgrounds.",
        "color: {value};",
        "--accent: {value};",
        "Use {value} for the error banner.",
    ]),
    "semver": (lambda: rng.choice([_semver(), "v" + _semver(), _semver() + "-rc." + str(rng.randint(1, 5)), _semver() + "+build." + str(rng.randint(1, 999))]), [
        "Upgrade the client to {value} before Friday.",
        "version: {value}",
        "\"fastpad\": \"^{value}\"",
        "Released {value} with the new importer.",
        "image: ghcr.io/acme/api:{value}",
    ]),
    "file-hash": (lambda: rng.choice([_sha256(), hashlib.md5(rng.randbytes(8)).hexdigest(), "sha256:" + _sha256()]), [
        "The installer's SHA-256 is {value}; verify it before running.",
        "md5sum says {value} for both copies.",
        "docker pull ghcr.io/acme/worker@{value}",
        "Checksum: {value}",
        "integrity hash {value} matches the release page.",
    ]),
    "package-integrity": (lambda: "sha512-" + b64(64), [
        "\"integrity\": \"{value}\"",
        "The lockfile pins {value} for left-pad.",
    ]),
    "public-key": (lambda: rng.choice(["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rand(43, B64) + " ana@laptop",
                                        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + rand(120, B64) + " deploy"]), [
        "Add {value} to authorized_keys on the bastion.",
        "My public key: {value}",
    ]),
    "code-identifier": (lambda: rng.choice([
        "getAccessTokenFromHeaders", "refreshTokenIfExpired", "SecretManagerServiceClient", "validate_api_key_format",
        "passwordResetRequestedAt", "XMLHttpRequestUpload", "tokenBucketRefillRate", "AuthorizationCodeFlowHandler",
    ]), [
        "Call {value}() before the request goes out.",
        "token = {value}",
        "api_key = self.{value}()",
        "The bug is in {value}, line 42.",
        "secret = {value}",
    ]),
    "config-metadata": (lambda: "", [
        "password_min_length: 12",
        "token_url: https://auth.example.com/oauth/token",
        "secret_name: prod-db-credentials",
        "api_key_header: X-Api-Key",
        "password_expires_at: 2026-03-01T00:00:00Z",
        "api_key_id: " + str(uuid.UUID(int=rng.getrandbits(128))),
        "token_type: Bearer",
        "password_policy: strong",
        "key_vault_name: acme-kv-prod",
        "secret_version: 7",
        "password_file: ./secrets/db.pass",
        "credentials_path: ~/.config/gcloud/application_default_credentials.json",
        "pwd: /home/ana/projects/fastpad",
        "max_tokens=4096 and temperature=0.2",
    ]),
    "public-identifier": (lambda: rng.choice([
        "cus_" + rand(14), "pi_" + rand(24), "price_" + rand(24), "pk_live_" + rand(24), "pk_test_" + rand(24),
        str(rng.randint(10**11, 10**12 - 1)) + "-" + rand(32, LOWER_ALNUM) + ".apps.googleusercontent.com",
        "arn:aws:iam::" + str(rng.randint(10**11, 10**12 - 1)) + ":role/deploy-" + rand(6, LOWER_ALNUM),
        rand(11, B64URL), "C0" + rand(9, string.ascii_uppercase + string.digits), str(rng.randint(10**17, 10**18)),
        "api-" + rand(10, HEX) + "-" + rand(5, LOWER_ALNUM), "acme-backups-" + rand(8, LOWER_ALNUM),
    ]), [
        "Customer {value} was charged twice.",
        "client_id: {value}",
        "The publishable key {value} is safe in the page source.",
        "id: {value}",
        "Pod {value} restarted three times tonight.",
        "Channel {value} is where the alerts land.",
        "arn: {value}",
        "video={value}",
    ]),
    "template-reference": (lambda: rng.choice([
        "${{ secrets.DEPLOY_TOKEN }}", "{{ vault_db_password }}", "os.getenv(\"API_KEY\")", "!vault |",
        "$(cat /run/secrets/db_password)", "ENC[AES256_GCM,data:...]", "{{ .Values.auth.secret }}", "%(SECRET)s",
    ]), [
        "token: {value}",
        "password: {value}",
        "api_key = {value}",
        "client_secret: {value}",
    ]),
    "prose": (lambda: "", [
        "The password policy requires 14 characters and a rotation every 90 days.",
        "Ask Priya for the API key; it lives in 1Password under 'billing'.",
        "We store the secret in Vault, never in a note.",
        "Password: see the shared vault entry 'staging db'.",
        "The bearer of this token gets read access to the wiki.",
        "Tokens expire after 30 days; refresh tokens after 90.",
        "Rotate every key that touched the laptop that was stolen.",
        "docker run -u 1000:1000 -v $(pwd):/src node:20 npm test",
        "git push -u origin feature/importer",
        "https://ana@example.org/wiki and git@gitlab.com:ops/infra.git",
        "postgres://user:password@localhost:5432/dev (the docker-compose default)",
        "Connect to redis://localhost:6379/0 without auth in dev.",
        "ISO timestamp 2026-11-30T23:59:59.999Z and epoch 1764547199",
        "Call +1-415-555-0132 if the pager fails.",
        "IPv6 fe80::1ff:fe23:4567:890a is the gateway.",
        "Cron: 0 3 * * 1-5 runs the nightly export.",
        "| setting | value |\n| --- | --- |\n| retries | 5 |\n| backoff | 2s |",
        "Pneumonoultramicroscopicsilicovolcanoconiosis is the longest word in the dictionary.",
        "SGVsbG8sIHdvcmxkIQ== is base64 for hello world.",
        "The quick brown fox jumps over the lazy dog, 1234567890 times.",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
        "kind: Secret\ndata:\n  password: ${DB_PASSWORD}",
        "Set `secret: true` on the field so it renders masked.",
        "auth: required, token: optional, key: ctrl+k",
        "The Slack bot is called xoxb-helper in the channel list.",
        "sk-learn-style-pipeline-adapter is the package name.",
        "Ticket AC-1042 and SK-88 are the same bug.",
        "Price: 4.99 USD / 3.99 EUR; discount code SPRING-2026.",
        "Release notes for 2.0.0-rc.1+build.5 are in the wiki.",
        "Use `key-value` pairs, not a list.",
        "The s.toString() call is slow.",
        "session timeout: 15m, csrf_token: rotated per form",
    ]),
}


def build_lookalikes() -> list[dict]:
    records = []
    for kind, (make, contexts) in LOOKALIKES.items():
        for context in contexts:
            repeats = 2 if kind in {"uuid", "git-sha", "ulid", "placeholder", "documented-example", "semver", "file-hash",
                                    "hex-colour", "data-uri"} else 1
            for _ in range(repeats):
                value = make()
                records.append({"kind": kind, "variant": "plain", "context": [context], "value": [value[:4], value[4:]]})
    return records


def _parts(context: str | tuple[str, ...]) -> list[str]:
    return [context] if isinstance(context, str) else list(context)


def _write(name: str, records: list[dict]) -> None:
    with (HERE / name).open("w") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    secrets, lookalikes = build_secrets(), build_lookalikes()
    _write("secrets.jsonl", secrets)
    _write("lookalikes.jsonl", lookalikes)
    print(f"{len(secrets)} secrets over {len({r['kind'] for r in secrets})} kinds, {len(lookalikes)} look-alikes")
