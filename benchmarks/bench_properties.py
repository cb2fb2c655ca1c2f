"""Property monitoring (SPEC §9): events per second beside the seven checks, and memory.

``python -m benchmarks.run --only properties`` (``--quick``: a shorter trace).

A real trace of ``scenarios/train_booking.yaml`` (one replication, dijkstra, trace level
full) is written once. In one process, alternating three times, we time ``check_trace``
(a) with the seven checks alone and (b) with the same checks plus the property monitor
fed in the same pass, on two property sets: three past formulas of docs/properties.md's
examples (:data:`ONLINE`: the P2 approval, a precedence, a retry after ServiceDown;
monitored online) and ``tests/properties/approvals.yaml`` (three properties, one a
bounded response evaluated at scope end). Best of three; the ratio is (b)'s time over
(a)'s. Memory: the monitor alone (tracemalloc peak) on the trace replayed 1× and 4×
(every instance of a copy ends within it): flat memory means a ratio near 1.
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from benchmarks.run import Section, table
from sim.conformance.checks import check_trace
from sim.conformance.events import decoder
from sim.properties import Monitor, Property, ToolAttributes, parse
from sim.scenario import Scenario, load_scenario
from sim.scenario.properties import load_properties, tool_attributes

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "train_booking.yaml"
APPROVALS = ROOT / "tests" / "properties" / "approvals.yaml"
#: memory of 4× the trace over 1× (flat: bounded by the open scopes)
FLAT = 1.5
#: (name, scope, formula): past formulas from docs/properties.md's examples
ONLINE = (
    ("p2", "invocation", "G (execute(side_effects={write,delete}) -> Y (!execute S approve))"),
    ("balance-first", "instance", "G (execute(book_train) -> O result(check_balance))"),
    ("retry-after-down", "invocation", "G (retry -> Y error(detail.error=ServiceDown))"),
)


def _online(scenario: Scenario) -> list[Property]:
    tools = tool_attributes(scenario)
    return [Property(n, sc, parse(f, tools=tools), f) for n, sc, f in ONLINE]


def _timed(path: Path, scenario: Scenario, props: list[Property] | None) -> float:
    consumers = [Monitor(props, tool_attributes(scenario))] if props else []
    started = time.perf_counter()
    check_trace(path, scenario, consumers=consumers)
    return time.perf_counter() - started


def _replay(lines: list[bytes], copies: int) -> Iterator[tuple[object, bytes]]:
    decode = decoder()
    for _ in range(copies):
        for raw in lines:
            yield decode(raw), raw


def _peak(
    lines: list[bytes], copies: int, props: list[Property], tools: dict[str, ToolAttributes]
) -> int:
    monitor = Monitor(props, tools)
    tracemalloc.start()
    for ev, raw in _replay(lines, copies):
        monitor.step(ev, raw)
    monitor.finish()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def run(quick: bool) -> Section:
    from sim.engine import run_replication

    scenario = load_scenario(SCENARIO)
    if quick:
        scenario = scenario.model_copy(update={"duration": 1200.0})
    sets = {
        "docs' past formulas (3, online)": _online(scenario),
        "approvals.yaml (3, one at scope end)": load_properties(APPROVALS, scenario),
    }
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rep"
        run_replication(scenario, "dijkstra", 0, out, "full")
        path = out / "trace.jsonl"
        lines = [raw for raw in path.read_bytes().split(b"\n") if raw]
        best: dict[str, float] = {}
        for _ in range(3):
            for name, props in [("seven checks alone", None), *sets.items()]:
                seconds = _timed(path, scenario, props)
                best[name] = min(best.get(name, seconds), seconds)
        tools = tool_attributes(scenario)
        props = [p for ps in sets.values() for p in ps]
        peaks = {n: _peak(lines, n, props, tools) for n in (1, 4)}
    events = len(lines)
    base = best["seven checks alone"]
    rows = [
        [name, f"{t:.3f}", f"{events / t:,.0f}", f"{t / base:.2f}×"] for name, t in best.items()
    ]
    ratio = peaks[4] / peaks[1]
    mem = table(
        ["Trace", "Events", "Monitor peak (KiB)"],
        [[f"{n}× the replication", f"{n * events:,}", f"{peaks[n] / 1024:,.0f}"] for n in peaks],
    )
    flat = ratio <= FLAT
    return Section(
        title="Property monitoring: events per second beside the seven checks",
        command="python -m benchmarks.run --only properties" + (" --quick" if quick else ""),
        table=table(["Pass", "Time (s)", "Events/s", "Time vs checks alone"], rows)
        + "\n\n### Memory against trace length (all six properties)\n\n"
        + mem
        + f"\n\nTarget peak(4×) / peak(1×) ≤ {FLAT}: {'PASS' if flat else 'FAIL'} ({ratio:.2f})",
        notes=[
            f"{events:,} events of train_booking, one replication, trace level full; "
            "best of three alternating runs in one process",
            "events/s counts the trace's events; the property pass decodes each line once, "
            "shared with the checks",
        ],
        passed=flat,
    )
