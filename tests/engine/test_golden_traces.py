"""Golden traces: the engine's bytes are pinned by sha256 (trace.jsonl and metrics.json).

Each case runs one replication of a shipped scenario under a router at a trace level
and compares the hashes with ``tests/fixtures/golden_hashes.json``, recorded from the
engine before the component redesign (issue 11); the 8 cases with jittered stretches
were recorded again when messages began to cross a stretch as one event, its delays
drawn at its start (issue 17, docs/engine.md "Stretches"). A refactoring must keep
them; when a change of the semantics is intended, regenerate the file and say so in
the commit:

    .venv/bin/python tests/engine/test_golden_traces.py --record

The small cases run in the default suite (a few seconds); the larger ones are ``slow``.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HASHES = ROOT / "tests" / "fixtures" / "golden_hashes.json"
ROUTERS = ("dijkstra", "bfs", "resilient", "semantic")
LEVELS = ("full", "protocol")
#: (scenario, replications, slow)
SCENARIOS = (
    ("train_booking", 1, False),
    ("mcp_vs_mcp_plus", 1, False),
    ("gateway_failover", 2, True),
    ("travel_mesh", 2, True),
)


def cases() -> list[tuple[str, str, str, int, bool]]:
    """Every (scenario, router, level, replication, slow)."""
    return [
        (sc, router, level, rep, slow)
        for sc, reps, slow in SCENARIOS
        for router in ROUTERS
        for level in LEVELS
        for rep in range(reps)
    ]


def case_id(scenario: str, router: str, level: str, rep: int) -> str:
    return f"{scenario}/{router}/{level}/rep-{rep}"


def run_case(scenario: str, router: str, level: str, rep: int, out: Path) -> dict[str, str]:
    """sha256 of the trace and the metrics of one replication run into ``out``."""
    from sim.engine import run_replication
    from sim.scenario import load_scenario

    run_replication(load_scenario(ROOT / "scenarios" / f"{scenario}.yaml"), router, rep, out, level)
    return {
        name: hashlib.sha256((out / name).read_bytes()).hexdigest()
        for name in ("trace.jsonl", "metrics.json")
    }


def _params() -> list[object]:
    return [
        pytest.param(sc, r, lvl, rep, id=case_id(sc, r, lvl, rep), marks=[pytest.mark.slow] * slow)
        for sc, r, lvl, rep, slow in cases()
    ]


@pytest.mark.parametrize(("scenario", "router", "level", "rep"), _params())
def test_trace_and_metrics_bytes_are_unchanged(
    scenario: str, router: str, level: str, rep: int, tmp_path: Path
) -> None:
    expected = json.loads(HASHES.read_text(encoding="utf-8"))[case_id(scenario, router, level, rep)]
    assert run_case(scenario, router, level, rep, tmp_path) == expected


def test_every_case_has_a_recorded_hash() -> None:
    recorded = json.loads(HASHES.read_text(encoding="utf-8"))
    assert sorted(recorded) == sorted(case_id(*c[:4]) for c in cases())


def record() -> None:
    """Rewrite ``golden_hashes.json`` from the engine as it is now."""
    out: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for sc, router, level, rep, _ in cases():
            key = case_id(sc, router, level, rep)
            out[key] = run_case(sc, router, level, rep, Path(tmp) / key)
    HASHES.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/engine/test_golden_traces.py --record")
    sys.path.insert(0, str(ROOT))
    record()
