"""What a caller can suspect in the untimed model (``sim.verify.knowledge.suspicion_sets``).

A dynamic router's caller suspects the elements of a route after *any* timeout on it,
healthy ones too (a slow server, a queue): the soundness hypothesis test found, on CI,
an instance whose caller had rerouted around a healthy gateway through a lossy
translator, a route verify did not know (it only combined the scenario's failing
elements), so it proved ``write_approval`` while the simulator executed a write with no
approval. ``healthy-suspect`` below is that shape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from sim.cli import main
from sim.engine import run_replication
from sim.mesh.graph import ProtocolGraph
from sim.mesh.registry import make_router
from sim.mesh.route import NO_DOWN, DownSet
from sim.scenario import parse_scenario
from sim.scenario.model import Scenario
from sim.verify.knowledge import suspicion_sets
from sim.verify.model import Model
from tests.harness.verify_replays import KEPT, replays, trace_key
from tests.harness.verify_runs import confirm, verdicts, verify

#: ``a0`` reaches ``srv`` through ``gw`` (MCP+) or ``tr`` (to plain MCP); no failures, but
#: ``t0`` outlasts the timeout, so a resilient caller suspects the healthy ``gw``.
TWO_ROUTES = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "two_routes.yaml"
HEALTHY_SUSPECT = TWO_ROUTES.read_text()


def scenario_of(text: str) -> Scenario:
    scenario, _ = parse_scenario(text, "healthy-suspect.yaml")
    return scenario


def sets_of(scenario: Scenario, router: str, bound: int = 256) -> list[DownSet]:
    graph = ProtocolGraph.from_scenario(scenario)
    truth = {t.name: t.descriptor() for t in scenario.tools}
    found = suspicion_sets(
        make_router(router, graph, scenario), graph, "a0", [("t0", None, "MCP+")], truth, bound
    )
    assert found.complete
    return list(found.sets)


def nodes_of(sets: list[DownSet]) -> set[frozenset[str]]:
    return {d.nodes for d in sets}


def simulated_and_replayed(scenario: Scenario, tmp_path: Path) -> list[dict[str, Any]]:
    """Replication 0 under resilient: its events, once every finished instance has
    replayed on the model (the projection of test_verify_soundness)."""
    run_replication(scenario, "resilient", 0, tmp_path / "run", "protocol")
    lines = [json.loads(x) for x in (tmp_path / "run" / "trace.jsonl").read_text().splitlines()]
    by_inst: dict[Any, list[Any]] = {}
    for ev in lines:
        if ev["label"] in KEPT and ev["inst"] is not None:
            by_inst.setdefault(ev["inst"], []).append(trace_key(ev))
    model = Model(scenario, "w", "resilient")
    for inst, keys in sorted(by_inst.items()):
        if keys[-1][0] == "wf_end" and keys[-1][3] != ("failed", "drain_cap"):
            assert replays(model, keys), f"instance {inst}: {keys}"
    return lines


@pytest.fixture
def healthy() -> Scenario:
    return scenario_of(HEALTHY_SUSPECT)


def test_a_static_router_routes_on_the_full_topology_only(healthy: Scenario) -> None:
    assert sets_of(healthy, "dijkstra") == [NO_DOWN]


def test_a_timeout_on_a_healthy_route_is_suspected_and_routed_around(healthy: Scenario) -> None:
    sets = sets_of(healthy, "resilient")
    assert sets[0] == NO_DOWN
    # gw after a timeout through it; tr after one on the detour; both (the route is then
    # the full topology's again); each forgotten on its own
    assert nodes_of(sets) == {
        frozenset(),
        frozenset({"gw"}),
        frozenset({"tr"}),
        frozenset({"gw", "tr"}),
    }
    assert all(not d.links for d in sets)


def test_semantic_suspects_the_target_too(healthy: Scenario) -> None:
    assert frozenset({"gw", "srv"}) in nodes_of(sets_of(healthy, "semantic"))


def test_a_direct_link_is_suspected_as_a_link() -> None:
    doc = yaml.safe_load(HEALTHY_SUSPECT)
    doc["links"].append({"between": ["a0", "srv"], "latency": {"MCP+": 0.001}})
    sets = sets_of(scenario_of(yaml.safe_dump(doc)), "resilient")
    assert DownSet.of((), [("a0", "srv")]) in sets
    assert DownSet.of(["gw"], [("a0", "srv")]) in sets


def test_a_fallback_tool_is_routed_to_as_well() -> None:
    """t0 falls back to t1 on ServiceDown; t1 is reached through ``gw2`` only: the
    caller can suspect ``gw2`` only by way of the fallback."""
    doc = yaml.safe_load(HEALTHY_SUSPECT)
    doc["agents"] += [
        {"id": "gw2", "type": "GATEWAY", "protocols": {"MCP+": 1.0}},
        {"id": "srv2", "type": "TOOL_SERVER", "protocols": {"MCP+": 1.0}, "tools": ["t1"]},
    ]
    doc["links"] += [
        {"between": ["a0", "gw2"], "latency": {"MCP+": 0.01}},
        {"between": ["gw2", "srv2"], "latency": {"MCP+": 0.01}},
    ]
    t1 = {**doc["tools"][0], "name": "t1", "description": "Tool t1 writes elsewhere."}
    doc["tools"].append(t1)
    assert not any(
        "gw2" in n for n in nodes_of(sets_of(scenario_of(yaml.safe_dump(doc)), "resilient"))
    )
    doc["tools"][0]["failure_modes"] = [{"error": "ServiceDown", "recovery": {"fallback": "t1"}}]
    assert frozenset({"gw2"}) in nodes_of(sets_of(scenario_of(yaml.safe_dump(doc)), "resilient"))


def test_past_the_bound_the_smallest_sets_are_kept_and_the_cut_is_said(
    healthy: Scenario,
) -> None:
    graph = ProtocolGraph.from_scenario(healthy)
    truth = {t.name: t.descriptor() for t in healthy.tools}
    router = make_router("resilient", graph, healthy)
    found = suspicion_sets(router, graph, "a0", [("t0", None, "MCP+")], truth, 3)
    assert not found.complete
    # {tr} is found as a subset of {gw, tr} (its suspects expiring first), still to go
    assert [d.nodes for d in found.sets] == [frozenset(), {"gw"}, {"gw", "tr"}]


def test_a_cut_makes_a_holding_property_undecided_and_keeps_violations(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With t0 read-only, write_approval holds on every route; cut to the first suspect
    set (no rerouting explored) it is undecided, with the note; the unapproved write
    of the lossy detour is found only once the detour's set is explored."""
    doc = yaml.safe_load(HEALTHY_SUSPECT)
    read = tmp_path / "read.yaml"
    doc["tools"][0]["side_effects"] = "read"
    read.write_text(yaml.safe_dump(doc))
    code, obj, _ = verify(
        capsys, str(read), "--router", "resilient", "--property", "write_approval"
    )
    assert code == 0 and verdicts(obj)[("w", "write_approval")]["verdict"] == "holds"
    code, obj, _ = verify(
        capsys,
        str(read),
        "--router",
        "resilient",
        "--property",
        "write_approval",
        "--suspect-sets",
        "1",
    )
    found = verdicts(obj)[("w", "write_approval")]
    assert code == 3 and found["verdict"] == "undecided"
    capsys.readouterr()
    assert main(["verify", str(read), "--router", "resilient", "--suspect-sets", "1"]) == 3
    assert "a0's caller can suspect more than 1 sets of nodes and links" in (
        capsys.readouterr().out
    )
    slow = tmp_path / "slow.yaml"
    slow.write_text(HEALTHY_SUSPECT)
    cx = str(tmp_path / "cx")
    for sets, verdict in (("1", "undecided"), ("2", "violated")):
        code, obj, _ = verify(
            capsys,
            str(slow),
            "--router",
            "resilient",
            "--property",
            "write_approval",
            "--suspect-sets",
            sets,
            "--counterexamples",
            cx,
        )
        assert verdicts(obj)[("w", "write_approval")]["verdict"] == verdict, sets
    capsys.readouterr()
    assert main(["verify", str(slow), "--suspect-sets", "0"]) == 2
    assert "--suspect-sets: must be at least 1" in capsys.readouterr().err


def test_verify_finds_the_unapproved_write_a_slow_healthy_server_causes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "healthy-suspect.yaml"
    path.write_text(HEALTHY_SUSPECT)
    cx = tmp_path / "cx"
    code, obj, _ = verify(
        capsys,
        str(path),
        "--router",
        "resilient",
        "--property",
        "write_approval",
        "--counterexamples",
        str(cx),
    )
    assert code == 1
    found = verdicts(obj)[("w", "write_approval")]
    assert found["verdict"] == "violated"
    confirm(capsys, found["counterexample"], str(path), "write_approval")
    # the simulator does it: a later instance's call goes through tr, unapproved
    lines = simulated_and_replayed(scenario_of(HEALTHY_SUSPECT), tmp_path)
    unapproved = [e for e in lines if e["label"] == "execute" and not e["detail"]["approved"]]
    assert unapproved, "the simulator no longer produces the shape"


def test_a_retry_rerouted_around_a_suspect_is_served_over_the_new_route(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """t0 retries ServiceDown twice. A retry is routed around what the caller suspects
    after the timeout (gw), so it reaches srv through tr, in plain MCP, with the view
    (and so the approval) discovered over MCP+: an approved write executed over MCP,
    which verify used to rule out (every attempt went where the view was learned)."""
    doc = yaml.safe_load(HEALTHY_SUSPECT)
    doc["tools"][0]["failure_modes"] = [{"error": "ServiceDown", "recovery": {"retry": 2}}]
    formula = "G !(execute(proto=MCP) & O approve)"
    doc["properties"] = [{"name": "approved-plain", "scope": "invocation", "formula": formula}]
    path = tmp_path / "rerouted.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, obj, _ = verify(
        capsys,
        str(path),
        "--router",
        "resilient",
        "--property",
        "approved-plain",
        "--counterexamples",
        str(tmp_path / "cx"),
    )
    found = verdicts(obj)[("w", "approved-plain")]
    assert (code, found["verdict"]) == (1, "violated")
    capsys.readouterr()
    cx = ["check", found["counterexample"], "--scenario", str(path), "--property", "approved-plain"]
    assert main(cx) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("approved-plain"))
    assert line.endswith("violated 1  VIOLATED"), line
    lines = simulated_and_replayed(scenario_of(yaml.safe_dump(doc)), tmp_path)
    protos = {e["proto"] for e in lines if e["label"] == "execute"}
    assert protos == {"MCP", "MCP+"}, "the simulator no longer reroutes a retry"
