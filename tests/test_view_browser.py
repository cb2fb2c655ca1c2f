"""The explorer in a real browser: the system Chromium, headless, from file://, with
every non-file request aborted. Skipped (with the reason) where no Chromium is installed.

The page is the one ``compare`` writes for train_booking (one replication per router,
1,000 s: the gw1 outage at 600 s and the first recovery violation under resilient at
653 s): the "must hold" of issue 18.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
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

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``compare`` of train_booking, one replication per router: report.html beside report.md."""
    out = tmp_path_factory.mktemp("results") / "train-booking"
    cmd = [sys.executable, "-m", "sim", "compare", "scenarios/train_booking.yaml"]
    cmd += [
        "--replications",
        "1",
        "--set",
        "duration=1000",
        "--jobs",
        "1",
        "--out",
        str(out),
        "--quiet",
    ]
    subprocess.run(cmd, cwd=REPO, check=True, capture_output=True)
    return out


class Page:
    """A loaded explorer page, with the console errors and the blocked requests seen."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.blocked: list[str] = []


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def explorer(browser: Any, results: Path) -> Iterator[Page]:
    seen = _open(browser, results / "report.html")
    yield seen
    assert seen.errors == [], seen.errors
    assert seen.blocked == [], seen.blocked
    seen.page.close()


def _open(browser: Any, html: Path) -> Page:
    """``html`` loaded from file:// with every other request aborted (and counted)."""
    page = browser.new_page(viewport={"width": 1300, "height": 820})
    seen = Page(page)

    def route(r: Any) -> None:
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            seen.blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.errors.append(str(e)))
    page.goto(html.as_uri())
    page.wait_for_selector("body[data-ready]")
    return seen


def _trace(results: Path, run: str) -> list[dict[str, Any]]:
    lines = (results / run / "trace.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines]


def test_mesh_has_the_scenario_nodes_and_links(explorer: Page, results: Path) -> None:
    page = explorer.page
    assert page.locator("#mesh .node").count() == 5
    assert page.locator("#mesh .link").count() == 6
    names = page.locator("#mesh .nlabel").all_text_contents()
    assert sorted(names) == ["accounts", "gw1", "gw2", "planner", "tickets"]
    page.locator("#slider").fill("130")  # the gw1 outage (from 600 s of 1,000 s)
    assert page.locator("#mesh .node.down").count() == 1
    page.screenshot(path=str(results / "explorer-mesh.png"))


def test_an_instance_draws_one_arrow_per_hop(explorer: Page, results: Path) -> None:
    page = explorer.page
    page.click("nav button[data-tab=seq]")
    item = page.locator("#instances li").nth(3)
    key = item.get_attribute("data-key")
    assert key is not None
    wf, inst = key.split("#")
    run = page.locator("#run option:checked").text_content()
    hops = [
        e
        for e in _trace(results, str(run))
        if e["label"] == "hop" and e["wf"] == wf and e["inst"] == int(inst)
    ]
    item.click()
    assert hops and page.locator("#seq .arrow").count() == len(hops)
    page.locator("#seq .arrow").first.hover()
    tip = json.loads(page.locator("#tip").text_content() or "{}")
    assert tip["seq"] == hops[0]["seq"] and tip["label"] == "hop"


def test_recovery_counterexample_click_highlights_its_events(explorer: Page, results: Path) -> None:
    """The must-hold: resilient's recovery violations are listed; a click draws the
    chart through gw2 with the MCP+→MCP translation marked and the offending seqs lit."""
    page = explorer.page
    page.click("nav button[data-tab=viol]")
    cx = page.locator(".cx[data-check=recovery]").first
    assert cx.count() == 1
    metrics = json.loads((results / "resilient" / "rep-0" / "metrics.json").read_text())
    first = metrics["conformance"]["checks"]["recovery"]["first"]
    assert cx.get_attribute("data-seqs") == ",".join(str(s) for s in sorted(first["seqs"]))
    cx.click()
    lit = page.locator("#seq .hl[data-seq]").evaluate_all(
        "es => es.map(e => +e.getAttribute('data-seq'))"
    )
    assert sorted(set(lit)) == sorted(first["seqs"])
    heads = page.locator("#seq .lhead").all_text_contents()
    assert any(h.startswith("gw2") for h in heads)
    translations = page.locator("#seq .box.translate").all_text_contents()
    assert "translate MCP+→MCP" in " ".join(translations)
    page.screenshot(path=str(results / "explorer-sequence.png"), full_page=True)


def test_results_tab_has_tables_and_cdf(explorer: Page) -> None:
    page = explorer.page
    page.click("nav button[data-tab=res]")
    routers = page.locator("#cdf .cdfline").evaluate_all(
        "es => es.map(e => e.getAttribute('data-router'))"
    )
    assert routers == ["dijkstra", "resilient"]
    page.locator("#cdf").hover()
    assert "% ≤" in (page.locator("#cdf-val").text_content() or "")
    assert page.locator("#tables table").count() == 2


@pytest.mark.slow
def test_a_large_mesh_compare_page_opens(browser: Any, tmp_path: Path) -> None:
    """Issue 18: a 10,000-agent large_mesh compare writes a report.html under the size
    budget that opens without console errors (aggregated by agent type)."""
    out = tmp_path / "large-mesh"
    cmd = [sys.executable, "-m", "sim", "compare", "scenarios/large_mesh.yaml"]
    cmd += ["--replications", "1", "--out", str(out), "--quiet"]
    subprocess.run(cmd, cwd=REPO, check=True, capture_output=True)
    html = out / "report.html"
    assert html.stat().st_size <= 20 * 1024 * 1024
    seen = _open(browser, html)
    labels = seen.page.locator("#mesh .nlabel").all_text_contents()
    assert sorted(x.split(" ")[0] for x in labels) == [
        "COORDINATOR",
        "GATEWAY",
        "LLM_AGENT",
        "TOOL_SERVER",
    ]
    assert seen.errors == [] and seen.blocked == []
    seen.page.screenshot(path=str(out / "explorer-mesh.png"))
