"""``verify`` decides each workflow for every initiator (issue 13, SPEC §11): a second
initiator that reaches a write tool only through a plain-MCP gateway violates
``write_approval`` while the first (MCP+ end to end) satisfies it; initiators with the
same views share one search unless a property names an agent."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sim.scenario import parse_scenario
from sim.verify import decide, selected
from tests.harness.verify_runs import confirm, events, verdicts, verify

#: ``near`` reaches ``shop`` over MCP+; ``far`` only through ``gw``, which translates
#: MCP+ to plain MCP (requires_approval is lost; mcp_policy never: no approval asked).
TWO = """
name: two-initiators
description: Two initiators of one workflow, over MCP+ and through a plain-MCP gateway.
seed: 1
duration: 60
routers: [dijkstra]
protocols: [MCP, MCP+]
approval: {latency: {dist: constant, value: 1.0}, grant_probability: 0.9, mcp_policy: never}
agents:
  - {id: near, type: LLM_AGENT, protocols: {MCP+: 1.0}}
  - {id: near2, type: LLM_AGENT, protocols: {MCP+: 1.0}}
  - {id: far, type: LLM_AGENT, protocols: {MCP+: 1.0}}
  - {id: gw, type: GATEWAY, protocols: {MCP+: 1.0, MCP: 1.0}}
  - {id: shop, type: TOOL_SERVER, protocols: {MCP+: 1.0, MCP: 1.0}, tools: [buy]}
  - {id: near3, type: LLM_AGENT, protocols: {MCP+: 1.0}}
  - {id: shop2, type: TOOL_SERVER, protocols: {MCP+: 1.0}, tools: [buy]}
links:
  - {between: [near, shop], latency: {MCP+: 0.01}}
  - {between: [near2, shop], latency: {MCP+: 0.01}}
  - {between: [far, gw], latency: {MCP+: 0.01}}
  - {between: [gw, shop], latency: {MCP: 0.01}}
  - {between: [near3, shop2], latency: {MCP+: 0.01}}
tools:
  - name: buy
    description: Buys the chosen item and charges the card on file.
    side_effects: write
    requires_approval: true
    service_time: {dist: constant, value: 0.1}
workflows:
  - name: order
    initiators: {agents: [near, far]}
    protocol: MCP+
    arrivals: {process: poisson, rate: 0.5}
    tasks:
      - {id: pay, tool: buy}
"""


def scenario_file(tmp_path: Path, initiators: list[str]) -> str:
    doc = yaml.safe_load(TWO)
    doc["workflows"][0]["initiators"] = {"agents": initiators}
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def test_the_first_initiator_alone_satisfies_write_approval(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # what verify decided before it looked past the first initiator
    path = scenario_file(tmp_path, ["near"])
    code, obj, _ = verify(capsys, path, "--property", "write_approval")
    assert code == 0
    assert verdicts(obj)[("order", "write_approval")]["verdict"] == "holds"


def test_the_second_initiator_violates_write_approval_and_check_confirms_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = scenario_file(tmp_path, ["near", "far"])
    code, obj, _ = verify(
        capsys, path, "--property", "write_approval", "--counterexamples", str(tmp_path / "cx")
    )
    assert code == 1
    bad = verdicts(obj)[("order", "write_approval")]
    assert bad["verdict"] == "violated"
    evs = events(bad["counterexample"])
    # wf_start, the gateway's lossy translation, list, call, validate, unapproved execute
    assert [e["label"] for e in evs] == [
        "wf_start",
        "translate",
        "list",
        "call",
        "validate",
        "execute",
    ]
    assert evs[0]["agent"] == "far" and evs[1]["agent"] == "gw"
    assert "requires_approval" in evs[1]["detail"]["dropped"]
    assert evs[-1]["detail"]["approved"] is False
    confirm(capsys, bad["counterexample"], path, "write_approval")


def test_the_text_output_names_the_initiator_of_the_counterexample(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from sim.cli import main

    path = scenario_file(tmp_path, ["near", "far"])
    capsys.readouterr()
    code = main(
        ["verify", path, "--property", "write_approval", "--counterexamples", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "workflow order (2 initiators, 2 distinct models), router dijkstra:" in out
    assert "shortest counterexample of write_approval (initiator far, 6 events)" in out


def test_initiators_with_the_same_views_share_one_search(tmp_path: Path) -> None:
    doc = yaml.safe_load(TWO)
    # near3 reaches its own server shop2 as near reaches shop: the same up to renaming
    doc["workflows"][0]["initiators"] = {"agents": ["near", "near2", "far", "near3"]}
    scenario, _ = parse_scenario(yaml.safe_dump(doc), "three.yaml")
    props = selected(scenario, [], ["write_approval", "recovery"])
    wv = decide(scenario, "order", "dijkstra", props)
    assert wv.initiators == ("near", "near2", "near3", "far") and wv.models == 2
    # near2 and near3 add no search: the sizes are those of near and far alone
    doc["workflows"][0]["initiators"] = {"agents": ["near", "far"]}
    pair, _ = parse_scenario(yaml.safe_dump(doc), "pair.yaml")
    alone = decide(pair, "order", "dijkstra", selected(pair, [], ["write_approval", "recovery"]))
    assert [p.states for p in alone.properties] == [p.states for p in wv.properties]
    write, recovery = wv.properties
    assert write.verdict == "violated" and write.initiator == "far"
    assert recovery.verdict == "holds" and recovery.initiator == "near"


def test_a_property_naming_an_agent_decides_each_initiator_on_its_own(tmp_path: Path) -> None:
    # near2 shares near's views: merged, its own call would never be seen
    doc = yaml.safe_load(TWO)
    doc["workflows"][0]["initiators"] = {"agents": ["near", "near2"]}
    doc["properties"] = [
        {"name": "not-near2", "scope": "instance", "formula": "G !call(agent=near2)"}
    ]
    scenario, _ = parse_scenario(yaml.safe_dump(doc), "named.yaml")
    wv = decide(scenario, "order", "dijkstra", selected(scenario, [], ["not-near2"]))
    assert wv.models == 2
    (p,) = wv.properties
    assert p.verdict == "violated" and p.initiator == "near2"
    assert p.events is not None and p.events[0]["agent"] == "near2"


def test_a_property_naming_a_host_decides_each_initiator_on_its_own() -> None:
    doc = yaml.safe_load(TWO)
    doc["workflows"][0]["initiators"] = {"agents": ["near", "near3"]}
    doc["properties"] = [
        {"name": "not-shop2", "scope": "instance", "formula": "G !call(detail.target=shop2)"}
    ]
    scenario, _ = parse_scenario(yaml.safe_dump(doc), "host.yaml")
    wv = decide(scenario, "order", "dijkstra", selected(scenario, [], ["not-shop2"]))
    assert wv.models == 2
    (p,) = wv.properties
    assert p.verdict == "violated" and p.initiator == "near3"


def test_aut_writes_one_state_space_per_distinct_initiator_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from sim.calculus.lts import read_aut
    from sim.cli import main

    path = scenario_file(tmp_path, ["near", "near2", "far"])
    out = tmp_path / "spaces" / "order.aut"
    capsys.readouterr()
    code = main(
        [
            "verify",
            path,
            "--property",
            "recovery",
            "--aut",
            str(out),
            "--counterexamples",
            str(tmp_path / "cx"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 0
    # near and near2 share a model (one file, named after the first); far has its own
    assert sorted(p.name for p in out.parent.iterdir()) == ["order-far.aut", "order-near.aut"]
    assert "order (initiator near and 1 more of the same model): state space written" in err
    assert "order (initiator far): state space written" in err
    near = read_aut(out.parent / "order-near.aut")
    far = read_aut(out.parent / "order-far.aut")
    # far's requests cross the translating gateway: a step near's space never takes
    assert any(lab.startswith("translate(") for lab in far.labels)
    assert not any(lab.startswith("translate(") for lab in near.labels)
    capsys.readouterr()
    assert (
        main(["bisim", str(out.parent / "order-near.aut"), str(out.parent / "order-far.aut")]) == 1
    )
