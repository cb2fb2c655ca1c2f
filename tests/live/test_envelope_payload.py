"""The envelope's JSON, a route's legs, and translation on the real message's content."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.calculus.mcp import ALL_FIELDS, PROTOCOL_FIELDS
from sim.live.envelope import Envelope, Leg, arriving, route_json
from sim.live.parts import Owner
from sim.live.payload import Call, Descriptor
from sim.mesh.graph import ProtocolGraph
from sim.mesh.registry import make_router
from sim.scenario import load_scenario
from tests.harness.live_paths import TINY


@pytest.fixture(scope="module")
def graph() -> ProtocolGraph:
    return ProtocolGraph.from_scenario(load_scenario(TINY))


def _route(graph: ProtocolGraph, tool: str, rho: str) -> object:
    router = make_router("dijkstra", graph, load_scenario(TINY))
    return router.serve("planner", tool, source_protocol=rho)


def test_an_envelope_survives_its_json() -> None:
    env = Envelope({"path": ["a", "b"]}, 1, "request", 42, Owner("w", 3, "t", 7, "x"), 2, 1.5,
                   deadline=4.5, gate="requires_approval", caller="a")  # fmt: skip
    assert Envelope.from_json(env.to_json()) == env
    assert Envelope.from_json(env.at(2, 9.0).to_json()).i == 2


def test_a_malformed_envelope_names_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="not an object"):
        Envelope.from_json([1, 2])
    with pytest.raises(ValueError, match="malformed protomesh/route envelope: KeyError"):
        Envelope.from_json({"route": {}, "i": 0})


def test_a_leg_carries_each_translation_at_its_position(graph: ProtocolGraph) -> None:
    route = _route(graph, "lookup", "MCP+")
    leg = Leg.from_json(graph, route_json(route, "MCP+"))
    assert leg.route.path == ("planner", "gw", "tickets")
    assert leg.steps[0] is None and leg.steps[2] is None
    (step,) = leg.steps[1] or ()
    assert (step.source, step.target, step.kind) == ("MCP+", "MCP", "lossy")
    assert leg.end == "MCP"
    back = leg.reverse(graph)
    assert back.route.path == ("tickets", "gw", "planner")
    (undo,) = back.steps[1] or ()
    assert (undo.source, undo.target) == ("MCP", "MCP+")
    env = Envelope(
        route_json(route, "MCP+"), 2, "request", 0, Owner(None, None, None, 1, None), 1, 0.0
    )
    assert arriving(env) == "MCP"
    with pytest.raises(ValueError, match="position 0 is not on its route"):
        arriving(Envelope(route_json(route, "MCP+"), 0, "request", 0, env.owner, 1, 0.0))


def test_a_route_with_one_protocol_too_many_is_refused(graph: ProtocolGraph) -> None:
    data = route_json(_route(graph, "lookup", "MCP+"), "MCP+")
    data["protocols"] = [*data["protocols"], "MCP"]
    with pytest.raises(ValueError, match="one protocol per link"):
        Leg.from_json(graph, data)


TRUTH = Descriptor(
    {"name": "book", "description": "Books.", "input_schema": {"type": "object"},
     "side_effects": "write", "requires_approval": True, "summary": "S."},
    ALL_FIELDS,
)  # fmt: skip


def test_mcp_plus_to_mcp_keeps_what_mcp_represents() -> None:
    plain = TRUTH.through(_Table(), ("MCP+", "MCP"))
    assert plain.known == PROTOCOL_FIELDS["MCP"]
    assert set(plain.values) == {"name", "description", "input_schema"}
    view = plain.view("hints")
    assert view.fields == PROTOCOL_FIELDS["MCP"]
    assert view.approval and view.approval_reason == "mcp_policy=hints, readOnlyHint=False"


def test_a2a_keeps_the_name_and_description_only() -> None:
    assert set(TRUTH.through(_Table(), ("MCP", "A2A")).values) == {"name", "description"}


class _Table:
    """The built-in protocols' fields, as a scenario's translation table gives them."""

    def fields(self, protocol: str) -> frozenset[str]:
        return PROTOCOL_FIELDS[protocol]


@given(st.lists(st.sampled_from(sorted(PROTOCOL_FIELDS)), max_size=6))
def test_translation_only_loses_fields(chain: list[str]) -> None:
    out = TRUTH.through(_Table(), chain)
    assert "name" in out.known and out.known <= TRUTH.known
    for p in chain:
        assert out.known - {"name"} <= PROTOCOL_FIELDS[p]
    assert set(out.values) <= out.known
    again = out.through(_Table(), chain)
    assert again == out  # translating twice loses nothing more


def test_a_call_keeps_the_request_metadata_its_protocol_represents() -> None:
    call = Call("book", {"x": 1}, {"requires_approval": True, "side_effects": "write"})
    assert call.through(_Table(), ("MCP+", "ANP")).plus == {"requires_approval": True}
    assert call.through(_Table(), ("MCP+", "MCP")).plus == {}
    assert call.through(_Table(), ("MCP+",)).plus == call.plus
