"""Progress guards (issue 16, items 7 and 10): the three legal but extreme inputs stop with
the scenario element that drives their events, located; a run the guard does not stop is
the unguarded run, event for event."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import simpy

from sim.calculus.mcp import BACKOFF_CAP, backoff, tool_lts
from sim.calculus.mcp.invocation import RETRY_STATES
from sim.cli import main
from sim.cli.console import guard_of, memory_size
from sim.engine import ReplicationError, run_replication
from sim.engine.guard import (
    DEFAULT_MAX_EVENTS,
    DEFAULT_MAX_MEMORY,
    UNBOUNDED,
    Guard,
    Runaway,
    resident_bytes,
    size_text,
)
from sim.engine.loop import CHECK_EVERY, run_until
from sim.scenario import load_scenario

REPO = Path(__file__).resolve().parents[2]
BASE = (REPO / "scenarios" / "gateway_failover.yaml").read_text(encoding="utf-8")
SEARCH_MODES = (
    "failure_modes: [{error: ServiceDown, recovery: {retry: 2}}]\n"
    "    service_time: {dist: exponential, mean: 0.08}\n"
    "    errors: {ServiceDown: 0.01}"
)
SCHEDULED = "failures:\n  - {node: gw-fast, at: 300, for: 2400}"
#: the three inputs of issue 16 item 10, each as (edits of the text, line marker, reason,
#: field); a retry bound is at most 100 since issue 38 (a billion is refused at load)
EXTREMES = {
    "retry": (
        (
            (
                SEARCH_MODES,
                SEARCH_MODES.replace("retry: 2", "retry: 100").replace(
                    "ServiceDown: 0.01", "ServiceDown: 1.0"
                ),
            ),
            ("rate: 0.2", "rate: 5"),  # 300 instances of 100 retries each (the bound)
        ),
        "retry: 100",
        "tool 'search_offers' retries without bound: retry 100",
        "tools[0].failure_modes[0].recovery.retry",
    ),
    "rate": (
        (("rate: 0.2", "rate: 1e6"),),  # the largest rate (a microsecond's gap)
        "rate: 1e6",
        "workflow 'book' starts instances without bound: rate 1e+06",
        "workflows[0].arrivals.rate",
    ),
    "mtbf": (
        ((SCHEDULED, "failures:\n  - {random: {nodes: [gw-slow], mtbf: 1e-6, mttr: 1e-6}}"),),
        "mtbf: 1e-6",
        "failure 0 (random, on gw-slow) fails without bound: mtbf 1e-06",
        "failures[0].random.mtbf",
    ),
}


def extreme(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """The scenario file of ``kind`` (60 s long) and the ``file:line:col: field`` of the
    element that drives it."""
    edits, marker, _, field = EXTREMES[kind]
    text = BASE.replace("duration: 3600", "duration: 60")
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / f"{kind}.yaml"
    path.write_text(text, encoding="utf-8")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if marker in ln)
    value = marker.split(": ")[1]
    column = text.splitlines()[line - 1].index(value) + 1
    return path, f"{path}:{line}:{column}: {field}"


# --- the run loop --------------------------------------------------------------------------


def _clocks(n: int, run: str) -> list[tuple[float, int]]:
    """Three interleaved ticking processes; the (time, id) order they ran in."""
    env = simpy.Environment()
    seen: list[tuple[float, int]] = []

    def tick(k: int, gap: float) -> simpy.events.ProcessGenerator:
        while True:
            seen.append((env.now, k))
            yield env.timeout(gap)

    for k, gap in enumerate((0.5, 0.25, 0.5)):
        env.process(tick(k, gap))
    until = env.timeout(n)
    if run == "simpy":
        env.run(until=until)
    else:
        run_until(env, until, Guard(None, None) if run == "unbounded" else Guard(10**9, 3600.0))
    return seen


def test_the_guarded_loop_steps_exactly_as_simpy_run() -> None:
    expected = _clocks(2000, "simpy")
    assert len(expected) > 3 * CHECK_EVERY  # several looks at the budget
    assert _clocks(2000, "unbounded") == expected
    assert _clocks(2000, "guarded") == expected


def test_the_event_budget_stops_at_the_first_check_past_it() -> None:
    env = simpy.Environment()

    def forever() -> simpy.events.ProcessGenerator:
        while True:
            yield env.timeout(1)

    env.process(forever())
    with pytest.raises(Runaway) as info:
        run_until(env, env.event(), Guard(CHECK_EVERY + 1, None))
    assert info.value.events == 2 * CHECK_EVERY
    assert f"--max-events {CHECK_EVERY + 1}" in str(info.value)


def test_an_empty_schedule_is_simpy_s_error() -> None:
    env = simpy.Environment()
    with pytest.raises(RuntimeError, match="No scheduled events left"):
        run_until(env, env.event(), UNBOUNDED)


# --- the three extreme inputs --------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(EXTREMES))
def test_an_extreme_input_stops_run_with_the_located_element(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, where = extreme(tmp_path, kind)
    out = tmp_path / "out"
    code = main(
        ["run", str(path), "--replications", "1", "--max-events", "40000", "--out", str(out)]
    )
    assert code == 2
    err = capsys.readouterr().err
    reason = EXTREMES[kind][2]
    assert f"{reason} ({where})" in err and "--max-events 40000" in err
    error = json.loads((out / "dijkstra" / "rep-0" / "error.json").read_text())
    assert error["error"].startswith("Runaway: stopped after 40,960 events")
    assert f"{reason} ({where})" in error["error"]
    run = json.loads((out / "dijkstra" / "rep-0" / "run.json").read_text())
    assert run["status"] == "error"
    assert (out / "dijkstra" / "rep-0" / "trace.jsonl").stat().st_size > 0  # kept so far


def test_a_stop_is_deterministic(tmp_path: Path) -> None:
    path, _ = extreme(tmp_path, "retry")
    scenario = load_scenario(path)
    traces = []
    for k in range(2):
        with pytest.raises(ReplicationError) as info:
            run_replication(scenario, "dijkstra", 0, tmp_path / str(k), guard=Guard(20000))
        assert isinstance(info.value.cause, Runaway)
        traces.append((tmp_path / str(k) / "trace.jsonl").read_bytes())
    assert traces[0] == traces[1] and traces[0]


def test_the_wall_time_budget_stops_a_run(tmp_path: Path) -> None:
    path, where = extreme(tmp_path, "rate")
    with pytest.raises(ReplicationError) as info:
        run_replication(load_scenario(path), "bfs", 0, tmp_path, guard=Guard(None, 0.2, str(path)))
    assert isinstance(info.value.cause, Runaway)
    assert "(--max-wall 0.2)" in str(info.value) and where in str(info.value)


@pytest.mark.slow  # the summary, plots and report of a compare: ~40 s on a loaded machine
def test_compare_records_the_stopped_point_and_keeps_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(BASE.replace("duration: 3600", "duration: 120"), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["compare", str(path), "--routers", "dijkstra,resilient", "--replications", "1"]
    argv += ["--set", "workflows.0.arrivals.rate=0.2,1e6", "--jobs", "1", "--quiet"]
    code = main([*argv, "--max-events", "30000", "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    failed = sorted(e["run"] for e in summary["errors"])
    assert failed == ["p1/dijkstra/rep-0", "p1/resilient/rep-0"]
    for router in ("dijkstra", "resilient"):
        assert (
            json.loads((out / "p0" / router / "rep-0" / "run.json").read_text())["status"] == "ok"
        )
    assert "workflow 'book' starts instances without bound: rate 1e+06" in err
    assert "workflows[0].arrivals.rate" in err


def test_smc_exits_2_with_the_located_element(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, where = extreme(tmp_path, "mtbf")
    props = tmp_path / "props.yaml"
    props.write_text('- {name: booked, scope: run, formula: "F execute"}\n', encoding="utf-8")
    argv = ["smc", str(path), "--properties", str(props), "--max-runs", "2"]
    assert main([*argv, "--max-events", "20000"]) == 2
    err = capsys.readouterr().err
    assert f"{EXTREMES['mtbf'][2]} ({where})" in err and "replication 0" in err


# --- options and the pieces they rest on ---------------------------------------------------


def test_the_options_make_the_guard(tmp_path: Path) -> None:
    from sim.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["run", "x.yaml"])
    assert guard_of(args, "x.yaml") == Guard(DEFAULT_MAX_EVENTS, None, "x.yaml")
    args = parser.parse_args(["compare", "x.yaml", "--max-events", "0", "--max-wall", "2.5"])
    assert guard_of(args, "x.yaml") == Guard(None, 2.5, "x.yaml")
    args = parser.parse_args(["smc", "x.yaml", "--max-memory", "800MB"])
    assert guard_of(args, "x.yaml") == Guard(DEFAULT_MAX_EVENTS, None, "x.yaml", 800_000_000)
    args = parser.parse_args(["run", "x.yaml", "--max-memory", "0"])
    assert guard_of(args, "x.yaml").max_memory is None
    assert f"{DEFAULT_MAX_EVENTS:,}" in parser.format_help() or any(
        f"default {DEFAULT_MAX_EVENTS:,}" in action.help
        for sub in parser._subparsers._group_actions  # type: ignore[union-attr]
        for cmd in sub.choices.values()  # type: ignore[union-attr]
        for action in cmd._actions
        if action.help and "--max-events" in action.option_strings
    )


@pytest.mark.parametrize("bad", ["-1", "nan", "inf", "many"])
def test_a_bad_budget_is_exit_2(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "x.yaml", "--max-wall", bad]) == 2
    assert "--max-wall" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "size"),
    [("1.5GB", 1_500_000_000), ("800mb", 800_000_000), ("64 KB", 64_000), ("123", 123), ("0", 0)],
)
def test_a_memory_size_reads_bytes_or_units(text: str, size: int) -> None:
    assert memory_size(text) == size


@pytest.mark.parametrize("bad", ["-1GB", "nan", "inf", "lots", "1e300", "GB", "9" * 5000])
def test_a_bad_memory_size_is_exit_2(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "x.yaml", f"--max-memory={bad}"]) == 2
    err = capsys.readouterr().err
    assert "--max-memory" in err and "not a memory size" in err
    assert len(err.splitlines()[-1]) < 200  # a 5,000-digit value is not echoed whole


def test_the_memory_budget_is_on_by_default() -> None:
    assert Guard().max_memory == DEFAULT_MAX_MEMORY == 1_500_000_000
    assert UNBOUNDED.max_memory is None
    assert 0 < resident_bytes() < DEFAULT_MAX_MEMORY
    assert size_text(DEFAULT_MAX_MEMORY) == "1.5GB" and size_text(812) == "812B"


def test_a_huge_retry_bound_folds_the_lts_and_the_backoff() -> None:
    from sim.calculus.mcp import FailureMode, Retry, ToolPlus

    def states(retry: int) -> int:
        modes = (FailureMode("ServiceDown", Retry(retry)),)
        tool = ToolPlus("t", "a tool", {"type": "object"}, failure_modes=modes)
        return tool_lts(tool, error_types=("ServiceDown",)).n_states

    assert states(10**9) == states(RETRY_STATES) == states(RETRY_STATES + 1)
    assert states(3) < states(4) < states(RETRY_STATES)  # exact below the fold
    assert backoff(5000) == BACKOFF_CAP and math.isfinite(backoff(10**9))
