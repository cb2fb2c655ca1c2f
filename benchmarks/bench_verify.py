"""Exhaustive verification (SPEC §11): states per second, and the largest workflow of
independent tasks decided within 60 s, with and without partial-order reduction.

``python -m benchmarks.run --only verify`` (``--quick``: 20 s budget, fewer sizes).

And the cost of a state as the workflow grows (issue 36 item 4): states stored per CPU
second at 8 and at 128 tasks (:func:`shaped`), each search repeated until it has run
1 s of CPU: a ``chain`` (plain search, complete), a ``fanout`` (all after the first:
plain search, its first 20,000 states) and ``independent`` tasks (reduced search,
complete). Target: at 128 tasks within 2× of the rate at 8, for the chain and the fan-out.

The workflows are generated (:func:`independent`): n independent write tasks, each
tool with three failure modes (retry, prompt, abort) whose errors all occur, approval
asked and answered either way. For n = 2, 4, 6, … we decide ``write_approval`` and
``recovery`` (both hold) with the reduced search and with the plain breadth-first one,
in the same process, until each exceeds the budget or ``--max-states`` (1,000,000,
then ``undecided``). A row per n: states, transitions, seconds, states/s, verdict.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks.fanout import tool_mesh
from benchmarks.run import Section, table
from sim.scenario import load_scenario
from sim.verify import selected

BUDGET = 60.0
MAX_STATES = 1_000_000


def independent(n: int) -> str:
    """YAML of one workflow ``w`` of ``n`` independent write tasks (see the module)."""
    text = tool_mesh(f"independent-{n}", [(f"t{k}", f"Tool {k}.", "write") for k in range(n)])
    text += "workflows:\n  - name: w\n    initiator: caller\n    protocol: MCP+\n"
    text += "    arrivals: {times: [0]}\n    timeout: 5\n    tasks:\n"
    text += "".join(f"      - {{id: k{k}, tool: t{k}}}\n" for k in range(n))
    return text


def shaped(n: int, shape: str) -> str:
    """YAML of :func:`independent`'s workflow with its ``n`` tasks ordered by ≺ as
    ``shape``: ``chain`` (each after the one before), ``fanout`` (all after the first)
    or ``independent`` (no ≺)."""
    head, _ = independent(n).split("    tasks:\n")
    lines = []
    for k in range(n):
        after = {"chain": f", after: [k{k - 1}]", "fanout": ", after: [k0]"}.get(shape, "")
        lines.append(f"      - {{id: k{k}, tool: t{k}{after if k else ''}}}\n")
    return head + "    tasks:\n" + "".join(lines)


def _decide(path: Path, reduce: bool, deadline: float) -> tuple[str, int, int, float]:
    from sim.verify.model import Model
    from sim.verify.search import explore
    from sim.verify.verdicts import _tracker

    scenario = load_scenario(path)
    ((name, prop),) = selected(scenario, [], ["write_approval"])
    tracker = _tracker(name, prop, scenario)
    assert not isinstance(tracker, str)
    started = time.perf_counter()
    model = Model(scenario, "w", "dijkstra", exact=not reduce)
    out = explore(model, tracker, MAX_STATES, reduce, lambda: time.perf_counter() > deadline)
    return out.verdict, out.states, out.transitions, time.perf_counter() - started


SHAPE_SIZES = (8, 128)
SHAPE_STATES = 20_000
SHAPE_CPU = 1.0


def shape_rate(n: int, shape: str, root: Path) -> tuple[str, str, int, float]:
    """(search, verdict, states, states stored per CPU second) of ``write_approval`` on
    ``shaped(n, shape)`` (reduced for ``independent``; the first :data:`SHAPE_STATES`)."""
    from sim.verify.model import Model
    from sim.verify.search import explore
    from sim.verify.verdicts import _tracker

    path = root / f"{shape}-{n}.yaml"
    path.write_text(shaped(n, shape), encoding="utf-8")
    scenario = load_scenario(path)
    ((name, prop),) = selected(scenario, [], ["write_approval"])
    reduce = shape == "independent"
    stored, cpu = 0, 0.0
    while cpu < SHAPE_CPU:  # a fresh model and tracker each time: their caches too
        tracker = _tracker(name, prop, scenario)
        assert not isinstance(tracker, str)
        model = Model(scenario, "w", "dijkstra", exact=not reduce)
        started = time.process_time()
        out = explore(model, tracker, SHAPE_STATES, reduce)
        cpu += time.process_time() - started
        stored += out.states
    return ("reduced" if reduce else "plain BFS"), out.verdict, out.states, stored / cpu


def shape_rows(root: Path) -> tuple[list[list[object]], bool]:
    """A row per shape and size, and whether the chain and the fan-out hold the target."""
    rows: list[list[object]] = []
    ok = True
    for shape in ("chain", "fanout", "independent"):
        rates = []
        for n in SHAPE_SIZES:
            search, verdict, states, rate = shape_rate(n, shape, root)
            rates.append(rate)
            ratio = f"{rate / rates[0]:.2f}" if len(rates) > 1 else "1"
            rows.append([shape, search, n, verdict, f"{states:,}", f"{rate:,.0f}", ratio])
        if shape != "independent":
            ok = ok and rates[-1] * 2 >= rates[0]
    return rows, ok


def run(quick: bool) -> Section:
    budget = 20.0 if quick else BUDGET
    sizes = {True: [2, 4, 8, 12, 16, 24, 32], False: [1, 2, 3, 4, 5, 6]}
    rows: list[list[object]] = []
    largest: dict[bool, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for reduce in (True, False):
            for n in sizes[reduce]:
                path = Path(tmp) / f"independent-{n}.yaml"
                path.write_text(independent(n), encoding="utf-8")
                verdict, states, transitions, seconds = _decide(
                    path, reduce, time.perf_counter() + budget
                )
                rate = states / seconds if seconds > 0 else 0.0
                rows.append(
                    [
                        "reduced" if reduce else "plain BFS",
                        n,
                        verdict,
                        f"{states:,}",
                        f"{transitions:,}",
                        f"{seconds:.2f}",
                        f"{rate:,.0f}",
                    ]
                )
                if verdict == "undecided" or seconds > budget:
                    break
                largest[reduce] = (n, states)
        flat, flat_ok = shape_rows(Path(tmp))
    summary = [
        f"largest decided within {budget:.0f} s: "
        + ("reduced" if r else "plain BFS")
        + (f" {largest[r][0]} tasks ({largest[r][1]:,} states)" if r in largest else " none")
        for r in (True, False)
    ]
    passed = largest.get(True, (0, 0))[0] >= 12 and flat_ok
    return Section(
        title="Exhaustive verification: states per second, largest workflow decided",
        command="python -m benchmarks.run --only verify" + (" --quick" if quick else ""),
        table=table(
            ["Search", "Tasks", "Verdict", "States", "Transitions", "Seconds", "States/s"], rows
        )
        + "\n\n"
        + "\n".join(f"- {line}" for line in summary)
        + "\n\nTarget: 12 independent tasks × 3 failure modes decided: "
        + ("PASS" if largest.get(True, (0, 0))[0] >= 12 else "FAIL")
        + "\n\n"
        + table(
            ["Shape", "Search", "Tasks", "Verdict", "States", "States/CPU-s", "× rate at 8"],
            flat,
        )
        + "\n\nTarget: states per CPU second at 128 tasks within 2× of the rate at 8 "
        + "(chain and fan-out; issue 36 item 4): "
        + ("PASS" if flat_ok else "FAIL"),
        notes=[
            "write_approval (holds) on n independent write tasks, each tool with three "
            "failure modes that all occur; reduced and plain searches in the same process",
            "plain BFS stops at the first n it cannot decide within the budget or 1,000,000 states",
            "cost of a state: write_approval on n write tasks ordered as a chain (each after "
            "the one before), a fan-out (all after the first; its first 20,000 states) or "
            "independent (reduced search); each search repeated until 1 s of CPU time "
            "(time.process_time), states stored per CPU second",
        ],
        passed=passed,
    )
