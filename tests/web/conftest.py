"""Browser tests: Debian's chromium, driven by Playwright's sync API, against a real ``fp serve``.

What a test here gets:

* ``web_server`` (session) — ``fp init`` + ``fp serve`` on SQLite, started by
  ``tests/api/conftest.py``'s ``start_server``: ``base_url``, ``owner_email``,
  ``owner_password``, ``data_dir``, ``mint(scopes, *fp_token_create_args)`` and
  ``client(token)`` for checking outcomes over HTTP.
* ``browser`` (package) — one headless ``/usr/bin/chromium`` for every test in ``tests/web``.
  If it cannot start the browser tests are skipped, except under ``CI=true``, where they fail.
  While it is open the thread has Playwright's event loop running (the sync API keeps it in a
  greenlet), so nothing else may ``asyncio.run``/``anyio.run`` then: that is why it closes as
  soon as this package's tests are done instead of at the end of the session.
* ``context`` (per test) — a fresh browser context (no cookies), 1280×800, closed after.
* ``signed_in`` (per test) — a page of ``context`` signed in as the owner through the
  ``/signin`` form, by typing and clicking (``sign_in`` does the same for any page).
* ``session_state`` (module) — one real sign-in through the form, its storage state shared by
  ``device``; ``device`` (per test) — a factory of signed-in contexts (several devices of one
  person), failing the test if a page threw or logged an error of its own;
* ``api`` (module) — an httpx client with the owner's token, for reading outcomes;
  ``tests/web/helpers.py`` holds what tests do with it and with pages (create a note, open it,
  wait until it is saved, read its blocks).
* ``screenshot(page, name)`` — a full-page PNG in ``build/screenshots/`` (an artifact,
  never committed).

Never sleep: Playwright's actions and ``expect`` wait for what they need, and
``page.wait_for_url`` / ``page.expect_response`` wait for a form's answer.

Sign-in is rate limited to 20 attempts a minute per client address, and the
browser always comes from 127.0.0.1: keep real sign-ins to one per test that needs one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx
import pytest

from tests.api.conftest import Server, start_server, stop

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

CHROMIUM = "/usr/bin/chromium"  # Debian's package (tools/ensure_chromium.sh), not a Playwright download
# No GPU, and nothing the browser would fetch or sync on its own during a test.
CHROMIUM_ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 800}
ACTION_TIMEOUT_MS = 30_000  # a form answers in well under a second; the ceiling is for a loaded 2-core CI machine
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    # Every browser test signs the owner in, and each open note page polls presence: the owner's
    # 1,200 requests a minute is a real limit (tests/api/test_limits.py), not this server's concern.
    server = start_server(tmp_path_factory.mktemp("web-server"), "sqlite", limits={"person_per_minute": 100_000})
    yield server
    stop(server.process)


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    try:  # imported here, not at the top: tests in this directory that need no browser still run without it
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _unavailable(f"Playwright is not installed ({exc}); run make install-dev")
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    except Exception as exc:  # noqa: BLE001 - whatever the launch error, it means the same: no browser here
        playwright.stop()
        _unavailable(f"{CHROMIUM} did not start ({exc}); run tools/ensure_chromium.sh")
    yield chromium
    chromium.close()
    playwright.stop()


def _unavailable(reason: str) -> None:
    # A developer without chromium still runs the rest of the suite; CI must not pass without the browser tests.
    if os.environ.get("CI") == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    yield context
    context.close()


@pytest.fixture
def signed_in(context: BrowserContext, web_server: Server) -> Page:
    page = context.new_page()
    page.goto(f"{web_server.base_url}/signin")
    sign_in(page, web_server)
    return page


@pytest.fixture(scope="module")
def session_state(browser: Browser, web_server: Server) -> dict:
    """One real sign-in through the form; every context of this module reuses its session."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.goto(f"{web_server.base_url}/signin?next=/")
    sign_in(page, web_server)
    page.wait_for_selector(".sidebar")
    state = context.storage_state()
    context.close()
    return state


@pytest.fixture
def device(browser: Browser, session_state: dict) -> Iterator[Callable[..., BrowserContext]]:
    """A factory of signed-in browser contexts (devices), closed after the test. A test fails
    if a page threw or logged an error of its own (a refused request's log line is the
    browser's, and expected where a test provokes one)."""
    opened, errors = [], []

    def open_device(**options: Any) -> BrowserContext:
        context = browser.new_context(viewport=options.pop("viewport", VIEWPORT), storage_state=session_state, **options)
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        context.on("weberror", lambda error: errors.append(str(error.error)))
        context.on("console", lambda message: message.type == "error"
                   and not message.text.startswith("Failed to load resource") and errors.append(message.text))
        opened.append(context)
        return context

    yield open_device
    for context in opened:
        context.close()
    assert errors == [], errors


@pytest.fixture(scope="module")
def api(web_server: Server) -> Iterator[httpx.Client]:
    with web_server.client(web_server.token("owner")) as client:
        yield client


def sign_in(page: Page, server: Server, *, password: str | None = None) -> None:
    """Fill in the sign-in form the page shows and click Sign in, as a person would.

    The page must be on ``/signin`` (opened directly, or sent there by a signed-out page). On the
    right password this waits until the browser has left ``/signin`` for the page it was going to.
    """
    page.get_by_label("Email").fill(server.owner_email)
    page.get_by_label("Password").fill(server.owner_password if password is None else password)
    page.get_by_role("button", name="Sign in").click()
    if password is None:
        page.wait_for_url(lambda url: "/signin" not in url)


def signin_url(server: Server, next_path: str) -> str:
    return f"{server.base_url}/signin?next={quote(next_path, safe='/')}"


def screenshot(page: Page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
