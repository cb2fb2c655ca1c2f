"""The experiment's figures, built by pure functions as matplotlib ``Figure`` objects.

Each function takes plain data (the summary object, per-run series, the scenario) and
returns a :class:`matplotlib.figure.Figure` with a title and labelled axes (units in
brackets), so tests can inspect it before :func:`save` writes it as PNG. Figures are
made without ``pyplot`` (no global state, no display): saving uses the Agg renderer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")

import networkx as nx
from matplotlib.figure import Figure

from sim.experiments.summary import VIOLATION_PREFIX, Summary

if TYPE_CHECKING:
    from sim.experiments.figures import MeshSketch

#: Above this many agents the mesh figure aggregates agents by type.
MESH_DRAW_LIMIT = 150

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")
_TYPE_COLOURS = {
    "LLM_AGENT": "#1f77b4",
    "GATEWAY": "#ff7f0e",
    "TOOL_SERVER": "#2ca02c",
    "COORDINATOR": "#9467bd",
}

#: Link colours by protocol set (none is an agent type's colour).
_SET_COLOURS = ("#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f", "#d62728")


def _colour(i: int) -> str:
    return _COLOURS[i % len(_COLOURS)]


def _figure(width: float = 7.0, height: float = 4.5) -> Figure:
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    return fig


def save(fig: Figure, path: Path) -> None:
    """Write ``fig`` as a PNG at ``path`` (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")


def _bars_with_ci(
    ax: Any,
    summary: Summary,
    point: str | None,
    routers: Sequence[str],
    metric: str,
    *,
    offset: float = 0.0,
    width: float = 0.6,
    colour: str | None = None,
    label: str | None = None,
) -> None:
    means: list[float] = []
    lows: list[float] = []
    highs: list[float] = []
    for router in routers:
        stat = summary.stat(point, router, metric)
        mean, lo, hi = (
            (None, None, None) if stat is None else (stat.mean, stat.ci_low, stat.ci_high)
        )
        m = float(mean) if mean is not None else 0.0
        means.append(m)
        lows.append(m - float(lo) if lo is not None else 0.0)
        highs.append(float(hi) - m if hi is not None else 0.0)
    xs = [i + offset for i in range(len(routers))]
    colours = colour or [_colour(i) for i in range(len(routers))]
    ax.bar(xs, means, width=width, color=colours, label=label)
    ax.errorbar(xs, means, yerr=[lows, highs], fmt="none", ecolor="black", capsize=5)


def success_rate_figure(
    summary: Summary, routers: Sequence[str], point: str | None = None
) -> Figure:
    """Workflow success rate per router: mean over replications with its 95 % CI."""
    fig = _figure()
    ax = fig.add_subplot()
    _bars_with_ci(ax, summary, point, routers, "success_rate")
    ax.set_xticks(range(len(routers)), list(routers))
    ax.set_ylim(0, 1.05)
    ax.set_title("Workflow success rate per router (mean, 95 % CI)")
    ax.set_xlabel("router")
    ax.set_ylabel("succeeded / started instances (fraction)")
    return fig


def violations_figure(summary: Summary, routers: Sequence[str], point: str | None = None) -> Figure:
    """Violations per 1,000 workflow instances, per conformance check and router, with
    95 % CIs (empty, and saying so, when the runs were not checked)."""
    checks: list[str] = []
    for row in summary.at(point):
        for metric in row.metrics:
            if metric.startswith(VIOLATION_PREFIX) and metric not in checks:
                checks.append(metric)
    checks.sort()
    fig = _figure(max(7.0, 1.2 * len(checks) + 3), 4.5)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(routers))
    for i, router in enumerate(routers):
        means: list[float] = []
        errs: list[list[float]] = [[], []]
        for metric in checks:
            stat = summary.stat(point, router, metric)
            m = float(stat.mean or 0.0) if stat is not None else 0.0
            lo, hi = (None, None) if stat is None else (stat.ci_low, stat.ci_high)
            means.append(m)
            errs[0].append(m - float(lo) if lo is not None else 0.0)
            errs[1].append(float(hi) - m if hi is not None else 0.0)
        xs = [k + (i - (len(routers) - 1) / 2) * width for k in range(len(checks))]
        ax.bar(xs, means, width=width, color=_colour(i), label=router)
        ax.errorbar(xs, means, yerr=errs, fmt="none", ecolor="black", capsize=3)
    names = [c.removeprefix(VIOLATION_PREFIX) for c in checks]
    ax.set_xticks(range(len(checks)), names, rotation=20, ha="right")
    ax.set_title("Conformance violations per check and router (mean, 95 % CI)")
    ax.set_xlabel("conformance check")
    ax.set_ylabel("violations per 1,000 workflow instances")
    ax.legend(title="router")
    if not checks:
        ax.text(
            0.5,
            0.9,
            "no conformance verdicts in these runs' metrics.json",
            transform=ax.transAxes,
            ha="center",
            fontsize=8,
        )
    return fig


def drops_reroutes_figure(
    summary: Summary, routers: Sequence[str], point: str | None = None
) -> Figure:
    """Messages dropped and reroutes per router (mean per run, 95 % CI), side by side."""
    fig = _figure(9.0, 4.5)
    fig.suptitle("Messages dropped and reroutes per router (mean per run, 95 % CI)")
    for k, (metric, title, ylabel) in enumerate(
        (
            ("messages_dropped", "Messages dropped", "dropped messages per run (count)"),
            ("reroutes", "Reroutes", "reroutes per run (count)"),
        )
    ):
        ax = fig.add_subplot(1, 2, k + 1)
        _bars_with_ci(ax, summary, point, routers, metric)
        ax.set_xticks(range(len(routers)), list(routers))
        ax.set_title(title)
        ax.set_xlabel("router")
        ax.set_ylabel(ylabel)
    return fig


def latency_cdf_figure(series: Mapping[str, Sequence[Mapping[str, Any]]]) -> Figure:
    """Empirical CDF of end-to-end latency of succeeded instances, all replications pooled."""
    fig = _figure()
    ax = fig.add_subplot()
    drawn = False
    for i, (router, runs) in enumerate(series.items()):
        values = sorted(float(x) for run in runs for x in run.get("latencies", []))
        if not values:
            continue
        n = len(values)
        ax.step(
            values, [(k + 1) / n for k in range(n)], where="post", color=_colour(i), label=router
        )
        drawn = True
    scale = "log"
    if drawn:
        every = [
            float(x) for runs in series.values() for run in runs for x in run.get("latencies", [])
        ]
        scale = latency_axis(ax, min(every), max(every))
        ax.legend(title="router")
    else:
        ax.text(
            0.5, 0.5, "no succeeded instances (or trace: off)", ha="center", transform=ax.transAxes
        )
    ax.set_ylim(0, 1.02)
    ax.set_title("End-to-end latency of succeeded workflows (CDF, all replications)")
    ax.set_xlabel(f"end-to-end latency (s{', log scale' if scale == 'log' else ''})")
    ax.set_ylabel("fraction of instances ≤ latency")
    ax.grid(True, alpha=0.3)
    return fig


#: the widest range (max / min) a latency axis shows on a linear scale
LINEAR_UP_TO = 10.0


def latency_axis(ax: Any, low: float, high: float) -> str:
    """Scale and tick ``ax``'s x axis for values in [low, high] (s); return the scale. A
    range over :data:`LINEAR_UP_TO` (or touching 0) is log, ticked at 1, 2 and 5 of each
    decade; a narrower one linear, with 5 to 9 round ticks: readable plain numbers on
    any range, never one or two labels."""
    from matplotlib.ticker import (
        FuncFormatter,
        LogLocator,
        MaxNLocator,
        NullFormatter,
        ScalarFormatter,
    )

    if low > 0 and high / low > LINEAR_UP_TO:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        return "log"
    span = (high - low) or max(abs(high), 1e-9)
    ax.set_xlim(low - 0.05 * span, high + 0.05 * span)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=8, steps=[1, 2, 2.5, 5, 10], min_n_ticks=5))
    ax.xaxis.set_major_formatter(ScalarFormatter(useOffset=False))
    return "linear"


def _frame(ax: Any, points: Sequence[tuple[float, float]]) -> None:
    """Limits holding every node of a layout with room for its marker and its label
    above: a fifth of the span (at least 0.2) on each side, a third above."""
    xs = [x for x, _ in points] or [0.0]
    ys = [y for _, y in points] or [0.0]
    dx = max(max(xs) - min(xs), 1.0) * 0.2
    dy = max(max(ys) - min(ys), 1.0) * 0.2
    ax.set_xlim(min(xs) - dx, max(xs) + dx)
    ax.set_ylim(min(ys) - dy, max(ys) + 1.6 * dy)


def timeline_figure(series: Mapping[str, Mapping[str, Any]], duration: float) -> Figure:
    """Completed workflows per minute per router (replication 0) against node and link
    outages (shaded; from the first router's run: outages do not depend on the router)."""
    fig = _figure(9.0, 4.5)
    ax = fig.add_subplot()
    outages: list[Any] = []
    for i, (router, run) in enumerate(series.items()):
        per_bucket = list(run.get("completions_per_minute", []))
        width = int(run.get("minutes_per_bucket", 1))  # minutes (1 unless the run is long)
        ax.plot(
            [(m + 0.5) * width for m in range(len(per_bucket))],
            [n / width for n in per_bucket],
            color=_colour(i),
            label=router,
            linewidth=1.2,
        )
        if not outages:
            outages = list(run.get("outages", []))
    shown: set[str] = set()
    for kind, element, start, end in outages:
        label = f"{kind} {element} down"
        ax.axvspan(
            float(start) / 60,
            float(end) / 60,
            color="grey" if kind == "node" else "orange",
            alpha=0.25,
            label=None if label in shown else label,
        )
        shown.add(label)
    ax.set_xlim(0, max(duration / 60, 1.0))
    ax.set_title("Completed workflows per minute and outages (replication 0)")
    ax.set_xlabel("simulated time (min)")
    ax.set_ylabel("workflows completed (per minute)")
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(True, alpha=0.3)
    return fig


def mesh_figure(mesh: MeshSketch, link_use: Mapping[str, Mapping[str, int]]) -> Figure:
    """The mesh (:class:`~sim.experiments.figures.MeshSketch` of the scenario) with the
    links each router's routes used most (replication 0).

    Up to :data:`MESH_DRAW_LIMIT` agents: one panel per router, agents coloured by
    type, links coloured by their protocol set, width and darkness by hops carried; no
    axes (layout coordinates mean nothing), a legend of types and protocol sets. Larger
    meshes: agents aggregated by type, a panel per router showing the hops carried
    between type pairs.
    """
    routers = list(link_use) or list(mesh.routers)
    cols = min(len(routers), 2) or 1
    rows = math.ceil(len(routers) / cols)
    fig = _figure(6.0 * cols, 5.0 * rows)
    large = len(mesh.agents) > MESH_DRAW_LIMIT
    if large:
        fig.suptitle(
            f"Mesh aggregated by agent type ({len(mesh.agents)} agents, "
            f"{len(mesh.links)} links): hops carried per type pair"
        )
    else:
        fig.suptitle("Mesh and the routes most used (link width: hops carried, replication 0)")
    types = dict(mesh.agents)
    # the drawn graph, its links' protocol sets and their colours: small meshes only (a
    # large one is drawn by type: its graph, never read, cost 0.1 s on 10,000 agents)
    graph = nx.Graph()
    link_protocols: dict[str, str] = {}
    set_colour: dict[str, str] = {}
    if not large:
        graph.add_nodes_from(agent for agent, _ in mesh.agents)
        graph.add_edges_from((a, b) for a, b, _ in mesh.links)
        link_protocols = {"|".join(sorted((a, b))): protocols for a, b, protocols in mesh.links}
        sets = sorted(set(link_protocols.values()))
        set_colour = {p: _SET_COLOURS[i % len(_SET_COLOURS)] for i, p in enumerate(sets)}
    if large:
        pos_types: dict[str, tuple[float, float]] = {}
        present = sorted({t for t in types.values()})
        for k, t in enumerate(present):
            angle = 2 * math.pi * k / max(1, len(present))
            pos_types[t] = (math.cos(angle), math.sin(angle))
        counts = {t: sum(1 for v in types.values() if v == t) for t in present}
    else:
        pos = nx.spring_layout(graph, seed=1) if len(graph) > 1 else {n: (0.0, 0.0) for n in graph}
    for i, router in enumerate(routers):
        ax = fig.add_subplot(rows, cols, i + 1)
        use = link_use.get(router, {})
        if large:
            traffic: dict[tuple[str, str], int] = {}
            items: list[tuple[str, str, int]] = [
                (k.split("|", 1)[0], k.split("|", 1)[-1], hops) for k, hops in use.items()
            ]
            if not items:  # no hops recorded (an older run): show the links per type pair
                items = [(a, b, 1) for a, b, _ in mesh.links]
            for a, b, hops in items:
                pair = tuple(sorted((types.get(a, "?"), types.get(b, "?"))))
                traffic[(pair[0], pair[1])] = traffic.get((pair[0], pair[1]), 0) + hops
            top = max(traffic.values(), default=1)
            for (ta, tb), hops in sorted(traffic.items()):
                if ta not in pos_types or tb not in pos_types:
                    continue
                (x1, y1), (x2, y2) = pos_types[ta], pos_types[tb]
                if ta == tb:
                    ax.scatter(
                        [x1],
                        [y1],
                        s=3000,
                        facecolors="none",
                        edgecolors="black",
                        linewidths=1 + 8 * hops / top,
                        alpha=0.4,
                    )
                else:
                    ax.plot(
                        [x1, x2], [y1, y2], color="black", linewidth=1 + 10 * hops / top, alpha=0.5
                    )
                ax.annotate(f"{hops}", ((x1 + x2) / 2, (y1 + y2) / 2), fontsize=7, ha="center")
            for t, (x, y) in pos_types.items():
                ax.scatter(
                    [x],
                    [y],
                    s=200 + 1200 * math.sqrt(counts[t] / len(types)),
                    color=_TYPE_COLOURS.get(t, "grey"),
                    zorder=3,
                )
                ax.annotate(
                    f"{t}\n{counts[t]} agents",
                    (x, y),
                    xytext=(0, -28),
                    textcoords="offset points",
                    ha="center",
                    fontsize=8,
                )
        else:
            top = max(use.values(), default=1) or 1
            for a, b in graph.edges():
                key = "|".join(sorted((a, b)))
                hops = use.get(key, 0)
                (x1, y1), (x2, y2) = pos[a], pos[b]
                ax.plot(
                    [x1, x2],
                    [y1, y2],
                    color=set_colour[link_protocols[key]],
                    linewidth=0.8 + 7 * hops / top,
                    alpha=0.3 + 0.6 * hops / top,
                    zorder=1,
                )
            for node in graph.nodes():
                x, y = pos[node]
                ax.scatter([x], [y], s=160, color=_TYPE_COLOURS.get(types[node], "grey"), zorder=3)
                if len(graph) <= 40:
                    ax.annotate(
                        node,
                        (x, y),
                        xytext=(0, 11),
                        textcoords="offset points",
                        ha="center",
                        fontsize=8,
                        zorder=4,
                        bbox={
                            "boxstyle": "round,pad=0.15",
                            "fc": "white",
                            "ec": "none",
                            "alpha": 0.8,
                        },
                    )
        if use:
            ax.set_title(f"{router}: {sum(use.values())} hops")
        else:
            ax.set_title(f"{router}: no hops recorded; links shown")
        ax.set_axis_off()  # layout coordinates mean nothing: no axes, a legend instead
        _frame(ax, list(pos_types.values()) if large else [tuple(p) for p in pos.values()])
        ax.legend(handles=_mesh_legend(types, {} if large else set_colour), fontsize=7)
    return fig


def _mesh_legend(types: Mapping[str, str], set_colour: Mapping[str, str]) -> list[Any]:
    """Legend entries: a dot per agent type present, a line per links' protocol set."""
    from matplotlib.lines import Line2D

    dots = [
        Line2D([], [], marker="o", ls="", color=_TYPE_COLOURS.get(t, "grey"), label=t)
        for t in sorted(set(types.values()))
    ]
    lines = [Line2D([], [], color=c, lw=2, label=f"link: {p}") for p, c in set_colour.items()]
    return dots + lines


def sweep_figure(
    summary: Summary, routers: Sequence[str], metric: str, parameter: str | None = None
) -> Figure:
    """``metric`` (mean, 95 % CI) against the swept parameter, one line per router.

    With one numeric parameter its values are the x axis; otherwise the points are
    placed in order and labelled with their parameter values.
    """
    points = [p for p in summary.points if p.id is not None]
    names = sorted({k for p in points for k in p.params})
    param = parameter if parameter is not None else (names[0] if len(names) == 1 else None)
    numeric = param is not None and all(
        isinstance(p.params.get(param), int | float) and not isinstance(p.params.get(param), bool)
        for p in points
    )
    if numeric and param is not None:
        xs = [float(p.params[param]) for p in points]
    else:
        xs = list(range(len(points)))
    fig = _figure()
    ax = fig.add_subplot()
    for i, router in enumerate(routers):
        got = []
        for x, p in zip(xs, points, strict=True):
            stat = summary.stat(p.id, router, metric)
            if stat is None or stat.mean is None:
                continue
            m = float(stat.mean)
            lo = float(stat.ci_low) if stat.ci_low is not None else m
            hi = float(stat.ci_high) if stat.ci_high is not None else m
            got.append((x, m, m - lo, hi - m))
        got.sort()
        if got:
            ax.errorbar(
                [g[0] for g in got],
                [g[1] for g in got],
                yerr=[[g[2] for g in got], [g[3] for g in got]],
                color=_colour(i),
                marker="o",
                capsize=4,
                label=router,
            )
    if not (numeric and param is not None):
        labels = [
            ", ".join(f"{k}={p.params[k]}" for k in sorted(p.params)) or str(p.id) for p in points
        ]
        ax.set_xticks(xs, labels, rotation=20, ha="right", fontsize=7)
    from sim.experiments.summary import UNITS

    unit = UNITS.get(metric, "count")
    xlabel = param if numeric and param is not None else "sweep point (parameter values)"
    ax.set_title(f"{metric} against {xlabel} (mean, 95 % CI)")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{metric} ({unit})")
    ax.legend(title="router")
    ax.grid(True, alpha=0.3)
    return fig
