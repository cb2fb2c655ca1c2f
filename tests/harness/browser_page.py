"""The explorer page in a real browser, shared by the browser tests (a plugin of
tests/conftest.py, so that one session builds the results once and each browser module
starts Chromium once): the system Chromium, headless, from file://, every non-file request
aborted.

The page is the one ``compare`` writes for train_booking (one replication per router),
300 s with the gw1 outage moved from 600-900 s to 100-200 s (:data:`SHORT`): the outage,
its drops and failed instances, and resilient's recovery violations (the first at 134 s),
at a third of the page the 1,000 s the outage needs where the scenario places it: the
"must hold" of issue 18.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness.paths import REPO
from tests.harness.session_once import built_once

TRAIN = REPO / "scenarios" / "train_booking.yaml"
CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: ``--set`` options of the runs: 300 s, the gw1 outage from 100 s to 200 s.
SHORT = ["--set", "duration=300", "--set", "failures.0.at=100", "--set", "failures.0.for=100"]


@pytest.fixture(scope="session")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``compare`` of train_booking (:data:`SHORT`), one replication per router, in this
    process: report.html beside report.md (no figures: the page is the same bytes without),
    once per session (``built_once``); the tests add their screenshots beside it."""

    def build(out: Path) -> None:
        from sim.cli import main

        argv = ["compare", str(TRAIN), "--replications", "1", *SHORT, "--jobs", "1"]
        assert main([*argv, "--no-plots", "--out", str(out), "--quiet"]) == 0

    return built_once(tmp_path_factory, "train-booking", build)


class Page:
    """A loaded explorer page, with the console errors and the blocked requests seen."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.blocked: list[str] = []


@pytest.fixture(scope="module")
def tab() -> Iterator[Page]:
    """The module's one page, in an offline context, every non-file request aborted (and
    counted): each test loads its document into it afresh (:func:`open_page`), a new document
    that keeps nothing of the test before (the explorer keeps nothing in storage).

    Module-scoped, not session-scoped: Playwright's sync API leaves its event loop marked
    running in the worker's thread until it stops, so every later ``asyncio.run`` in that
    worker (the MCP and A2A tests) would fail while it lives
    (tests/view/test_browser_isolation.py)."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1300, "height": 820}, offline=True)
        seen = Page(context.new_page())

        def route(r: Any) -> None:
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                seen.blocked.append(r.request.url)
                r.abort()

        seen.page.route("**/*", route)
        seen.page.on("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None)
        seen.page.on("pageerror", lambda e: seen.errors.append(str(e)))
        yield seen
        browser.close()


@pytest.fixture
def explorer(tab: Page, results: Path) -> Iterator[Page]:
    seen = open_page(tab, results / "report.html")
    yield seen
    assert seen.errors == [], seen.errors
    assert seen.blocked == [], seen.blocked


def open_page(tab: Page, html: Path) -> Page:
    """``tab`` with ``html`` loaded from file:// (a new document; the pointer moved off it
    and the errors and blocked requests counted from here)."""
    tab.page.mouse.move(0, 0)
    tab.errors.clear()
    tab.blocked.clear()
    tab.page.goto(html.as_uri())
    tab.page.wait_for_selector("body[data-ready]")
    return tab


#: the marks of every browser test module (``pytestmark = BROWSER_MARKS``)
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)"),
]


def lit_seqs(page: Any, cls: str = "hl") -> list[int]:
    seqs = page.locator(f"#seq .{cls}[data-seq]").evaluate_all(
        "es => es.map(e => +e.getAttribute('data-seq'))"
    )
    return sorted(set(seqs))
