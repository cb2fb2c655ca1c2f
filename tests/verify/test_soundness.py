"""Soundness of the untimed model (issue 13): every workflow instance the simulator runs
is a path of ``verify``'s state space, so any violation the simulator can produce,
``verify`` finds.

Hypothesis draws the engine property test's small random scenarios (tools with failure
modes, errors, approvals, dependencies, random ≺, outages) with up to six tasks; each
is simulated under one of its routers, each instance's trace is projected onto the
labels the model decides (the protocol labels, ``skip``, ``wf_start``, ``wf_end`` with
its status and reason, the agent and protocol of ``execute``) and
replayed on the model: a search for a path whose projected events are exactly the
instance's. Instances cut by the run's drain cap are left out (the model has no end of
run). Where ``verify`` proves ``write_approval``, no simulated execute is unapproved.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from sim.engine import run_replication
from sim.scenario import ScenarioError, parse_scenario
from sim.verify.model import Model
from tests.harness.scenario_strategies import scenario_text, scenarios
from tests.harness.verify_replays import (
    KEPT,
    Key,
    replays,
    trace_key,
)


@st.composite
def small_scenarios(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    doc = draw(scenarios())
    wf = doc["workflows"][0]
    names = [t["name"] for t in doc["tools"]]
    for k in range(len(wf["tasks"]), len(wf["tasks"]) + draw(st.integers(0, 2))):
        after = draw(st.lists(st.sampled_from([f"k{m}" for m in range(k)]), unique=True))
        wf["tasks"].append({"id": f"k{k}", "tool": draw(st.sampled_from(names)), "after": after})
    rho = wf["protocol"]
    if draw(st.booleans()):
        # a task that names a capability: the router picks the server (semantic ranks
        # candidates) and the tool there whose name matches best
        task = draw(st.sampled_from(wf["tasks"]))
        task.pop("tool")
        task["capability"] = draw(st.sampled_from([*names, "records"]))
        doc["agents"][-1]["capabilities"] = ["records"]
    if draw(st.booleans()):
        # a second server of some of the tools, behind the gateway: calls and re-sends
        # have several hosts to go to (semantic fails over to it, resilient reroutes)
        hosted = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        speaks = draw(st.lists(st.sampled_from(doc["protocols"]), min_size=1, unique=True))
        doc["agents"].append(
            {
                "id": "s2",
                "type": "TOOL_SERVER",
                "protocols": dict.fromkeys(speaks, 1.0),
                "tools": hosted,
                "capabilities": ["records"],
            }
        )
        doc["links"].append({"between": ["a1", "s2"], "latency": {speaks[0]: 0.02}})
    if draw(st.booleans()):
        # a second workflow of the same caller: its calls make the caller suspect and
        # learn views too (only w's instances are replayed)
        doc["workflows"].append(
            {
                "name": "w2",
                "initiator": wf["initiator"],
                "protocol": rho,
                "arrivals": {"process": "poisson", "rate": 0.3},
                "timeout": 2,
                "tasks": [{"id": "j0", "tool": draw(st.sampled_from(names))}],
            }
        )
    if draw(st.booleans()):
        # a second initiator, on the gateway a1 only: it may reach the tools over other
        # routes (and views) than the first, so each instance replays on its own's model
        doc["agents"].append({"id": "b0", "type": "LLM_AGENT", "protocols": {rho: 1.0}})
        doc["links"].append({"between": ["b0", "a1"], "latency": {rho: 0.01}})
        wf["initiators"] = {"agents": [wf.pop("initiator"), "b0"]}
    doc["duration"] = 20
    doc["trace"] = "protocol"
    return doc, draw(st.sampled_from(doc["routers"]))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(small_scenarios())
def test_every_simulated_instance_is_a_path_of_the_model(
    tmp_path_factory: Any, drawn: tuple[dict[str, Any], str]
) -> None:
    doc, router = drawn
    try:
        scenario, _ = parse_scenario(scenario_text(doc), "fuzz.yaml")
    except ScenarioError:
        assume(False)
        return
    out = tmp_path_factory.mktemp("run")
    run_replication(scenario, router, 0, out, "protocol")
    by_inst: dict[Any, list[dict[str, Any]]] = {}
    for line in (Path(out) / "trace.jsonl").read_text().splitlines():
        ev = json.loads(line)
        if ev["label"] in KEPT and ev["inst"] is not None and ev["wf"] == "w":
            by_inst.setdefault(ev["inst"], []).append(ev)
    models: dict[str, Model] = {}  # by initiator: each instance replays on its own's
    checked = 0
    for inst, evs in sorted(by_inst.items()):
        ends = [e for e in evs if e["label"] == "wf_end"]
        if not ends or ends[0]["detail"].get("reason") == "drain_cap":
            continue
        keys = [trace_key(e) for e in evs]
        who = next(e["agent"] for e in evs if e["label"] == "wf_start")
        model = models.get(who) or models.setdefault(who, Model(scenario, "w", router, who))
        assert replays(model, keys), (
            f"instance {inst} under {router} is no path of the model:\n"
            + ("\n".join(map(str, keys)))
        )
        checked += 1
        if checked >= 8:
            break
    event(f"instances replayed: {min(checked, 8)}")
    event(f"initiators: {len(models)}")


def test_train_booking_instances_replay_and_a_mutated_one_does_not(tmp_path: Path) -> None:
    from sim.scenario import load_scenario

    scenario = load_scenario(Path(__file__).resolve().parents[2] / "scenarios/train_booking.yaml")
    scenario = scenario.model_copy(update={"duration": 900.0})
    for router in ("dijkstra", "resilient"):
        out = tmp_path / router
        run_replication(scenario, router, 0, out, "protocol")
        by_inst: dict[Any, list[Key]] = {}
        for line in (out / "trace.jsonl").read_text().splitlines():
            ev = json.loads(line)
            if ev["label"] in KEPT and ev["inst"] is not None:
                by_inst.setdefault(ev["inst"], []).append(trace_key(ev))
        model = Model(scenario, "book", router)
        done = [k for k in by_inst.values() if k[-1][0] == "wf_end"]
        assert len(done) > 100
        for keys in done[:60]:
            assert replays(model, keys), keys
        # an execute of book_train without its approve is no path of the model
        keys = next(k for k in done if ("approve", "book", "book_train", None) in k)
        mutated = [k for k in keys if k != ("approve", "book", "book_train", None)]
        assert not replays(model, mutated)


def test_where_verify_proves_a_property_no_simulated_run_violates_it(tmp_path: Path) -> None:
    from sim.conformance import check_trace
    from sim.scenario import load_scenario
    from sim.verify import decide, selected

    scenario = load_scenario(Path(__file__).resolve().parents[2] / "scenarios/train_booking.yaml")
    names = ["write_approval", "recovery"]
    proved = decide(scenario, "book", "dijkstra", selected(scenario, [], names))
    assert [p.verdict for p in proved.properties] == ["holds", "holds"]
    for rep in range(3):
        out = tmp_path / f"rep-{rep}"
        run_replication(scenario, "dijkstra", rep, out, "protocol")
        report = check_trace(out / "trace.jsonl", scenario, names)
        assert report.instances > 1000
        assert [(v.name, v.violations) for v in report.verdicts] == [(n, 0) for n in names]


def failing_sibling_doc() -> dict[str, Any]:
    """k0 succeeds; k1, k2, k3 (all t1, whose view k0 discovered) follow it; k1 lacks t1's
    required ``id`` and aborts on ValidationError at once, so the engine ends the
    instance ``failed`` before k2 and k3 (later in the batch) are ever prepared."""
    schema = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}
    return {
        "name": "sibling",
        "seed": 1,
        "duration": 10,
        "trace": "protocol",
        "routers": ["dijkstra"],
        "protocols": ["MCP"],
        "approval": {"latency": {"dist": "constant", "value": 0.5}, "mcp_policy": "never"},
        "agents": [
            {"id": "a0", "type": "LLM_AGENT", "protocols": {"MCP": 1.0}},
            {"id": "a1", "type": "TOOL_SERVER", "protocols": {"MCP": 1.0}, "tools": ["t1"]},
        ],
        "links": [{"between": ["a0", "a1"], "latency": {"MCP": 0.01}}],
        "tools": [
            {
                "name": "t1",
                "description": "Tool t1 does something useful with records.",
                "input_schema": schema,
                "side_effects": "read",
                "service_time": {"dist": "constant", "value": 0.1},
            }
        ],
        "workflows": [
            {
                "name": "w",
                "initiator": "a0",
                "protocol": "MCP",
                "arrivals": {"process": "poisson", "rate": 0.5},
                "timeout": 3,
                "tasks": [
                    {"id": "k0", "tool": "t1", "args": {"id": "x"}},
                    {"id": "k1", "tool": "t1", "after": ["k0"]},
                    {"id": "k2", "tool": "t1", "args": {"id": "y"}, "after": ["k0"]},
                    {"id": "k3", "tool": "t1", "args": {"id": "z"}, "after": ["k0"]},
                ],
            }
        ],
    }


def simulated(doc: dict[str, Any], out: Path) -> tuple[Any, dict[Any, list[Key]]]:
    """The scenario of ``doc`` and its replication 0 under dijkstra, projected per instance."""
    scenario, _ = parse_scenario(yaml.safe_dump(doc, sort_keys=False), f"{doc['name']}.yaml")
    run_replication(scenario, "dijkstra", 0, out, "protocol")
    by_inst: dict[Any, list[Key]] = {}
    for line in (out / "trace.jsonl").read_text().splitlines():
        ev = json.loads(line)
        if ev["label"] in KEPT and ev["inst"] is not None:
            by_inst.setdefault(ev["inst"], []).append(trace_key(ev))
    return scenario, by_inst


def test_an_abort_at_once_ends_the_instance_before_ready_siblings_start(tmp_path: Path) -> None:
    scenario, by_inst = simulated(failing_sibling_doc(), tmp_path)
    model = Model(scenario, "w", "dijkstra")
    shaped = [
        keys
        for keys in by_inst.values()
        if ("abort", "k1", "t1", None) in keys
        and keys[-1] == ("wf_end", None, None, ("failed", "abort"))
        and not any(k[1] in ("k2", "k3") for k in keys)
    ]
    assert shaped, "the simulator no longer produces the shape"
    for keys in shaped:
        assert replays(model, keys), keys
    # without k1's failure the instance cannot end before k2 and k3 run
    assert not replays(model, [k for k in shaped[0] if k[1] != "k1"])


ABORTED = ("error", "k2", "t1", "ValidationError")
FAILED = ("failed", "abort")


def known_view_doc() -> dict[str, Any]:
    """k0 and k1 (t0) first, then k2 (t1, lacking its required ``id``) and k3 (t0), both
    after k0 and k1. Instance 0 discovers t1 for k2 (a ``list`` exchange, so k3 starts
    meanwhile); a later instance's caller already knows t1's view, so k2 aborts at once
    in the batch and the instance ends ``failed`` before k3 is ever prepared."""
    doc = failing_sibling_doc()
    doc["name"] = "known-view"
    doc["tools"].insert(
        0,
        {
            "name": "t0",
            "description": "Tool t0 does something useful with records.",
            "input_schema": {"type": "object"},
            "side_effects": "read",
            "service_time": {"dist": "constant", "value": 0.1},
        },
    )
    doc["agents"][1]["tools"] = ["t0", "t1"]
    doc["workflows"][0]["tasks"] = [
        {"id": "k0", "tool": "t0"},
        {"id": "k1", "tool": "t0"},
        {"id": "k2", "tool": "t1", "after": ["k0", "k1"]},
        {"id": "k3", "tool": "t0", "after": ["k0", "k1"]},
    ]
    return doc


def test_a_view_known_from_an_earlier_instance_answers_a_batch_discovery_at_once(
    tmp_path: Path,
) -> None:
    scenario, by_inst = simulated(known_view_doc(), tmp_path)
    lists: dict[Any, int] = {}
    for line in (tmp_path / "trace.jsonl").read_text().splitlines():
        ev = json.loads(line)
        if ev["label"] == "list" and ev["task"] == "k2":
            lists[ev["inst"]] = lists.get(ev["inst"], 0) + 1
    model = Model(scenario, "w", "dijkstra")
    cut = [
        inst
        for inst, keys in by_inst.items()
        if keys[-3:] == [ABORTED, ("abort", "k2", "t1", None), ("wf_end", None, None, FAILED)]
        and not any(k[1] == "k3" for k in keys)
    ]
    assert lists == {0: 1}, "only instance 0 discovers t1"
    assert cut and 0 not in cut, "the simulator no longer produces the shape"
    for inst in sorted(by_inst):
        keys = by_inst[inst]
        assert replays(model, keys), f"instance {inst} is no path of the model:\n" + "\n".join(
            map(str, keys)
        )


def test_a_feeding_order_learned_in_an_earlier_instance_can_block_a_later_one(
    tmp_path: Path,
) -> None:
    """t1 produces input for t0 (MCP+ keeps ``dependencies``); k0 (t0) comes before k1
    (t1) by ≺. Instance 0 learns t1's view; from then on the caller's latest view makes
    k0 wait for k1, which waits for k0: the instance ends ``failed``, ``blocked``."""
    doc = known_view_doc()
    doc["name"] = "fed-later"
    for agent in doc["agents"]:
        agent["protocols"] = {"MCP+": 1.0}
    doc["links"][0]["latency"] = {"MCP+": 0.01}
    doc["protocols"] = ["MCP+"]
    doc["tools"][1]["input_schema"] = {"type": "object"}
    doc["tools"][1]["dependencies"] = [{"tool": "t0", "relation": "ProducesInputFor"}]
    wf = doc["workflows"][0]
    wf["protocol"] = "MCP+"
    wf["tasks"] = [{"id": "k0", "tool": "t0"}, {"id": "k1", "tool": "t1", "after": ["k0"]}]
    scenario, by_inst = simulated(doc, tmp_path)
    blocked = [("wf_start", None, None, None), ("wf_end", None, None, ("failed", "blocked"))]
    assert by_inst[0][-1] == ("wf_end", None, None, ("succeeded", None))
    assert by_inst[1] == blocked, "the simulator no longer produces the shape"
    model = Model(scenario, "w", "dijkstra")
    for inst in sorted(by_inst):
        keys = by_inst[inst]
        assert replays(model, keys), f"instance {inst} is no path of the model:\n" + "\n".join(
            map(str, keys)
        )


def test_a_later_task_of_the_batch_still_starts_after_a_failure_at_once(tmp_path: Path) -> None:
    """The engine as it is (its ``_advance`` reads the status once, before the batch): after
    k0, k1 starts, k2 aborts at once (status ``failed``) and k3, later in the same batch,
    is still called. The model keeps every task of a batch ready, so it replays that."""
    doc = known_view_doc()
    doc["name"] = "late-sibling"
    doc["workflows"][0]["tasks"] = [
        {"id": "k0", "tool": "t0"},
        {"id": "k1", "tool": "t0", "after": ["k0"]},
        {"id": "k2", "tool": "t1", "after": ["k0"]},
        {"id": "k3", "tool": "t0", "after": ["k0"]},
    ]
    scenario, by_inst = simulated(doc, tmp_path)
    late = [
        keys
        for keys in by_inst.values()
        if ("abort", "k2", "t1", None) in keys
        and keys.index(("call", "k3", "t0", None)) > keys.index(("abort", "k2", "t1", None))
    ]
    assert late, "the engine no longer starts a batch's later task after a failure"
    model = Model(scenario, "w", "dijkstra")
    for keys in late:
        assert replays(model, keys), keys
