"""The typed summary and its file: ``summary.json`` is :meth:`Summary.to_json`, and
:meth:`Summary.from_json` reads it back to the same object, whatever its values."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.experiments.failing import FailedEveryInstance
from sim.experiments.point_verdict import PointVerdict, SideBySide
from sim.experiments.reasons import FailureReason
from sim.experiments.summary import (
    About,
    Point,
    Result,
    RunError,
    Stat,
    Summary,
    metric_order,
    summary_csv,
    summary_json,
)

VALUE = st.none() | st.floats(allow_nan=False, allow_infinity=False, width=64)
STAT = st.builds(Stat, st.integers(0, 50), VALUE, VALUE, VALUE, VALUE).map(Stat.rounded)
NAMES = ["success_rate", "latency_p95", "violations_per_1000.lts", "property_violations_per_1000.p"]
METRICS = st.dictionaries(st.sampled_from(NAMES), STAT).map(
    lambda m: {k: m[k] for k in sorted(m, key=metric_order)}  # as collect orders them
)
ROUTERS = ("dijkstra", "resilient")
TEXT = st.text(max_size=8)
SHARE = st.floats(0, 1, exclude_min=True)
REASONS = st.lists(
    st.builds(FailureReason, st.sampled_from(["no_route", "timeout"]), st.integers(1, 9), SHARE),
    max_size=2,
).map(tuple)
FAILED = st.none() | st.builds(
    FailedEveryInstance, st.integers(1, 9), st.integers(1, 9), st.none() | TEXT
)


def verdicts(points: tuple[Point, ...]) -> st.SearchStrategy[tuple[PointVerdict, ...] | None]:
    """A verdict per point, with texts of any characters (JSON escapes them)."""
    rows = st.lists(st.tuples(TEXT, TEXT, TEXT, TEXT), max_size=2).map(tuple)
    table = st.builds(SideBySide, st.just(("metric", "unit", *ROUTERS)), rows)
    one = [
        st.builds(
            PointVerdict,
            st.just(p.id),
            st.just(p.params),
            st.lists(TEXT, max_size=2).map(tuple),
            st.fixed_dictionaries({r: TEXT for r in ROUTERS}),
            table,
        )
        for p in points
    ]
    return st.none() | st.tuples(*one)


@st.composite
def summaries(draw: st.DrawFn) -> Summary:
    swept = draw(st.booleans())
    points = (
        tuple(Point(f"p{i}", {"routing.loss_penalty": float(i)}) for i in range(2))
        if swept
        else (Point(None, {}),)
    )
    results = tuple(
        Result(p.id, r, draw(st.integers(0, 5)), draw(METRICS), draw(REASONS), draw(FAILED))
        for p in points
        for r in ROUTERS
    )
    errors = tuple(
        RunError(f"{r}/rep-0", None, r, 0, draw(VALUE), "RuntimeError: x", None)
        for r in draw(st.lists(st.sampled_from(ROUTERS), max_size=2, unique=True))
    )
    about = draw(st.none() | st.just(About("s", None, 7)))
    verdict = draw(verdicts(points))
    return Summary(0.95, 3, ROUTERS, points, results, errors, ("resilient/rep-2",), about, verdict)


@settings(max_examples=25, deadline=None)
@given(summaries())
def test_summary_json_reads_back_to_the_same_summary(summary: Summary) -> None:
    text = summary_json(summary)
    back = Summary.from_json(json.loads(text))
    assert back == summary
    assert summary_json(back) == text and summary_csv(back) == summary_csv(summary)


@given(st.builds(Stat, st.integers(0, 50), VALUE, VALUE, VALUE, VALUE))
def test_a_stat_is_rounded_once_as_the_file_rounds_it(stat: Stat) -> None:
    assert stat.rounded().rounded() == stat.rounded()
    assert stat.rounded().to_json() == stat.to_json()


def test_metrics_read_back_in_the_order_collect_makes_them() -> None:
    names = ["property_violations_per_1000.a", "violations_per_1000.z", "reroutes", "success_rate"]
    assert sorted(names, key=metric_order) == [
        "success_rate",
        "reroutes",
        "violations_per_1000.z",
        "property_violations_per_1000.a",
    ]


def test_an_unrounded_stat_does_not_read_back() -> None:
    """What the summary holds is what the file holds: collect rounds every Stat first."""
    stat = Stat(2, 0.1234567891234, None, None, None)
    point = Point(None, {})
    summary = Summary(
        0.95, 2, ("bfs",), (point,), (Result(None, "bfs", 2, {"m": stat}, ()),), (), ()
    )
    back = Summary.from_json(json.loads(summary_json(summary)))
    assert back != summary and back.stat(None, "bfs", "m") == stat.rounded()
