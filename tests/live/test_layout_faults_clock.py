"""Which agents share a process, the outages a run carries out, and the clocks."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest

from sim.live.clock import DownLog, SceneClock
from sim.live.faults import Fault, faults
from sim.live.layout import LiveError, layout
from sim.scenario import load_scenario, parse_scenario
from tests.harness.live_paths import SMALL, TINY


def test_one_process_per_agent_unless_too_many() -> None:
    scenario = load_scenario(SMALL)
    assert layout(scenario, 16) == [[a.id] for a in scenario.agents]
    with pytest.raises(LiveError) as err:
        layout(scenario, 4)
    assert str(err.value) == (
        "live-small: 6 agents need 6 processes, more than this machine hosts "
        "(--max-processes 4); pack them with --processes N"
    )


def test_packing_keeps_an_agent_with_an_outage_alone() -> None:
    scenario = load_scenario(SMALL)
    groups = layout(scenario, 16, processes=3)
    assert ["gw1"] in groups and len(groups) == 3
    assert sorted(a for g in groups for a in g) == sorted(a.id for a in scenario.agents)
    with pytest.raises(LiveError, match=r"--processes 1 is too few: 1 agents with node "):
        layout(scenario, 16, processes=1)


def test_a_scenario_with_message_faults_does_not_run_live() -> None:
    text = TINY.read_text() + "faults: [{kind: loss, links: [[planner, coord]], p: 0.1}]\n"
    scenario, _ = parse_scenario(text, "tiny.yaml")
    with pytest.raises(LiveError) as err:
        layout(scenario, 16)
    assert str(err.value) == (
        "live-tiny: the live mesh injects outages (failures:) only, not the faults: "
        "entries (loss); run the scenario in the engine"
    )


def test_overlapping_outages_of_one_element_are_one() -> None:
    text = TINY.read_text().replace("duration: 4", "duration: 6") + (
        "failures:\n  - {node: gw, at: 1, for: 2}\n  - {node: gw, at: 2, for: 2}\n"
        "  - {link: [planner, coord], at: 4, for: 1}\n  - {node: coord, at: 9, for: 1}\n"
    )
    scenario, _ = parse_scenario(text, "tiny.yaml")
    assert faults(scenario, 1, 0) == [
        Fault(("gw",), 1.0, 4.0),
        Fault(("planner", "coord"), 4.0, 5.0),  # as the scenario declares the link
    ]  # the one at 9 s starts after the duration (6 s)


def test_random_outages_are_drawn_alike_for_the_same_seed_and_run() -> None:
    text = TINY.read_text().replace("duration: 4", "duration: 600") + (
        "failures:\n  - {random: {nodes: [gw], mtbf: 60, mttr: 5}, kill: true}\n"
    )
    scenario, _ = parse_scenario(text, "tiny.yaml")
    first, again, other = faults(scenario, 1, 0), faults(scenario, 1, 0), faults(scenario, 1, 1)
    assert first == again and first != other
    assert all(f.kill and f.element == ("gw",) and f.down < 600 for f in first)
    assert all(a.up < b.down for a, b in itertools.pairwise(first))


def test_a_link_cannot_be_killed() -> None:
    from sim.scenario import ScenarioError

    text = TINY.read_text() + "failures:\n  - {link: [gw, tickets], at: 1, for: 1, kill: true}\n"
    with pytest.raises(ScenarioError) as err:
        parse_scenario(text, "tiny.yaml")
    assert "kill applies to a node's outage (a link has no process)" in str(err.value)


def test_scenario_time_runs_at_the_speed() -> None:
    clock = SceneClock(time.monotonic(), 10.0)
    assert clock.seconds(5.0) == 0.5
    assert 0.0 <= clock.now() < 1.0
    assert clock.wall().endswith("Z") and "T" in clock.wall()
    with pytest.raises(ValueError, match="speed must be > 0"):
        SceneClock(0.0, 0.0)


def test_the_down_log_tells_what_met_an_outage(tmp_path: Path) -> None:
    log = DownLog(tmp_path / "gw.down")
    assert log.overlaps(0.0, 100.0) is None  # no file yet
    DownLog.append(log.path, 10.0, 20.0)
    assert log.overlaps(5.0, 9.0) is None
    assert log.overlaps(5.0, 11.0) == (10.0, 20.0)
    assert log.overlaps(19.0, 30.0) == (10.0, 20.0)
    DownLog.append(log.path, 40.0, 50.0)
    assert log.intervals() == ((10.0, 20.0), (40.0, 50.0))
