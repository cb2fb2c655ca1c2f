"""The topology: block: seeded, connected, checked like written items."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.scenario import ScenarioError, load_scenario, parse_scenario
from sim.scenario.model import TopologySpec

ROOT = Path(__file__).resolve().parents[2]

BASE = """
name: gen
seed: 1
protocols: [MCP, MCP+, A2A]
agents:
  - {id: planner, type: LLM_AGENT, protocols: {MCP+: 1.0}}
tools:
  - {name: lookup, side_effects: read}
workflows:
  - name: w
    initiator: planner
    protocol: MCP+
    arrivals: {times: [0]}
    tasks: [{id: a, tool: lookup}]
topology:
  generator: @GEN@
  agents: 200
  params: @PARAMS@
  protocols: {MCP: 0.6, MCP+: 0.3, A2A: 0.2}
  gateways: 0.05
  tools: [{name: lookup, replicas: 3}]
  attach: [{agent: planner, links: 2}]
"""

CASES = [
    ("barabasi_albert", "{m: 2}"),
    ("waxman", "{alpha: 0.2, beta: 0.5}"),
    ("grid", "{rows: 10, cols: 20}"),
    ("erdos_renyi", "{degree: 3}"),
    ("random_regular", "{degree: 3}"),
    ("watts_strogatz", "{k: 4, p: 0.1}"),
]


def _text(gen: str, params: str) -> str:
    return BASE.replace("@GEN@", gen).replace("@PARAMS@", params)


@pytest.mark.parametrize(("gen", "params"), CASES)
def test_generated_mesh_is_valid_connected_and_deterministic(gen: str, params: str) -> None:
    scn, _ = parse_scenario(_text(gen, params))
    again, _ = parse_scenario(_text(gen, params))
    assert scn.model_dump() == again.model_dump()
    assert len(scn.agents) == 201
    import networkx as nx  # not at collection

    graph = nx.Graph()
    graph.add_nodes_from(a.id for a in scn.agents)
    graph.add_edges_from(tuple(link.between) for link in scn.links)
    assert nx.is_connected(graph)
    speaks = {a.id: set(a.protocols) for a in scn.agents}
    for link in scn.links:
        a, b = link.between
        assert set(link.latency) <= speaks[a] & speaks[b]
        assert all(0.001 <= v <= 0.02 for v in link.latency.values())
    hosts = [a for a in scn.agents if "lookup" in a.tools]
    assert len(hosts) == 3 and all(a.type.value == "TOOL_SERVER" for a in hosts)
    gateways = [a for a in scn.agents if a.type.value == "GATEWAY"]
    assert len(gateways) == 10 and all(len(a.protocols) == 3 for a in gateways)


def test_another_seed_gives_another_mesh() -> None:
    text = _text("barabasi_albert", "{m: 2}")
    a, _ = parse_scenario(text)
    b, _ = parse_scenario(text.replace("seed: 1", "seed: 2"))
    assert a.model_dump() != b.model_dump()


def test_generator_errors_are_located_at_the_topology_block() -> None:
    text = _text("barabasi_albert", "{m: 2}").replace("replicas: 3", "replicas: 999")
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "gen.yaml")
    (diag,) = [d for d in info.value.errors if d.field.startswith("topology")]
    assert diag.field == "topology.tools[0].replicas" and "TOOL_SERVER" in diag.message
    with pytest.raises(ScenarioError) as info:
        parse_scenario(_text("barabasi_albert", "{k: 2}"))
    assert "takes no parameter 'k'" in str(info.value)
    with pytest.raises(ScenarioError) as info:
        parse_scenario(_text("grid", "{rows: 3, cols: 3}"))
    assert "rows × cols" in str(info.value)


def test_a_rule_broken_by_a_generated_item_names_it() -> None:
    # a generated tool server hosting a tool nobody declared: reported at topology
    text = _text("barabasi_albert", "{m: 2}").replace("{name: lookup, replicas: 3}", "{name: nope}")
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text)
    messages = [d for d in info.value.errors if d.field.startswith("topology")]
    assert any("unknown tool 'nope'" in d.message for d in messages)
    assert any("generated agent 'n" in d.message for d in messages)


def test_generated_ids_do_not_clash_with_explicit_ones() -> None:
    text = (
        _text("barabasi_albert", "{m: 2}")
        .replace("id: planner", "id: n3")
        .replace("initiator: planner", "initiator: n3")
        .replace("agent: planner", "agent: n3")
    )
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text)
    assert "already an explicit agent" in str(info.value)


def test_expand_directly() -> None:
    from sim.scenario.generate import expand  # the generators: not at collection

    spec = TopologySpec(generator="grid", agents=16, protocols={"MCP": 1.0}, gateways=0.1)
    out = expand(spec, seed=4)
    assert [a.id for a in out.agents][:3] == ["n0", "n1", "n2"]
    assert len(out.links) == 24


def test_large_mesh_loads() -> None:
    """The shipped 10,000-agent mesh expands and passes every rule (its load time is
    measured by ``python -m benchmarks.run --only generate``)."""
    scn = load_scenario(ROOT / "scenarios" / "large_mesh.yaml")
    assert len(scn.agents) == 10_002
    assert len(scn.links) > 15_000


#: The generated mesh's sample path under each latency law: a hash of every generated
#: agent and link (barabasi_albert, 120 agents, jitter, an attached explicit agent). A
#: change here changes every generated scenario's results: make it on purpose (a new
#: networkx whose generator draws otherwise would too).
PINNED_PATHS = {
    "uniform": ({"dist": "uniform", "low": 0.001, "high": 0.02}, "4861ff4811914fce"),
    "exponential": ({"dist": "exponential", "mean": 0.01}, "519e56f0f0b13a7a"),
    "lognormal": ({"dist": "lognormal", "median": 0.01, "sigma": 0.5}, "c247a970b5b2f13f"),
    "per_protocol": (
        {"MCP": {"dist": "exponential", "mean": 0.01}, "A2A": {"dist": "constant", "value": 0.02}},
        "b463e8de3e996f9e",
    ),
}


@pytest.mark.parametrize("law", sorted(PINNED_PATHS))
def test_the_generated_sample_path_is_pinned(law: str) -> None:
    import hashlib
    import json

    from sim.scenario.generate import expand  # the generators: not at collection
    from sim.scenario.model import AgentSpec

    latency, pinned = PINNED_PATHS[law]
    spec = TopologySpec.model_validate(
        {
            "generator": "barabasi_albert",
            "agents": 120,
            "params": {"m": 2},
            "protocols": {"MCP": 0.6, "MCP+": 0.3, "A2A": 0.2},
            "gateways": 0.05,
            "latency": latency,
            "jitter": 0.002,
            "attach": [{"agent": "planner", "links": 3}],
            "tools": [{"name": "lookup", "replicas": 3}],
        }
    )
    planner = {"id": "planner", "type": "LLM_AGENT", "protocols": {"MCP+": 1.0, "MCP": 0.5}}
    out = expand(spec, 5, [AgentSpec.model_validate(planner)])
    # the fields a generator draws (an agent's `live:` entry, never generated, is left out)
    items = [x.model_dump(mode="json", exclude={"live"}) for x in out.agents]
    items += [x.model_dump(mode="json") for x in out.links]
    text = json.dumps(items, sort_keys=True)
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == pinned
