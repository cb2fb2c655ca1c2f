"""The explorer in a real browser on the pages of whole runs (slow, ``make bench``): a
10,000-agent large_mesh compare, and the page ``make sim`` writes (issue 18's must-hold)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.browser_page import BROWSER_MARKS, REPO, Page, lit_seqs, open_page

pytestmark = BROWSER_MARKS  # the browser marks and skip


@pytest.mark.slow
def test_a_large_mesh_compare_page_opens(tab: Page, tmp_path: Path) -> None:
    """Issue 18: a 10,000-agent large_mesh compare writes a report.html under the size
    budget that opens without console errors (aggregated by agent type)."""
    out = tmp_path / "large-mesh"
    cmd = [sys.executable, "-m", "sim", "compare", "scenarios/large_mesh.yaml"]
    cmd += ["--replications", "1", "--out", str(out), "--quiet"]
    subprocess.run(cmd, cwd=REPO, check=True, capture_output=True)
    html = out / "report.html"
    assert html.stat().st_size <= 20 * 1024 * 1024
    seen = open_page(tab, html)
    labels = seen.page.locator("#mesh .nlabel").all_text_contents()
    assert sorted(x.split(" ")[0] for x in labels) == [
        "COORDINATOR",
        "GATEWAY",
        "LLM_AGENT",
        "TOOL_SERVER",
    ]
    assert seen.errors == [] and seen.blocked == []
    seen.page.screenshot(path=str(out / "explorer-mesh.png"))


@pytest.mark.slow
def test_make_sim_report_holds_the_issue_must_holds(tab: Page, tmp_path: Path) -> None:
    """Issue 18's must-hold on the page `make sim` writes (the same compare, its default
    10 replications per router, into a temporary folder): 5 agents and 6 links offline, the
    resilient router's recovery violations listed, a click through gw2 with MCP+→MCP."""
    dry = subprocess.run(["make", "-n", "sim"], cwd=REPO, check=True, capture_output=True)
    assert "-m sim compare scenarios/train_booking.yaml" in dry.stdout.decode()
    out = tmp_path / "train-booking"
    cmd = [sys.executable, "-m", "sim", "compare", "scenarios/train_booking.yaml", "--quiet"]
    subprocess.run([*cmd, "--out", str(out)], cwd=REPO, check=True, capture_output=True)
    seen = open_page(tab, out / "report.html")
    page = seen.page
    assert page.locator("#mesh .node").count() == 5 and page.locator("#mesh .link").count() == 6
    page.click("nav button[data-tab=viol]")
    recovery = page.locator(".group[data-name=recovery]")
    routers = {
        str(page.locator("#run option").nth(int(r)).text_content()).split("/")[0]
        for r in recovery.evaluate_all("es => es.map(e => e.getAttribute('data-run'))")
    }
    assert routers == {"resilient"}
    listed = sum(
        int(g) for g in recovery.evaluate_all("es => es.map(e => e.getAttribute('data-kept'))")
    )
    total = sum(
        json.loads(m.read_text())["violations"]["recovery"]
        for m in sorted((out / "resilient").glob("rep-*/metrics.json"))
    )
    assert listed == total > 0  # every one kept: at most the cap per run here
    page.locator(".cx[data-check=recovery]").first.click()
    assert any(h.startswith("gw2") for h in page.locator("#seq-head .lhead").all_text_contents())
    assert "translate MCP+→MCP" in " ".join(page.locator("#seq .box.translate").all_text_contents())
    assert lit_seqs(page)
    assert seen.errors == [] and seen.blocked == []
