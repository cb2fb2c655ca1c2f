"""A compiled path's constant trace text is the JSON the vocabulary's encoder writes,
whatever the agent ids (quotes, backslashes, non-ASCII): ``sim.engine.paths``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine.paths import Path
from sim.engine.topology import Topology
from sim.engine.trace import js, members
from sim.mesh import Agent, DijkstraRouter, Link, Protocol, ProtocolGraph, TranslationTable

IDS = st.lists(st.text(min_size=1, max_size=6), min_size=3, max_size=3, unique=True)


@settings(max_examples=60, deadline=None)
@given(ids=IDS, protocol=st.sampled_from(["MCP", "MCP+", 'Ü"\\']))
def test_send_text_is_the_encoder_s(ids: list[str], protocol: str) -> None:
    table = TranslationTable([Protocol(protocol, frozenset({"name"}))])
    agents = [Agent(a, "GATEWAY", {protocol: 1.0}) for a in ids]
    links = [Link(ids[0], ids[1], {protocol: 0.1}), Link(ids[1], ids[2], {protocol: 0.2})]
    graph = ProtocolGraph(agents, links, table)
    route = DijkstraRouter(graph).route(ids[0], ids[2])
    path = Path(Topology(graph), route, protocol)
    assert path.send_detail == members({"to": ids[2], "path": ids})
    assert path.send_tail == "," + members({"to": ids[2], "path": ids}) + "}}\n"
    assert (path.startj, path.endj) == (js(protocol), js(protocol))
    back = path.reverse()
    assert back.send_detail == members({"to": ids[0], "path": ids[::-1]})
