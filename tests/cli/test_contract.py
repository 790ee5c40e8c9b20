"""The published surface of `fp`: every exit code from a real condition, JSON and NDJSON purity,
the global flags on every command, and the command table as data."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import CliServer, Fp

EXIT_CODES = {
    0: "the requested effect happened",
    1: "unclassified failure",
    2: "usage error — unknown command, bad flag, missing stdin",
    3: "not authenticated, or the credential was rejected",
    4: "the target does not exist, or is no longer visible",
    5: "conflict — stale state, idempotency, ambiguity",
    6: "rate limited; retry_after_ms is on the problem document",
    7: "accepted locally and spooled for replay. Not a failure",
    8: "policy denied, including every attempt to approve a proposal",
}
SPEC_COMMANDS = {"capture", "add", "ask", "query", "watch", "turns", "diff", "turn-abandon", "accept", "pull", "push",
                 "mcp", "agents", "commands", "login", "init", "serve", "token", "user", "demo", "import"}
GLOBAL_FLAGS = {"--json", "--ndjson", "--quiet", "--dry-run", "--profile", "--timeout"}
NO_SUCH_TURN = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
BAD_TOKEN = "fpk_live_" + "A" * 43


def test_the_exit_code_table_is_pinned(fp: Fp):
    text = fp("--exit-codes")
    assert text.returncode == 0
    assert [line.split("\t") for line in text.stdout.splitlines()] == [[str(c), m] for c, m in EXIT_CODES.items()]
    as_data = json.loads(fp("--exit-codes", "--json").stdout)
    assert as_data == [{"code": c, "means": m} for c, m in EXIT_CODES.items()]


def test_every_exit_code_comes_from_a_real_condition(fp: Fp, cli_server: CliServer, tmp_path):
    person = {"FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": cli_server.person_token()}
    mirror = tmp_path / "mirror"
    (mirror / ".fastpad").mkdir(parents=True)
    (mirror / ".fastpad" / "manifest.json").write_text(json.dumps({"format": 1, "server": "http://elsewhere:1", "notes": {}}))
    throttled = {"FASTPAD_URL": cli_server.base_url,
                 "FASTPAD_TOKEN": cli_server.mint("notes:read", "--rate-limit", "1", "--label", "one a minute")}
    cases = [
        (0, ["turns"], person, None),
        (1, ["ask", "what did we decide?"], person, "provider-not-configured"),
        (2, ["capture", "--no-such-flag"], person, "usage"),
        (2, ["frobnicate"], person, "usage"),
        (3, ["turns"], {**person, "FASTPAD_TOKEN": BAD_TOKEN}, "unauthenticated"),
        (4, ["diff", NO_SUCH_TURN], person, "not-found"),
        (5, ["pull", str(mirror)], person, "conflict"),
        (0, ["turns"], throttled, None),
        (6, ["turns"], throttled, "rate-limited"),
        (7, ["capture", "no network here"], {**person, "FASTPAD_URL": "http://127.0.0.1:9"}, None),
        (8, ["agents"], {**person, "FASTPAD_TOKEN": cli_server.mint("notes:read")}, "policy-denied"),
    ]
    for code, args, env, slug in cases:
        result = fp(*args, "--json", env=env)
        assert result.returncode == code, (args, result.stdout, result.stderr)
        if slug is not None:
            assert result.stdout == "", f"{args}: nothing on stdout when it fails"
            problem = json.loads(result.stderr)
            assert problem["error"] == slug and problem["exit_code"] == code, problem
            if code == 6:
                assert problem["retry_after_ms"] > 0
        else:
            json.loads(result.stdout)


@pytest.mark.parametrize("mode", ["--json", "--ndjson"])
def test_json_modes_keep_stdout_pure(fp: Fp, cli_server: CliServer, mode: str):
    person = {"FASTPAD_URL": cli_server.base_url, "FASTPAD_TOKEN": cli_server.person_token()}
    assert fp("capture", "something to search for: purity", env=person).returncode == 0
    invocations = [
        ["turns"], ["query", "purity"], ["capture", "--status"], ["commands"], ["watch", "--once", "--from-start"],
        ["capture", "purity again"], ["diff", NO_SUCH_TURN], ["ask", "why?"], ["--version"], ["--exit-codes"],
        ["capture", "--help"],
    ]
    for args in invocations:
        result = fp(*args, mode, env=person)
        if mode == "--json" and args[0] != "watch":  # a stream is one object per line in either mode
            if result.stdout:
                json.loads(result.stdout)
        else:
            for line in result.stdout.splitlines():
                json.loads(line)
        if result.returncode != 0:
            assert result.stdout == "" and json.loads(result.stderr)["exit_code"] == result.returncode, args
        elif mode == "--json":
            assert result.stdout, args  # an empty list is no lines in NDJSON, but a document in JSON
    streamed = fp("query", "purity", "--ndjson", env=person).stdout.splitlines()
    assert len(streamed) >= 2 and all("note_id" in json.loads(line) for line in streamed), "one hit per line"


def test_every_command_takes_the_global_flags_and_the_table_is_data(fp: Fp):
    table = fp.json("commands")
    names = {c["name"] for c in table["commands"]}
    assert SPEC_COMMANDS <= names
    assert {flag for o in table["global_options"] for flag in o["flags"]} >= GLOBAL_FLAGS
    assert [row["code"] for row in table["exit_codes"]] == list(EXIT_CODES)
    capture = next(c for c in table["commands"] if c["name"] == "capture")
    assert {f for o in capture["options"] for f in o["flags"]} >= {"--file", "--status", "--flush"}
    assert not GLOBAL_FLAGS & {f for o in capture["options"] for f in o["flags"]}, "listed once, apart"
    for name in sorted(names):
        result = fp(name, "--quiet", "--dry-run", "--profile", "p", "--timeout", "5", "--ndjson", "--json", "--help")
        assert result.returncode == 0, (name, result.stderr)
        assert json.loads(result.stdout)["name"] == name
    ndjson = fp("commands", "--ndjson").stdout.splitlines()
    assert {json.loads(line)["name"] for line in ndjson} == names


def test_fp_turns_offers_the_servers_status_filters():
    """The CLI spells the filters out rather than import the review package at start-up; they must not drift."""
    from fastpad.cli.commands.turns import STATUS_FILTERS as CLI_FILTERS
    from fastpad.review.turns import STATUS_FILTERS

    assert CLI_FILTERS == STATUS_FILTERS
