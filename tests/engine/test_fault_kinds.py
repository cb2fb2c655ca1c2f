"""Faults as components: a corrupting link defined here, in the tests alone (its spec, its
engine class, one registry entry), run end to end; the built-in ``loss`` kind; the
located errors of a bad ``faults:`` entry."""

from __future__ import annotations

import json
import random
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.conformance.checks import check_trace
from sim.engine import run_replication
from sim.engine.faults import Fault, LinkFault, fault_of
from sim.engine.transport import Message
from sim.scenario import ScenarioError, parse_scenario
from sim.scenario.model import FAULT_KINDS, LinkFaultSpec, Probability, register_fault_kind
from sim.scenario.schema import scenario_json_schema
from sim.vocabulary.labels import LABELS
from tests.harness.engine_parts import MESH


class CorruptSpec(LinkFaultSpec):
    """``corrupt``: a crossing message is corrupted with probability ``p``."""

    kind: Literal["corrupt"]
    p: Probability
    engine: ClassVar[str] = f"{__name__}:CorruptingLink"


class CorruptingLink(LinkFault):
    """The message crosses, and its receiver finds it corrupt: dropped, ``corrupted``."""

    def strike(self, msg: Message) -> str | None:
        return "corrupted" if self.rng.random() < self.spec.p else None


#: the parts mesh with a workload that crosses the g–s link many times
WORKLOAD = """
workflows:
  - name: w
    initiator: a
    protocol: MCP
    arrivals: {process: poisson, rate: 2.0}
    timeout: 5
    tasks:
      - {id: r, tool: read_it, args: {id: x}}
"""


#: read_it's failure mode: taken out (with it, a plain-MCP caller, whose view lacks
#: failure_modes, aborts after ServiceDown and the checks flag it: test_recovery_views)
FAILURE_MODE = "    failure_modes:\n      - {error: ServiceDown, recovery: {retry: 2}}\n"


def scenario_text(faults: str) -> str:
    mesh = textwrap.dedent(MESH)
    assert FAILURE_MODE in mesh
    head = mesh[: mesh.index("workflows:")].replace("duration: 100", "duration: 30")
    head = head.replace(FAILURE_MODE, "")
    return head + textwrap.dedent(WORKLOAD) + textwrap.dedent(faults)


@pytest.fixture
def corrupt_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``corrupt`` registered for one test (monkeypatch takes it out again)."""
    monkeypatch.setitem(FAULT_KINDS, "corrupt", CorruptSpec)
    register_fault_kind(CorruptSpec)  # what a module adding a kind calls
    yield


def run(tmp_path: Path, faults: str, level: str = "full") -> tuple[list[dict[str, Any]], Any]:
    scenario, _ = parse_scenario(scenario_text(faults), "mesh.yaml")
    metrics = run_replication(scenario, "dijkstra", 0, tmp_path, level)
    trace = tmp_path / "trace.jsonl"
    lines = [json.loads(x) for x in trace.read_text(encoding="utf-8").splitlines()]
    return lines, (metrics, check_trace(trace, scenario))


def test_a_corrupting_link_from_the_tests_alone_drops_at_the_far_end(
    corrupt_kind: None, tmp_path: Path
) -> None:
    lines, (metrics, report) = run(tmp_path, "faults: [{kind: corrupt, links: [[g, s]], p: 0.3}]")
    corrupted = [x for x in lines if x["label"] == "drop" and x["detail"]["reason"] == "corrupted"]
    assert corrupted, "no message was corrupted"
    # dropped where it arrives after crossing g–s: at s (a request) or at g (a reply)
    assert {x["agent"] for x in corrupted} == {"g", "s"}
    hop_to = {x["detail"]["msg"]: x["detail"]["to"] for x in lines if x["label"] == "hop"}
    assert all(hop_to[x["detail"]["msg"]] == x["agent"] for x in corrupted)
    assert metrics["messages"]["dropped_by_reason"]["corrupted"] == len(corrupted)
    ends = Counter(
        x["label"] for x in lines if x["label"] in ("deliver", "drop") and "msg" in x["detail"]
    )
    assert ends["deliver"] + ends["drop"] == sum(1 for x in lines if x["label"] == "send")
    assert report.ok, [(v.name, v.message) for v in report.verdicts if not v.ok]
    timeouts = [x for x in lines if x["label"] == "timeout"]
    assert timeouts, "a corrupted request is only learnt of by its timeout"


def test_a_link_that_never_corrupts_leaves_the_trace_as_without_it(
    corrupt_kind: None, tmp_path: Path
) -> None:
    # the mesh has no jitter: stopping at g and s (a stretch per link) changes no line,
    # and the faults stream is not the latency stream
    with_it, _ = run(tmp_path / "with", "faults: [{kind: corrupt, links: [[s, g]], p: 0}]")
    without, _ = run(tmp_path / "without", "faults: []")
    assert with_it == without and len(without) > 100


def test_a_link_that_always_corrupts_delivers_nothing_across_it(
    corrupt_kind: None, tmp_path: Path
) -> None:
    lines, (metrics, report) = run(tmp_path, "faults: [{kind: corrupt, links: [[g, s]], p: 1}]")
    assert not any(x["label"] == "deliver" and x["agent"] == "s" for x in lines)
    assert metrics["messages"]["dropped_by_reason"]["corrupted"] > 0 and report.ok


def test_the_built_in_loss_kind_drops_with_link_loss(tmp_path: Path) -> None:
    _, (metrics, report) = run(
        tmp_path, "faults: [{kind: loss, links: [[a, g]], p: 0.5}]", "protocol"
    )
    assert metrics["messages"]["dropped_by_reason"]["link_loss"] > 0 and report.ok
    assert "corrupted" not in metrics["messages"]["dropped_by_reason"]


@settings(max_examples=12, deadline=None)
@given(p=st.floats(0.0, 1.0), seed=st.integers(0, 2**31 - 1))
def test_every_send_ends_once_and_every_check_holds_whatever_corrupts(
    p: float, seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    FAULT_KINDS["corrupt"] = CorruptSpec
    try:
        text = scenario_text(f"faults: [{{kind: corrupt, links: [[g, s]], p: {p!r}}}]")
        scenario, _ = parse_scenario(text.replace("seed: 11", f"seed: {seed}"), "mesh.yaml")
    finally:
        del FAULT_KINDS["corrupt"]
    out = tmp_path_factory.mktemp("run")
    metrics = run_replication(scenario, "dijkstra", 0, out, "full")
    messages = metrics["messages"]
    assert messages["sent"] == messages["delivered"] + messages["dropped"]
    report = check_trace(out / "trace.jsonl", scenario)
    assert report.ok, [(v.name, v.message) for v in report.verdicts if not v.ok]


def test_a_kind_is_one_schema_branch_derived_from_the_registry(corrupt_kind: None) -> None:
    branches = scenario_json_schema()["$defs"]["FaultSpec"]["anyOf"]
    assert branches == [{"$ref": "#/$defs/LinkLossSpec"}, {"$ref": "#/$defs/CorruptSpec"}]
    assert scenario_json_schema()["$defs"]["CorruptSpec"]["required"] == ["kind", "links", "p"]


def test_the_drop_reasons_of_the_vocabulary_name_the_built_in_kinds_reason() -> None:
    reason = next(k for k in LABELS["drop"].keys if k.name == "reason")
    assert "link_loss" in reason.doc


@pytest.mark.parametrize(
    ("faults", "message"),
    [
        (
            "faults: [{kind: corupt, links: [[g, s]], p: 0.3}]",
            "mesh.yaml:37:17: faults[0].kind: unknown fault kind 'corupt' "
            "(did you mean 'corrupt'?)",
        ),
        (
            "faults: [{kind: strike, links: [[g, s]], p: 0.3}]",
            "mesh.yaml:37:17: faults[0].kind: unknown fault kind 'strike' (known: corrupt, loss)",
        ),
        (
            "faults: [{kind: loss, links: [[g, s]], pp: 0.3}]",
            "mesh.yaml:37:44: faults[0].pp: unknown key 'pp' (did you mean 'p'?)",
        ),
        (
            "faults: [{links: [[g, s]], p: 0.3}]",
            "mesh.yaml:37:10: faults[0]: a fault names its kind (one of corrupt, loss)",
        ),
        (
            "faults: [{kind: corrupt, links: [[g, s]], p: 1.5}]",
            "mesh.yaml:37:46: faults[0].p: must be ≤ 1 (got 1.5)",
        ),
        (
            "faults: [{kind: corrupt, links: [[a, s]], p: 0.3}]",
            "mesh.yaml:37:34: faults[0].links[0]: there is no link between 'a' and 's'",
        ),
        (
            "faults: [{kind: loss, links: [[g, x]], p: 0.3}]",
            "mesh.yaml:37:35: faults[0].links[0][1]: unknown agent 'x' (declared: a, g, s)",
        ),
    ],
)
def test_a_bad_fault_is_a_located_error(corrupt_kind: None, faults: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(scenario_text(faults), "mesh.yaml")
    assert message in [str(d) for d in info.value.errors]


def test_a_fault_class_that_is_not_a_fault_is_refused() -> None:
    class NotAFault(CorruptSpec):
        engine: ClassVar[str] = "random:Random"

    spec = NotAFault(kind="corrupt", links=[["g", "s"]], p=0.1)
    refused = r"^fault kind 'corrupt': random:Random is not a KindFault$"
    with pytest.raises(TypeError, match=refused):
        fault_of(spec, random.Random(0))
    good = CorruptSpec(kind="corrupt", links=[["g", "s"]], p=0.1)
    assert isinstance(fault_of(good, random.Random(0)), Fault)
