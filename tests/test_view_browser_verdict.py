"""The explorer's Verdict tab in a real browser (issue 37): the page opens on it, names
which router is better on which metric with the intervals and why, and sets every metric
side by side; the run shown first is the scenario's first router's first replication.
The page, the browser and its rules are test_view_browser's (its fixtures, imported)."""

from __future__ import annotations

import json
from pathlib import Path

from test_view_browser import Page, explorer, pytestmark, results, tab

from sim.experiments.report import fmt_stat

__all__ = ["explorer", "pytestmark", "results", "tab"]


def test_the_page_opens_on_the_verdict(explorer: Page, results: Path) -> None:
    page = explorer.page
    assert page.locator("#tab-verdict").get_attribute("class") == "tab on"
    assert page.locator("nav button.on").text_content() == "Verdict"
    sentences = page.locator("#verdict ul.verdict li").all_text_contents()
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    success = {
        r["router"]: r["metrics"]["success_rate"] for r in summary["results"] if r["point"] is None
    }
    winner = max(success, key=lambda r: success[r]["mean"])
    loser = min(success, key=lambda r: success[r]["mean"])
    said = next(s for s in sentences if "success_rate" in s)
    shown = f"{fmt_stat(success[winner])} against {fmt_stat(success[loser])}"
    one = "(one replication: no interval)."
    assert said == f"{winner} is better than {loser} on success_rate: {shown} {one}"
    why = page.locator("#verdict ul.why li[data-router=resilient]").text_content() or ""
    assert why.startswith("resilient: failed tasks: ") and "translations " in why


def test_the_side_by_side_table_has_a_column_per_router(explorer: Page) -> None:
    page = explorer.page
    head = page.locator("#verdict table.side thead th").all_text_contents()
    assert head == ["metric", "unit", "dijkstra", "resilient"]
    first = page.locator("#verdict table.side tbody tr").first.locator("td").all_text_contents()
    assert first[:2] == ["success_rate", "fraction"] and len(first) == 4


def test_the_first_run_is_the_first_routers_first_replication(explorer: Page) -> None:
    assert explorer.page.locator("#run option:checked").text_content() == "dijkstra/rep-0"
