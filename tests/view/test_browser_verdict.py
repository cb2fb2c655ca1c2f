"""The explorer's Verdict tab in a real browser (issue 37): the page opens on it, names
which router is better on which metric with the intervals and why, and sets every metric
side by side; the run shown first is the scenario's first router's first replication.
The page, the browser and its rules: tests/harness/browser_page.py's session fixtures."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from sim.experiments.report import fmt_stat
from sim.experiments.summary import Summary
from tests.harness.browser_page import CHROMIUM, Page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)"),
]


def test_the_page_opens_on_the_verdict(explorer: Page, results: Path) -> None:
    page = explorer.page
    assert page.locator("#tab-verdict").get_attribute("class") == "tab on"
    assert page.locator("nav button.on").text_content() == "Verdict"
    sentences = page.locator("#verdict ul.verdict li").all_text_contents()
    summary = Summary.from_json(json.loads((results / "summary.json").read_text(encoding="utf-8")))
    success = {r.router: r.metrics["success_rate"] for r in summary.at(None)}
    winner = max(success, key=lambda r: success[r].mean or 0.0)
    loser = min(success, key=lambda r: success[r].mean or 0.0)
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


def test_every_visual_element_of_the_mesh_and_the_timeline_is_in_a_legend(explorer: Page) -> None:
    page = explorer.page
    page.click("nav button[data-tab=mesh]")
    keys = page.locator("#legend [data-legend]").evaluate_all(
        "es => es.map(e => e.getAttribute('data-legend'))"
    )
    types = ["type:GATEWAY", "type:LLM_AGENT", "type:TOOL_SERVER"]
    assert keys[:3] == types and "message:MCP+" in keys
    assert {"translation", "drop", "down", "width"} <= set(keys)
    assert "arc" in keys  # the dashed caller-to-server arcs the replay draws
    page.click("nav button[data-tab=res]")
    shown = page.locator("#timeline .chartlegend").evaluate_all(
        "es => es.map(e => e.getAttribute('data-legend'))"
    )
    assert "node down" in shown and "dijkstra succeeded" in shown  # the gw1 outage's band


def test_the_lifeline_header_stays_while_the_chart_scrolls(explorer: Page) -> None:
    page = explorer.page
    page.click("nav button[data-tab=seq]")
    longest = max(
        page.locator("#instances li").evaluate_all(
            "es => es.map(e => [+e.textContent.split(' · ')[2].split(' ')[0], e.dataset.key])"
        )
    )
    page.locator(f"#instances li[data-key='{longest[1]}']").click()
    chart = page.locator(".chart")
    before = page.locator("#seq").bounding_box()
    chart.evaluate("c => { c.scrollTop = 300; }")
    head, box, after = (page.locator(s).bounding_box() for s in ("#seq-head", ".chart", "#seq"))
    assert before and head and box and after
    assert after["y"] < before["y"] - 250  # the chart moved up...
    assert abs(head["y"] - box["y"]) < 25  # ...its header (under the title) did not
    assert page.locator("#seq-head .lhead").count() >= 3


def test_violations_are_a_sortable_table_whose_rows_open_the_counterexample(
    explorer: Page,
) -> None:
    page = explorer.page
    page.click("nav button[data-tab=viol]")
    table = page.locator("table.viol-summary")
    heads = table.locator("thead th").all_text_contents()
    assert heads == ["run", "kind", "name", "violations", "kept"]

    def counts() -> list[int]:
        return [int(c) for c in table.locator("tbody tr td:nth-child(4)").all_text_contents()]

    table.locator("thead th", has_text="violations").click()
    assert counts() == sorted(counts()) and len(counts()) >= 2
    table.locator("thead th", has_text="violations").click()
    assert counts() == sorted(counts(), reverse=True)
    table.locator("tbody tr").first.click()
    assert page.locator("#tab-seq").get_attribute("class") == "tab on"
    assert page.locator("#seq .hl[data-seq]").count() >= 1


def test_the_cdf_ticks_are_round_values(explorer: Page) -> None:
    page = explorer.page
    page.click("nav button[data-tab=res]")
    ticks = [float(t) for t in page.locator("#cdf .xtick").all_text_contents()]
    assert 4 <= len(ticks) <= 11
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    [step] = steps
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in (1.0, 2.0, 5.0)
    assert all(abs(t / step - round(t / step)) < 1e-6 for t in ticks)


def test_without_a_summary_the_first_run_is_the_scenarios_first_router(
    tab: Page, results: Path, tmp_path: Path
) -> None:
    """A folder of runs (``run``, no summary.json) viewed with its scenario: the first run
    shown is the scenario's first router's rep-0 (resilient first here), no verdict tab."""
    import shutil

    from sim.scenario import load_scenario
    from sim.view import write_page
    from tests.harness.browser_page import TRAIN, open_page

    folder = tmp_path / "runs"
    for router in ("dijkstra", "resilient"):
        shutil.copytree(results / router, folder / router)
    scenario = load_scenario(TRAIN)
    backwards = scenario.model_copy(update={"routers": list(reversed(scenario.routers))})
    write_page(folder, tmp_path / "p.html", backwards)
    page = open_page(tab, tmp_path / "p.html").page
    assert page.locator("#run option:checked").text_content() == "resilient/rep-0"
    assert page.locator("#verdict-tab").is_hidden()
    assert page.locator("#tab-mesh").get_attribute("class") == "tab on"
