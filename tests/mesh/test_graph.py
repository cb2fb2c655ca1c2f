"""The protocol graph G = (V, E, P, Φ, Γ) built from a scenario, and its topology changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.mesh import (
    BUILTIN_FIELDS,
    Agent,
    DijkstraRouter,
    Link,
    NodeNotFound,
    ProtocolGraph,
    ProtocolNotFound,
    ResilientRouter,
    TranslationKind,
)
from sim.mesh.capabilities import similarity
from sim.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "scenarios" / "train_booking.yaml"


@pytest.fixture
def shipped() -> ProtocolGraph:
    return ProtocolGraph.from_scenario(load_scenario(SHIPPED))


def test_from_scenario_counts_and_order(shipped: ProtocolGraph) -> None:
    assert len(shipped) == 5
    assert [a.id for a in shipped.agents] == ["planner", "gw1", "gw2", "accounts", "tickets"]
    assert len(shipped.links) == 6
    assert shipped.protocols == ("MCP", "MCP+", "A2A")
    assert shipped.table.loss_penalty == 1.0
    assert shipped.table.default_delay == 0.002
    assert "gw1" in shipped and "nobody" not in shipped


def test_agents_gamma_and_hosts(shipped: ProtocolGraph) -> None:
    planner = shipped.agent("planner")
    assert planner.type == "LLM_AGENT"
    assert planner.capabilities == ("planning", "booking")
    assert planner.speaks == {"MCP+", "A2A"}
    assert shipped.affinity("planner", "A2A") == 0.9
    assert shipped.affinity("planner", "MCP") == 0.0  # not spoken
    assert shipped.affinity("tickets", "MCP+") == 0.8
    assert shipped.agent("gw1").translation_delay == 0.001
    assert shipped.agent("gw2").translation_delay is None
    assert shipped.agent("tickets").concurrency == 8
    assert shipped.agent("accounts").concurrency == 16
    assert shipped.hosts("book_train") == ("tickets",)
    assert shipped.hosts("fetch_user") == ("accounts",)
    assert shipped.hosts("nope") == ()


def test_link_lookup_both_directions(shipped: ProtocolGraph) -> None:
    forward = shipped.link("planner", "gw1")
    backward = shipped.link("gw1", "planner")
    assert forward is backward is not None
    assert dict(forward.latency) == {"MCP+": 0.010, "A2A": 0.012}
    assert forward.jitter == 0.002
    assert forward.other("planner") == "gw1" and forward.other("gw1") == "planner"
    assert forward.ends == {"planner", "gw1"}
    assert shipped.link("planner", "tickets") is None
    assert [link.other("tickets") for link in shipped.incident("tickets")] == ["gw1", "gw2"]


def test_user_defined_protocols_and_rules_from_yaml() -> None:
    text = """
name: custom
duration: 10
protocols: [MCP, {name: X, fields: [name, description, summary]}]
routing: {loss_penalty: 2.0, translation_delay: 0.004}
translations:
  - {from: MCP, to: X, allowed: false}
  - {from: X, to: MCP, loss: 0.3, delay: 0.02, destructive: true, fail: 0.1}
agents:
  - {id: a, type: GATEWAY, protocols: {MCP: 1.0, X: 0.7}}
  - {id: b, type: TOOL_SERVER, protocols: {X: 1.0}}
links:
  - {between: [a, b], latency: {X: 0.01}}
"""
    scenario, _ = parse_scenario(text, "custom.yaml")
    graph = ProtocolGraph.from_scenario(scenario)
    assert graph.table.fields("X") == {"name", "description", "summary"}
    assert graph.table.fields("MCP") == BUILTIN_FIELDS["MCP"]
    assert graph.table.direct("MCP", "X") is None
    step = graph.table.direct("X", "MCP")
    assert step is not None
    assert (step.loss, step.delay, step.kind, step.fail) == (
        0.3,
        0.02,
        TranslationKind.DESTRUCTIVE,
        0.1,
    )
    assert graph.table.loss_penalty == 2.0
    assert graph.affinity("a", "X") == 0.7


def test_node_not_found_with_did_you_mean(shipped: ProtocolGraph) -> None:
    with pytest.raises(NodeNotFound) as info:
        shipped.agent("planer")
    assert str(info.value) == "unknown agent 'planer' (did you mean 'planner'?)"
    assert info.value.agent_id == "planer"
    assert isinstance(info.value, KeyError)
    with pytest.raises(NodeNotFound) as info:
        shipped.affinity("zzzzzz", "MCP")
    assert str(info.value) == "unknown agent 'zzzzzz'"


def test_protocol_not_found(shipped: ProtocolGraph) -> None:
    with pytest.raises(ProtocolNotFound) as info:
        shipped.check_protocol("MCP++")
    assert "unknown protocol 'MCP++'" in str(info.value)
    assert "did you mean" in str(info.value)
    with pytest.raises(ProtocolNotFound):
        shipped.add_agent(Agent("new", "LLM_AGENT", {"SGD": 1.0}))  # SGD is not in this P
    with pytest.raises(ProtocolNotFound):
        shipped.add_link(Link("planner", "gw1", {"ANP": 0.1}))


def test_add_link_rejects_unspoken_protocol_and_duplicates(shipped: ProtocolGraph) -> None:
    version = shipped.version
    with pytest.raises(ValueError, match="'planner' does not speak MCP"):
        shipped.add_link(Link("planner", "tickets", {"MCP": 0.001}))
    with pytest.raises(ValueError, match="exists"):
        shipped.add_link(Link("gw1", "planner", {"A2A": 0.001}))
    with pytest.raises(NodeNotFound):
        shipped.add_link(Link("planner", "ghost", {"A2A": 0.001}))
    with pytest.raises(KeyError):
        shipped.remove_link("planner", "tickets")
    assert shipped.version == version  # failed changes change nothing
    assert len(shipped.links) == 6


def test_version_bumps_and_route_cache_invalidation(shipped: ProtocolGraph) -> None:
    dijkstra = DijkstraRouter(shipped)
    resilient = ResilientRouter(shipped)
    before = dijkstra.route("planner", "tickets")
    assert before.path == ("planner", "gw1", "tickets")
    assert resilient.route("planner", "tickets").path == before.path
    v0 = shipped.version
    shipped.add_link(Link("planner", "tickets", {"MCP+": 0.001}))
    assert shipped.version == v0 + 1
    after = dijkstra.route("planner", "tickets")
    assert after.path == ("planner", "tickets") and after.cost == pytest.approx(0.001)
    assert resilient.route("planner", "tickets").path == ("planner", "tickets")
    removed = shipped.remove_link("tickets", "planner")
    assert removed.ends == {"planner", "tickets"}
    assert shipped.version == v0 + 2
    assert dijkstra.route("planner", "tickets").path == before.path
    # removing the primary path's last link moves the route to the backup gateway
    shipped.remove_link("gw1", "tickets")
    rerouted = dijkstra.route("planner", "tickets")
    assert rerouted.path == ("planner", "gw2", "tickets")
    assert rerouted.cost == pytest.approx(0.025 + 0.002 + 0.009)
    # a new agent bumps the version too, and becomes reachable once linked
    shipped.add_agent(Agent("extra", "TOOL_SERVER", {"A2A": 1.0}))
    assert shipped.version == v0 + 4
    shipped.add_link(Link("extra", "planner", {"A2A": 0.5}))
    assert dijkstra.route("planner", "extra").cost == pytest.approx(0.5)


def test_add_agent_replaces_only_unlinked(shipped: ProtocolGraph) -> None:
    with pytest.raises(ValueError, match="has links"):
        shipped.add_agent(Agent("gw1", "GATEWAY", {"MCP": 1.0}))
    shipped.add_agent(Agent("lonely", "GATEWAY", {"MCP": 1.0}))
    shipped.add_agent(Agent("lonely", "GATEWAY", {"A2A": 1.0}))
    assert shipped.agent("lonely").speaks == {"A2A"}
    assert len(shipped) == 6


def test_hosts_index_follows_new_agents(shipped: ProtocolGraph) -> None:
    assert shipped.hosts("book_train") == ("tickets",)
    shipped.add_agent(Agent("tickets2", "TOOL_SERVER", {"MCP": 1.0}, tools=("book_train",)))
    assert shipped.hosts("book_train") == ("tickets", "tickets2")


def test_matches_follow_new_agents(shipped: ProtocolGraph) -> None:
    before = dict(shipped.matches("train booking"))
    shipped.add_agent(Agent("clerk", "LLM_AGENT", {"MCP": 1.0}, capabilities=("train_booking",)))
    after = shipped.matches("train booking")
    assert "clerk" not in before and next(iter(after)) == "clerk" and after["clerk"] == 1.0


_WORDS = ("book", "train", "hotel", "search", "pay", "refund")
_CAPS = st.lists(
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map("_".join), max_size=3
).map(tuple)


@settings(max_examples=60, deadline=None)
@given(st.lists(_CAPS, min_size=1, max_size=8), _CAPS.filter(bool))
def test_matches_rank_agents_as_similarity_does(
    capabilities: list[tuple[str, ...]], need: tuple[str, ...]
) -> None:
    """The cached ranking is the brute force one: every agent's ``similarity`` (the same
    float), positive ones only, best first, ties in graph order."""
    graph = ProtocolGraph([], [], ProtocolGraph.from_scenario(load_scenario(SHIPPED)).table)
    for i, caps in enumerate(capabilities):
        graph.add_agent(Agent(f"a{i}", "LLM_AGENT", {"MCP": 1.0}, capabilities=caps))
    wanted = " ".join(need)
    brute = sorted(
        ((similarity(wanted, caps), i) for i, caps in enumerate(capabilities)),
        key=lambda s: (-s[0], s[1]),
    )
    assert list(graph.matches(wanted).items()) == [(f"a{i}", sim) for sim, i in brute if sim > 0]
