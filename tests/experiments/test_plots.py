"""The figures draw the data they are given (bars, error bars, lines and spans read back from
the Axes), every panel is titled and labelled, and every plot file is a valid PNG."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from sim.experiments.compare import run_compare
from sim.experiments.figures import MeshSketch
from sim.experiments.runner import make_executor
from sim.experiments.summary import Point, Result, Stat, Summary, series_of, summary_json
from sim.experiments.sweep import expand, load_points, parse_set
from sim.scenario import load_scenario
from sim.scenario.model import Scenario

if TYPE_CHECKING:  # matplotlib is imported by the tests that draw, not at collection
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SMALL = Path(__file__).parents[1] / "fixtures" / "scenarios" / "small_mesh.yaml"
ROUTERS = ["dijkstra", "resilient"]
REPLICATIONS = 2
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class Experiment:
    """One small compare run with a two-point sweep, and what the figures are drawn from."""

    def __init__(self, out: Path, summary: Summary, scenario: Scenario) -> None:
        self.out, self.summary, self.scenario = out, summary, scenario
        point = Point("p0", {})
        self.runs = {r: series_of(out, point, r, REPLICATIONS) for r in ROUTERS}
        self.first = {r: self.runs[r][0] for r in ROUTERS}

    def stat(self, router: str, metric: str, point: str = "p0") -> Stat:
        stat = self.summary.stat(point, router, metric)
        assert stat is not None, (router, metric, point)
        return stat


@pytest.fixture(scope="module")
def plots() -> ModuleType:
    """:mod:`sim.experiments.plots` (it imports matplotlib: half a second, not paid at
    collection)."""
    from sim.experiments import plots

    return plots


@pytest.fixture(scope="module")
def experiment(tmp_path_factory: pytest.TempPathFactory) -> Experiment:
    tmp = tmp_path_factory.mktemp("plots")
    scenario = load_scenario(SMALL)
    loaded, _ = load_points(
        SMALL, scenario, expand(scenario, [parse_set("routing.loss_penalty=0.5,2")])
    )
    outcome = run_compare(
        scenario, loaded, ROUTERS, REPLICATIONS, tmp / "out", make_executor("local", 1)
    )
    return Experiment(tmp / "out", outcome.summary, scenario)


def _labelled(fig: Figure) -> None:
    assert fig.axes
    assert fig.axes[0].get_title() or fig.get_suptitle()
    for ax in fig.axes:
        assert ax.get_title(), "every panel has a title"
        assert ax.get_xlabel(), ax.get_title()
        assert ax.get_ylabel(), ax.get_title()


def _bars(ax: Axes) -> list[list[tuple[float, float]]]:
    """(x centre, height) of the bars of each bar call, in drawing order."""
    from matplotlib.container import BarContainer

    return [
        [(r.get_x() + r.get_width() / 2, r.get_height()) for r in c.patches]
        for c in ax.containers
        if isinstance(c, BarContainer)
    ]


def _error_bars(ax: Axes) -> list[list[tuple[float, float, float]]]:
    """(x, low, high) of each vertical error bar of each errorbar call, in drawing order."""
    from matplotlib.collections import LineCollection
    from matplotlib.container import ErrorbarContainer

    out = []
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer):
            (segments,) = [s for s in c.lines[2] if isinstance(s, LineCollection)]
            out.append([(seg[0][0], seg[0][1], seg[1][1]) for seg in segments.get_segments()])
    return out


def _x_extent(patch: Any) -> tuple[float, float]:
    """The x range, in data units, of an ``axvspan`` (a Rectangle, or a Polygon before
    matplotlib 3.9)."""
    from matplotlib.patches import Polygon, Rectangle

    if isinstance(patch, Rectangle):
        return patch.get_x(), patch.get_x() + patch.get_width()
    assert isinstance(patch, Polygon)
    xs = [float(x) for x in patch.get_xy()[:, 0]]
    return min(xs), max(xs)


def _mean_and_ci(stat: Stat) -> tuple[float, float, float]:
    assert stat.mean is not None and stat.ci_low is not None and stat.ci_high is not None
    return stat.mean, stat.ci_low, stat.ci_high


def test_success_rate_bars_are_the_summary(experiment: Experiment, plots: ModuleType) -> None:
    fig = plots.success_rate_figure(experiment.summary, ROUTERS, "p0")
    _labelled(fig)
    ax = fig.axes[0]
    expected = [_mean_and_ci(experiment.stat(r, "success_rate")) for r in ROUTERS]
    assert _bars(ax) == [[(float(i), pytest.approx(m)) for i, (m, _, _) in enumerate(expected)]]
    assert _error_bars(ax) == [
        [(float(i), pytest.approx(lo), pytest.approx(hi)) for i, (_, lo, hi) in enumerate(expected)]
    ]
    assert [t.get_text() for t in ax.get_xticklabels()] == ROUTERS
    assert 0 < expected[0][0] < 1  # a real rate, not a degenerate one


def test_drops_and_reroutes_panels_are_the_summary(
    experiment: Experiment, plots: ModuleType
) -> None:
    fig = plots.drops_reroutes_figure(experiment.summary, ROUTERS, "p0")
    _labelled(fig)
    assert fig.get_suptitle().startswith("Messages dropped and reroutes")
    for ax, metric in zip(fig.axes, ("messages_dropped", "reroutes"), strict=True):
        means = [experiment.stat(r, metric).mean for r in ROUTERS]
        assert [h for _, h in _bars(ax)[0]] == pytest.approx(means), metric
    dropped = [experiment.stat(r, "messages_dropped").mean for r in ROUTERS]
    assert max(dropped) > 0  # gw1's outage drops messages


def test_violation_bars_per_check_and_router(experiment: Experiment, plots: ModuleType) -> None:
    fig = plots.violations_figure(experiment.summary, ROUTERS, "p0")
    _labelled(fig)
    ax = fig.axes[0]
    metrics = sorted(
        m for m in experiment.summary.results[0].metrics if m.startswith("violations_per_1000.")
    )
    assert metrics, "the runs were checked"
    names = [m.removeprefix("violations_per_1000.") for m in metrics]
    assert [t.get_text() for t in ax.get_xticklabels()] == names
    bars = _bars(ax)
    assert len(bars) == len(ROUTERS)
    for router, drawn in zip(ROUTERS, bars, strict=True):
        means = [experiment.stat(router, m).mean or 0.0 for m in metrics]
        assert [h for _, h in drawn] == pytest.approx(means), router
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ROUTERS


def test_a_violation_shows_as_a_bar(plots: ModuleType) -> None:
    stat = Stat(2, 4.0, 1.0, 3.0, 5.0)
    metrics = {"violations_per_1000.write_approval": stat, "writes_without_approval": stat}
    summary = Summary(
        0.95,
        2,
        ("dijkstra",),
        (Point(None, {}),),
        (Result(None, "dijkstra", 2, metrics, ()),),
        (),
        (),
    )
    fig = plots.violations_figure(summary, ["dijkstra"])
    _labelled(fig)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["write_approval"]
    assert _bars(ax) == [[(0.0, 4.0)]]
    assert _error_bars(ax) == [[(0.0, 3.0, 5.0)]]


def test_latency_cdf_steps_through_the_pooled_latencies(
    experiment: Experiment, plots: ModuleType
) -> None:
    fig = plots.latency_cdf_figure(experiment.runs)
    _labelled(fig)
    ax = fig.axes[0]
    assert "latency" in ax.get_xlabel() and "(s" in ax.get_xlabel()
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ROUTERS
    for router, line in zip(ROUTERS, lines, strict=True):
        pooled = sorted(x for run in experiment.runs[router] for x in run["latencies"])
        assert len(pooled) > 10
        assert list(line.get_xdata()) == pooled
        assert list(line.get_ydata()) == [(k + 1) / len(pooled) for k in range(len(pooled))]


def test_timeline_draws_completions_and_outages(experiment: Experiment, plots: ModuleType) -> None:
    duration = experiment.scenario.duration
    fig = plots.timeline_figure(experiment.first, duration)
    _labelled(fig)
    ax = fig.axes[0]
    assert "min" in ax.get_xlabel()
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ROUTERS
    for router, line in zip(ROUTERS, lines, strict=True):
        per_minute = experiment.first[router]["completions_per_minute"]
        assert sum(per_minute) > 0
        assert list(line.get_ydata()) == per_minute
        assert list(line.get_xdata()) == [m + 0.5 for m in range(len(per_minute))]
    outages = experiment.first[ROUTERS[0]]["outages"]
    assert [o[:2] for o in outages] == [["node", "gw1"]]  # the scenario's one outage
    spans = [_x_extent(p) for p in ax.patches]
    assert spans == [(pytest.approx(o[2] / 60), pytest.approx(o[3] / 60)) for o in outages]
    assert ax.get_xlim() == (0.0, duration / 60)


def test_mesh_widths_follow_the_hops_carried(experiment: Experiment, plots: ModuleType) -> None:
    use = {r: experiment.first[r]["link_use"] for r in ROUTERS}
    fig = plots.mesh_figure(MeshSketch.of(experiment.scenario), use)
    assert fig.get_suptitle().startswith("Mesh and the routes most used")
    links = len(experiment.scenario.links)
    sets = {
        "|".join(sorted(lk.between)): ", ".join(sorted(lk.latency))
        for lk in experiment.scenario.links
    }
    types = sorted({a.type.value for a in experiment.scenario.agents})
    for ax, router in zip(fig.axes, ROUTERS, strict=True):
        hops = use[router]
        assert ax.get_title() == f"{router}: {sum(hops.values())} hops"
        assert not ax.axison  # no meaningless layout axes
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == types + [f"link: {p}" for p in sorted(set(sets.values()))]
        colour = {h.get_label(): h.get_color() for h in ax.get_legend().legend_handles}
        drawn = sorted(line.get_color() for line in ax.get_lines())
        assert drawn == sorted(colour[f"link: {p}"] for p in sets.values())
        widths = sorted(line.get_linewidth() for line in ax.get_lines())
        assert len(widths) == links
        top = max(hops.values())
        expected = sorted(
            0.8 + 7 * hops.get("|".join(sorted(link.between)), 0) / top
            for link in experiment.scenario.links
        )
        assert widths == pytest.approx(expected)


def test_a_large_mesh_is_aggregated(plots: ModuleType) -> None:
    agents = tuple((f"a{i}", "LLM_AGENT") for i in range(plots.MESH_DRAW_LIMIT + 5))
    sketch = MeshSketch(agents, (), ("dijkstra",))
    fig = plots.mesh_figure(sketch, {"dijkstra": {"a0|a1": 3}})
    assert not fig.axes[0].axison
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["LLM_AGENT"]
    assert "aggregated" in fig.get_suptitle()
    assert f"{plots.MESH_DRAW_LIMIT + 5} agents" in fig.get_suptitle()
    assert fig.axes[0].get_title() == "dijkstra: 3 hops"


def test_a_large_mesh_builds_no_graph_of_its_agents(
    plots: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Drawn by type, a large mesh needs no graph of its agents and links (on 10,000
    agents building it cost 0.1 s of the figure's 0.5-0.6, and nothing read it)."""
    n = plots.MESH_DRAW_LIMIT + 5
    agents = tuple((f"a{i}", "LLM_AGENT" if i % 2 else "GATEWAY") for i in range(n))
    links = tuple((f"a{i}", f"a{i + 1}", "MCP") for i in range(n - 1))
    built: list[int] = []

    class Counted(plots.nx.Graph):  # type: ignore[name-defined,misc]
        def add_nodes_from(self, nodes: Any, **attr: Any) -> None:
            built.append(len(list(nodes)))

        def add_edges_from(self, edges: Any, **attr: Any) -> None:
            built.append(len(list(edges)))

    monkeypatch.setattr(plots.nx, "Graph", Counted)
    fig = plots.mesh_figure(MeshSketch(agents, links, ("dijkstra",)), {"dijkstra": {"a0|a1": 3}})
    assert "aggregated" in fig.get_suptitle()
    assert built == []


def test_sweep_lines_are_the_points_means(experiment: Experiment, plots: ModuleType) -> None:
    from matplotlib.container import ErrorbarContainer

    fig = plots.sweep_figure(experiment.summary, ROUTERS, "success_rate")
    _labelled(fig)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "routing.loss_penalty"
    drawn = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert [c.get_label() for c in drawn] == ROUTERS
    for router, container, bars in zip(ROUTERS, drawn, _error_bars(ax), strict=True):
        line = container.lines[0]
        assert list(line.get_xdata()) == [0.5, 2.0]
        stats = [experiment.stat(router, "success_rate", p) for p in ("p0", "p1")]
        assert list(line.get_ydata()) == pytest.approx([s.mean for s in stats])
        assert bars == [
            (x, pytest.approx(s.ci_low), pytest.approx(s.ci_high))
            for x, s in zip((0.5, 2.0), stats, strict=True)
        ]


def test_plot_files_are_png_and_in_the_report(experiment: Experiment) -> None:
    files = sorted((experiment.out / "plots").glob("*.png"))
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
    report = (experiment.out / "report.md").read_text()
    for f in files:
        assert f"(plots/{f.name})" in report


def test_the_summary_object_is_summary_json(experiment: Experiment) -> None:
    """``summary.json`` is the typed summary's serialisation, and reads back to it."""
    text = (experiment.out / "summary.json").read_text(encoding="utf-8")
    assert summary_json(experiment.summary) == text
    back = Summary.from_json(json.loads(text))
    assert back == experiment.summary
    assert back.stat("p1", ROUTERS[0], "success_rate") == experiment.stat(
        ROUTERS[0], "success_rate", "p1"
    )
    assert back.stat("p1", ROUTERS[0], "no_such_metric") is None
    assert back.result("p9", ROUTERS[0]) is None
    changed = dataclasses.replace(back, replications=back.replications + 1)
    assert summary_json(changed) != text  # the file is the object: a change shows
