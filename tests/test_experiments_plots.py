"""Every figure has a title and labelled axes; every plot file is a valid PNG."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.figure import Figure
from test_experiments_compare import SMALL

from sim.experiments import plots
from sim.experiments.compare import run_compare
from sim.experiments.runner import make_executor
from sim.experiments.summary import Point, series_of
from sim.experiments.sweep import expand, load_points, parse_set
from sim.scenario import load_scenario

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _labelled(fig: Figure) -> None:
    assert fig.axes
    assert fig.axes[0].get_title() or (fig._suptitle is not None and fig._suptitle.get_text())
    for ax in fig.axes:
        assert ax.get_title(), "every panel has a title"
        assert ax.get_xlabel(), ax.get_title()
        assert ax.get_ylabel(), ax.get_title()


@pytest.fixture(scope="module")
def experiment(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, object]:
    tmp = tmp_path_factory.mktemp("plots")
    file = tmp / "small.yaml"
    file.write_text(SMALL, encoding="utf-8")
    scenario = load_scenario(file)
    loaded, _ = load_points(
        file, scenario, expand(scenario, [parse_set("routing.loss_penalty=0.5,2")])
    )
    outcome = run_compare(
        scenario, loaded, ["dijkstra", "resilient"], 2, tmp / "out", make_executor("local", 1)
    )
    return tmp / "out", outcome.summary, outcome


def test_every_figure_is_titled_and_labelled(experiment: tuple[Path, dict, object]) -> None:
    base, summary, _ = experiment
    routers = ["dijkstra", "resilient"]
    scenario = load_scenario(base.parent / "small.yaml")
    point = Point("p0", {})
    runs = {r: series_of(base, point, r, 2) for r in routers}
    first = {r: runs[r][0] for r in routers}
    figures = [
        plots.latency_cdf_figure(runs),
        plots.success_rate_figure(summary, routers, "p0"),
        plots.violations_figure(summary, routers, "p0"),
        plots.drops_reroutes_figure(summary, routers, "p0"),
        plots.timeline_figure(first, 300.0),
        plots.mesh_figure(scenario, {r: first[r]["link_use"] for r in routers}),
        plots.sweep_figure(summary, routers, "success_rate"),
    ]
    for fig in figures:
        _labelled(fig)
    cdf = figures[0].axes[0]
    assert "latency" in cdf.get_xlabel() and "(s" in cdf.get_xlabel()
    assert figures[6].axes[0].get_xlabel() == "routing.loss_penalty"
    assert "min" in figures[4].axes[0].get_xlabel()


def test_plot_files_are_png(experiment: tuple[Path, dict, object]) -> None:
    base, _, _outcome = experiment
    files = sorted((base / "plots").glob("*.png"))
    names = {f.stem for f in files}
    assert {
        "latency_cdf",
        "success_rate",
        "violations",
        "drops_reroutes",
        "timeline",
        "mesh",
        "sweep_success_rate",
    } <= names
    for f in files:
        assert f.read_bytes()[:8] == PNG_MAGIC
    report = (base / "report.md").read_text()
    for f in files:
        assert f"(plots/{f.name})" in report


def test_violations_are_plotted_when_present() -> None:
    stat = {"n": 2, "mean": 1.0, "std": 0.0, "ci_low": 1.0, "ci_high": 1.0}
    summary = {
        "points": [{"id": None, "params": {}}],
        "results": [
            {
                "point": None,
                "router": "dijkstra",
                "metrics": {
                    "violations_per_1000.write_approval": stat,
                    "writes_without_approval": stat,
                },
            }
        ],
    }
    fig = plots.violations_figure(summary, ["dijkstra"])
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "write_approval" in labels
    _labelled(fig)


def test_large_mesh_is_aggregated() -> None:
    from sim.scenario.model import AgentSpec, AgentType, Scenario

    agents = [
        AgentSpec(id=f"a{i}", type=AgentType.LLM_AGENT, protocols={"MCP": 1.0})
        for i in range(plots.MESH_DRAW_LIMIT + 5)
    ]
    scenario = Scenario.model_construct(name="x", agents=agents, links=[], routers=["dijkstra"])
    fig = plots.mesh_figure(scenario, {"dijkstra": {"a0|a1": 3}})
    assert "aggregated" in fig._suptitle.get_text()
    _labelled(fig)
