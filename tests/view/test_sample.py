"""The explorer's bounded sample of one run (sim.view.fragment.PagePass): at most ``cap``
events of sampled instances, each sampled instance whole, the same sample whoever reads
the trace, and every counterexample's instance in the events file whatever the cap."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.conformance.checks import check_trace
from sim.scenario import load_scenario
from sim.scenario.model import FailureSpec, Scenario
from sim.view.fragment import PagePass, read_segments
from sim.view.mesh import mesh_from_scenario
from sim.view.replay import compact
from sim.view.violations import groups

REPO = Path(__file__).resolve().parents[2]

Events = list[dict[str, Any]]


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    """conftest's ``train_trace`` scenario (train_booking, 300 s, gw1 down 100-200 s)."""
    outage = FailureSpec.model_validate({"node": "gw1", "at": 100.0, "for": 100.0})
    base = load_scenario(REPO / "scenarios" / "train_booking.yaml")
    return base.model_copy(update={"duration": 300.0, "failures": [outage]})


def _lines(events: Events) -> list[bytes]:
    return [json.dumps(e).encode() + b"\n" for e in events]


def _fed(scenario: Scenario, events: Events, cap: int, seed: int = 0) -> PagePass:
    page = PagePass(mesh_from_scenario(scenario), 300.0, io.BytesIO(), cap=cap, seed=seed)
    for raw in _lines(events):
        page.on_event(None, raw)
    page.end_trace()
    return page


def _stored(page: PagePass, fragment: dict[str, Any]) -> dict[str, list[Any]]:
    """The events the fragment's segments name, by ``wf#inst``."""
    out = {}
    for wf, inst, _status, _n, _hops, _start, _end, segments in fragment["instances"]:
        if segments:
            assert isinstance(page.events, io.BytesIO)
            out[f"{wf}#{inst}"] = json.loads(read_segments(page.events, segments))
    return out


def _by_instance(events: Events) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for e in events:
        if e.get("wf") is not None and e.get("inst") is not None:
            out.setdefault(f"{e['wf']}#{e['inst']}", []).append(compact(e))
    return json.loads(json.dumps(out))  # type: ignore[no-any-return]


@settings(max_examples=5, deadline=None)
@given(cap=st.integers(min_value=0, max_value=2_500), seed=st.integers(0, 3))
def test_the_sample_holds_at_most_cap_events_of_whole_instances(
    scenario: Scenario, train_trace: Events, cap: int, seed: int
) -> None:
    events = train_trace[:2_000]  # the first 50 s or so: every label but the outage's
    page = _fed(scenario, events, cap, seed)
    fragment = page.fragment([])
    kept = _stored(page, fragment)
    every = _by_instance(events)
    assert sum(len(v) for v in kept.values()) <= cap
    assert all(kept[k] == every[k] for k in kept)  # whole, in trace order
    again = _fed(scenario, events, cap, seed)
    assert again.fragment([]) == fragment  # the same sample, the same offsets
    if cap >= sum(len(v) for v in every.values()):
        assert kept == every  # room for all: nothing left out
    else:
        assert len(kept) < len(every)


def test_the_events_file_is_bounded_by_the_cap_not_the_trace(
    scenario: Scenario, train_trace: Events
) -> None:
    small, large = _fed(scenario, train_trace, 300), _fed(scenario, train_trace, 10**9)
    small.fragment([]), large.fragment([])
    assert isinstance(small.events, io.BytesIO) and isinstance(large.events, io.BytesIO)
    assert 0 < len(small.events.getvalue()) < len(large.events.getvalue()) / 5


def test_every_counterexample_instance_is_written_whatever_the_cap(
    scenario: Scenario, train_mutations: dict[str, Events], tmp_path: Path
) -> None:
    events = train_mutations["drop_approve"]
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(b"".join(_lines(events)))
    every = _by_instance(events)
    for reread in (False, True):
        page = PagePass(mesh_from_scenario(scenario), 300.0, io.BytesIO(), cap=0)
        report = check_trace(trace, scenario, consumers=[page])
        violated = groups(report.verdicts, [])
        named = {k for g in violated for ex in g["examples"] for k in ex["instances"]}
        assert named, "the mutation is a violation of an instance"
        kept = _stored(page, page.fragment(violated, trace=trace if reread else None))
        if reread:
            assert set(kept) == named and all(kept[k] == every[k] for k in named)
        else:  # without the trace read again, a cap of 0 keeps none of them
            assert kept == {}
