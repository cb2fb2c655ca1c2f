"""The fuzzer in the suite (issue 16, item 8): seeded mutants of every shipped scenario
(deletions, duplications, type swaps, extreme numbers, deep nesting, control characters,
aliases). ``validate`` exits 0 or 2, never a traceback; a mutant that validates runs a
short replication without a crash, and ``conservation`` and ``route_validity`` hold. The
long form (thousands of mutants) is ``benchmarks/bench_fuzz.py``."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from benchmarks import mutation
from benchmarks.mutation import MUTATORS, SCENARIOS, Mutant, judge, mutants, placed


@cache
def _shipped() -> dict[str, str]:
    """The shipped scenarios' texts, large_mesh's generated topology at 1,000 agents instead
    of 10,000: the same document (the mutators pick the same places, the mutants differ by
    that number only, with the same outcomes), a tenth of the generation each mutant that
    loads pays (the full size is fuzzed by ``benchmarks/bench_fuzz.py``)."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in SCENARIOS}
    large = texts["large_mesh.yaml"]
    texts["large_mesh.yaml"] = large.replace("\n  agents: 10000\n", "\n  agents: 1000\n")
    assert texts["large_mesh.yaml"] != large, "large_mesh.yaml no longer generates 10000 agents"
    return texts


#: every (scenario, mutator) pair once: mutants 0 .. QUICK-1 of seed 16, drawn by the test
#: that runs one (not at collection: a mutant costs a YAML parse and dump)
QUICK = len(SCENARIOS) * len(MUTATORS)


def _name(i: int) -> str:
    """Mutant ``i``'s name, known before it is drawn."""
    return Mutant(*placed(i), i, "").name


@cache
def _quick(i: int) -> Mutant:
    (mutant,) = mutants(i + 1, seed=16, start=i, texts=_shipped())
    return mutant


#: the mutants of the largest shipped scenario (a generated mesh: about 1.5 s each) run in
#: ``make bench``; every mutator still meets every other shipped scenario here
HEAVY = "large_mesh.yaml"


def _quick_params() -> list[object]:
    return [
        pytest.param(i, id=_name(i), marks=[pytest.mark.slow] if placed(i)[0] == HEAVY else [])
        for i in range(QUICK)
    ]


@pytest.mark.parametrize("index", _quick_params())
def test_a_mutant_is_rejected_or_runs_with_the_invariants_intact(
    index: int, tmp_path: Path
) -> None:
    mutant = _quick(index)
    verdict = judge(mutant, tmp_path)
    assert not verdict.finding, f"{mutant.name}: {verdict.outcome}: {verdict.detail}"
    assert verdict.outcome in ("rejected", "ran", "too long", "plugin error")


def test_the_quick_run_covers_every_scenario_and_mutator() -> None:
    quick = [_quick(i) for i in range(QUICK)]
    assert [m.name for m in quick] == [_name(i) for i in range(QUICK)]
    assert {m.scenario for m in quick} == {p.name for p in SCENARIOS}
    assert {m.mutator for m in quick} == set(MUTATORS)
    assert len({m.text for m in quick}) == len(quick)  # every mutant differs


def test_mutants_are_reproducible() -> None:
    drawn = [m.text for m in mutants(10, seed=3)]
    assert drawn == [m.text for m in mutants(10, seed=3)]
    assert drawn != [m.text for m in mutants(10, seed=4)]


def test_each_mutator_changes_the_text() -> None:
    text = SCENARIOS[0].read_text(encoding="utf-8")
    for name, mutate in MUTATORS.items():
        assert mutate(text, random.Random(1)) != text, name


def _valid() -> Mutant:
    path = next(p for p in SCENARIOS if p.name == "gateway_failover.yaml")
    return Mutant(path.name, "none", 0, path.read_text(encoding="utf-8"))


def test_the_judge_reports_a_traceback_from_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sim.cli.scenario

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("'<' not supported between instances of 'int' and 'str'")

    monkeypatch.setattr(sim.cli.scenario, "validate", broken)
    verdict = judge(_valid(), tmp_path)
    assert verdict.outcome == "crash" and "TypeError" in verdict.detail


def test_the_judge_reports_a_crashed_replication(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sim.engine

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise OverflowError("math range error")

    monkeypatch.setattr(sim.engine, "run_replication", crash)
    verdict = judge(_valid(), tmp_path)
    assert verdict.outcome == "run crash" and "OverflowError" in verdict.detail


def test_the_judge_bounds_a_mutant_in_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import sim.engine

    monkeypatch.setattr(mutation, "DEADLINE", 0.3)  # CPU s: the spin below takes 30

    def spin(*args: Any, **kwargs: Any) -> None:
        end = time.process_time() + 30
        while time.process_time() < end:
            pass

    monkeypatch.setattr(sim.engine, "run_replication", spin)
    verdict = judge(_valid(), tmp_path)
    assert verdict.outcome == "hang"


def test_a_billion_generated_agents_is_rejected_not_built(tmp_path: Path) -> None:
    # found by the long campaign: large_mesh with `topology.agents: 1000000000` hung loading
    # mutant 859 of seed 16 when it was found (its place moves as scenarios are added)
    text = (mutation.ROOT / "scenarios" / "large_mesh.yaml").read_text(encoding="utf-8")
    mutated = MUTATORS["extreme"](text, random.Random("16:859"))
    mutant = Mutant("large_mesh.yaml", "extreme", 859, mutated)
    assert "agents: 1000000000" in mutant.text
    verdict = judge(mutant, tmp_path)
    assert verdict.outcome == "rejected", verdict
