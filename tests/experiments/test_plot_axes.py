"""Readable latency ticks on any range, the mesh inside its frame (issue 37, item 11)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.experiments import plots
from sim.experiments.figures import MeshSketch


def _labels(low: float, high: float) -> tuple[str, list[str]]:
    """The scale and the x tick labels within the data a CDF of [low, high] shows."""
    n = 40
    values = [low + (high - low) * k / (n - 1) for k in range(n)]
    fig = plots.latency_cdf_figure({"r": [{"latencies": values}]})
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    locs = [v for v in ax.xaxis.get_majorticklocs() if lo <= v <= hi]
    shown = ax.xaxis.get_major_formatter().format_ticks(locs)
    return ax.get_xscale(), [t for t in shown if t]


@settings(max_examples=15, deadline=None)
@given(st.floats(1e-3, 1e3), st.floats(1.001, 1e4))
def test_every_range_gets_enough_plain_tick_labels(low: float, factor: float) -> None:
    scale, shown = _labels(low, low * factor)
    assert scale == ("log" if factor > plots.LINEAR_UP_TO else "linear")
    assert len(shown) >= (3 if scale == "log" else 5), shown
    assert not any("^" in t or "$" in t for t in shown), shown  # 20, not 2 × 10^1
    assert len(set(shown)) == len(shown)  # enough digits to tell them apart


def test_a_narrow_range_is_linear_with_round_ticks() -> None:
    scale, shown = _labels(1.0, 1.05)
    assert scale == "linear" and shown == ["1.00", "1.01", "1.02", "1.03", "1.04", "1.05"]


def test_every_node_of_the_mesh_is_inside_its_frame() -> None:
    agents = tuple((f"a{i}", "LLM_AGENT" if i else "TOOL_SERVER") for i in range(12))
    links = tuple((f"a{i}", f"a{i + 1}", "MCP") for i in range(11))
    fig = plots.mesh_figure(MeshSketch(agents, links, ("dijkstra",)), {"dijkstra": {"a0|a1": 5}})
    ax = fig.axes[0]
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    points = [tuple(p) for c in ax.collections for p in c.get_offsets()]
    assert len(points) == 12
    for x, y in points:  # an eighth of the frame kept free around each node
        assert x0 + (x1 - x0) / 8 <= x <= x1 - (x1 - x0) / 8
        assert y0 + (y1 - y0) / 8 <= y <= y1 - (y1 - y0) / 8
