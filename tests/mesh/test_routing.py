"""Hand-made routing cases (SPEC §3): exact routes, reasons for no route, determinism."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from sim.cli import main
from sim.mesh import (
    Agent,
    BfsRouter,
    DijkstraRouter,
    DownSet,
    Link,
    NodeNotFound,
    NoRoute,
    PairRule,
    Protocol,
    ProtocolGraph,
    ProtocolNotFound,
    ResilientRouter,
    SemanticRouter,
    Translation,
    TranslationTable,
    make_router,
    route_cost,
)
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "scenarios" / "train_booking.yaml"


def mesh(
    agents: Iterable[Agent],
    links: Iterable[tuple[str, str, dict[str, float]]],
    rules: Iterable[PairRule] = (),
    protocols: Iterable[str] = ("A", "B", "C"),
    penalty: float = 1.0,
    delay: float = 0.002,
) -> ProtocolGraph:
    """A graph over user-defined protocols with equal field sets (derived loss 0)."""
    table = TranslationTable(
        [Protocol(p, frozenset({"name", "description"})) for p in protocols],
        list(rules),
        loss_penalty=penalty,
        default_delay=delay,
    )
    return ProtocolGraph(agents, [Link(a, b, lat) for a, b, lat in links], table)


def agent(
    id: str,
    *speaks: str,
    delay: float | None = None,
    caps: tuple[str, ...] = (),
    tools: tuple[str, ...] = (),
    gamma: float = 1.0,
) -> Agent:
    return Agent(id, "GATEWAY", dict.fromkeys(speaks, gamma), caps, tools, translation_delay=delay)


@pytest.fixture(scope="module")
def shipped() -> ProtocolGraph:
    return ProtocolGraph.from_scenario(load_scenario(SHIPPED))


# --- exact routes -----------------------------------------------------------------------


def test_route_passes_an_agent_twice_to_translate_at_a_cheaper_gateway() -> None:
    graph = mesh(
        [
            agent("s", "A"),
            agent("v", "A", "B", delay=1.0),  # can translate, but slowly
            agent("g", "A", "B", delay=0.001),  # the cheap gateway next door
            agent("d", "B"),
        ],
        [
            ("s", "v", {"A": 0.01}),
            ("v", "g", {"A": 0.001, "B": 0.001}),
            ("v", "d", {"B": 0.01}),
        ],
    )
    for router in (DijkstraRouter(graph), ResilientRouter(graph), SemanticRouter(graph)):
        route = router.route("s", "d")
        assert route.path == ("s", "v", "g", "v", "d")
        assert route.protocols == ("A", "A", "B", "B")
        assert route.translations == (Translation("g", "A", "B"),)
        assert route.cost == pytest.approx(0.01 + 0.001 + 0.001 + 0.001 + 0.01)
        assert route.hops == 4
        assert route.cost == pytest.approx(route_cost(graph, route.path, route.protocols))
    # translating at v directly is valid but far dearer
    assert route_cost(graph, ("s", "v", "d"), ("A", "B")) == pytest.approx(1.02)


def test_source_and_target_protocol_translations_at_the_ends() -> None:
    graph = mesh(
        [agent("s", "A", "B"), agent("d", "B", "C", delay=0.004)],
        [("s", "d", {"B": 0.01})],
        rules=[PairRule("A", "B", loss=0.25, delay=0.003)],
        penalty=2.0,
    )
    route = DijkstraRouter(graph).route("s", "d", source_protocol="A", target_protocol="C")
    assert route.path == ("s", "d")
    assert route.protocols == ("B",)
    assert route.translations == (Translation("s", "A", "B"), Translation("d", "B", "C"))
    assert route.cost == pytest.approx((0.003 + 2.0 * 0.25) + 0.01 + 0.004)
    assert route.to_json() == {
        "router": "dijkstra",
        "from": "s",
        "to": "d",
        "path": ["s", "d"],
        "protocols": ["B"],
        "translations": [{"at": "s", "from": "A", "to": "B"}, {"at": "d", "from": "B", "to": "C"}],
        "cost": route.cost,
        "hops": 1,
    }
    # without end protocols, nothing to translate
    plain = DijkstraRouter(graph).route("s", "d")
    assert plain.translations == () and plain.cost == pytest.approx(0.01)


def test_zero_hop_route() -> None:
    graph = mesh([agent("s", "A", "B", delay=0.005)], [])
    router = DijkstraRouter(graph)
    same = router.route("s", "s")
    assert (same.path, same.protocols, same.translations, same.cost) == (("s",), (), (), 0.0)
    route = router.route("s", "s", source_protocol="A", target_protocol="B")
    assert route.path == ("s",) and route.protocols == () and route.hops == 0
    assert route.translations == (Translation("s", "A", "B"),)
    assert route.cost == pytest.approx(0.005)
    # a source protocol alone needs no translation, even a free one
    free = mesh([agent("s", "A", "B", delay=0.0)], [], penalty=0.0)
    route = DijkstraRouter(free).route("s", "s", source_protocol="B")
    assert route.translations == () and route.cost == 0.0


def test_no_pointless_free_translation_at_the_target() -> None:
    graph = mesh(
        [agent("s", "B"), agent("d", "A", "B", delay=0.0)], [("s", "d", {"B": 0.0})], penalty=0
    )
    route = DijkstraRouter(graph).route("s", "d")
    assert route.protocols == ("B",) and route.translations == ()


def test_zero_latency_links_and_free_translations_are_edges() -> None:
    graph = mesh(
        [agent("s", "A"), agent("g", "A", "B", delay=0.0), agent("d", "B")],
        [("s", "g", {"A": 0.0}), ("g", "d", {"B": 0.0})],
        penalty=0.0,
    )
    route = DijkstraRouter(graph).route("s", "d")
    assert route.path == ("s", "g", "d") and route.cost == 0.0
    assert route.translations == (Translation("g", "A", "B"),)


def test_graph_rejects_a_self_link() -> None:
    with pytest.raises(ValueError, match="two different agents"):
        mesh([agent("s", "A")], [("s", "s", {"A": 0.1})])


def test_static_dijkstra_ignores_down_and_resilient_reroutes(shipped: ProtocolGraph) -> None:
    down = DownSet.of(["gw1"])
    static = DijkstraRouter(shipped).route("planner", "tickets", down=down)
    assert static.path == ("planner", "gw1", "tickets")
    assert static.protocols == ("MCP+", "MCP+")
    assert static.cost == pytest.approx(0.016)
    resilient = ResilientRouter(shipped)
    assert resilient.route("planner", "tickets") == static.__class__(
        "resilient", static.path, static.protocols, static.translations, static.cost
    )
    rerouted = resilient.route("planner", "tickets", down=down)
    assert rerouted.path == ("planner", "gw2", "tickets")
    assert rerouted.protocols == ("A2A", "MCP")
    assert rerouted.translations == (Translation("gw2", "A2A", "MCP"),)
    assert rerouted.cost == pytest.approx(0.025 + 0.002 + 0.009)
    # a down link, not a node
    around_link = resilient.route("planner", "tickets", down=DownSet.of([], [("tickets", "gw1")]))
    assert around_link.path == ("planner", "gw2", "tickets")
    assert around_link.cost == pytest.approx(rerouted.cost)


def test_shipped_routes_with_source_protocol(shipped: ProtocolGraph) -> None:
    route = DijkstraRouter(shipped).route("planner", "tickets", source_protocol="MCP+")
    assert route.path == ("planner", "gw1", "tickets") and route.translations == ()
    to_mcp = DijkstraRouter(shipped).route(
        "planner", "tickets", source_protocol="A2A", target_protocol="MCP"
    )
    # A2A → MCP at gw1 (its own delay 0.001, lossless), then MCP on the last link
    assert to_mcp.path == ("planner", "gw1", "tickets")
    assert to_mcp.protocols == ("A2A", "MCP")
    assert to_mcp.translations == (Translation("gw1", "A2A", "MCP"),)
    assert to_mcp.cost == pytest.approx(0.012 + 0.001 + 0.005)


# --- why there is no route ----------------------------------------------------------------


def _reason(call: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(NoRoute) as info:
        call(*args, **kwargs)  # type: ignore[operator]
    return info.value.reason


def test_no_route_reasons() -> None:
    graph = mesh(
        [agent("s", "A"), agent("v", "A", "B"), agent("d", "B"), agent("x", "A")],
        [("s", "v", {"A": 0.01}), ("v", "d", {"B": 0.01})],
        rules=[PairRule("A", "B", allowed=False)],
    )
    resilient = ResilientRouter(graph)
    assert _reason(resilient.route, "s", "d", down=DownSet.of(["s"])) == "the source 's' is down"
    assert _reason(resilient.route, "s", "d", down=DownSet.of(["d"])) == "the target 'd' is down"
    assert "no chain of links joins 's' to 'x'" in _reason(resilient.route, "s", "x")
    around = _reason(resilient.route, "s", "d", down=DownSet.of([], [("v", "s")]))
    assert "no chain of links joins 's' to 'd' around the down nodes and links" in around
    blocked = _reason(DijkstraRouter(graph).route, "s", "d")
    assert "no protocol path" in blocked
    assert "'s' and 'd' are linked" in blocked
    assert "does not speak B" in _reason(DijkstraRouter(graph).route, "s", "d", source_protocol="B")
    assert "does not speak A" in _reason(DijkstraRouter(graph).route, "s", "d", target_protocol="A")
    # the reverse pair is allowed: d reaches s
    assert DijkstraRouter(graph).route("d", "s").translations == (Translation("v", "B", "A"),)


def test_bfs_on_a_protocol_without_a_path() -> None:
    graph = mesh(
        [agent("s", "A", "B"), agent("v", "A", "B"), agent("d", "A", "B")],
        [("s", "v", {"A": 0.01}), ("v", "d", {"B": 0.01})],
    )
    bfs = BfsRouter(graph)
    reason = _reason(bfs.route, "s", "d", source_protocol="A")
    assert "no chain of A links joins 's' to 'd'" in reason
    assert "bfs does not translate" in reason
    assert "bfs uses one protocol" in _reason(
        bfs.route, "s", "d", source_protocol="A", target_protocol="B"
    )
    assert DijkstraRouter(graph).route("s", "d").translations == (Translation("v", "A", "B"),)
    # without a protocol, every common one is tried and the sentence names them all
    reason = _reason(bfs.route, "s", "d")
    assert reason == (
        "no chain of links in one protocol (A, B) joins 's' to 'd' "
        "(bfs does not translate; try --router dijkstra)"
    )
    lone = mesh([agent("s", "A"), agent("d", "B")], [])
    assert "speak no protocol in common" in _reason(BfsRouter(lone).route, "s", "d")


def test_bfs_fewest_hops_then_lowest_cost() -> None:
    graph = mesh(
        [agent(x, "A") for x in ("s", "p", "q", "d")],
        [
            ("s", "d", {"A": 1.0}),
            ("s", "p", {"A": 0.01}),
            ("p", "d", {"A": 0.01}),
            ("s", "q", {"A": 0.001}),
            ("q", "d", {"A": 0.001}),
        ],
    )
    assert BfsRouter(graph).route("s", "d", source_protocol="A").path == ("s", "d")
    graph.remove_link("s", "d")
    route = BfsRouter(graph).route("s", "d", source_protocol="A")
    assert route.path == ("s", "q", "d") and route.cost == pytest.approx(0.002)


def test_unknown_names() -> None:
    graph = mesh([agent("planner", "A")], [])
    router = DijkstraRouter(graph)
    with pytest.raises(NodeNotFound, match="did you mean 'planner'"):
        router.route("planer", "planner")
    with pytest.raises(ProtocolNotFound, match="unknown protocol 'Q'"):
        router.route("planner", "planner", source_protocol="Q")
    with pytest.raises(ValueError, match="unknown router"):
        make_router("astar", graph)
    assert isinstance(make_router("bfs", graph), BfsRouter)


# --- semantic -------------------------------------------------------------------------------


def _semantic_mesh() -> ProtocolGraph:
    return mesh(
        [
            agent("me", "A"),
            agent("near", "A", caps=("train_booking",), tools=("book",), gamma=0.8),
            agent("far", "A", caps=("trainBooking", "ticketDelivery"), tools=("book",)),
            agent("other", "A", caps=("weather",)),
        ],
        [("me", "near", {"A": 0.1}), ("me", "far", {"A": 0.3}), ("me", "other", {"A": 0.0})],
    )


def test_semantic_ranking_and_failover() -> None:
    router = SemanticRouter(_semantic_mesh())
    ranked = router.rank("me", "train_booking")
    assert [c.agent for c in ranked] == ["near", "far"]
    near, far = ranked
    assert near.similarity == pytest.approx(1.0)
    assert near.affinity == 0.8
    assert near.score == pytest.approx(1.0 * 0.8 / 1.1)
    assert far.similarity == pytest.approx(2 / (2**0.5 * 4**0.5))
    assert far.score == pytest.approx(far.similarity * 1.0 / 1.3)
    assert router.resolve("me", "train_booking").path == ("me", "near")
    failover = router.resolve("me", "train_booking", down=DownSet.of(["near"]))
    assert failover.path == ("me", "far") and failover.router == "semantic"
    # a tool: its hosts, with similarity 1
    hosts = router.rank("me", "book")
    assert [c.agent for c in hosts] == ["far", "near"]  # 1/1.3 > 0.8/1.1
    assert [c.similarity for c in hosts] == [1.0, 1.0]
    assert router.resolve("me", "book").path == ("me", "far")
    assert router.resolve("me", "book", down=DownSet.of(["far"])).path == ("me", "near")
    # a route to an agent id behaves as dijkstra with down
    assert router.route("me", "far").cost == pytest.approx(0.3)


def test_semantic_no_route_reasons() -> None:
    router = SemanticRouter(_semantic_mesh())
    both = DownSet.of(["near", "far"])
    assert _reason(router.resolve, "me", "book", down=both) == (
        "all candidates for 'book' are down (near, far)"
    )
    assert _reason(router.resolve, "me", "train_booking", down=both) == (
        "all candidates for 'train_booking' are down (near, far)"
    )
    assert _reason(router.resolve, "me", "quantum_chemistry") == (
        "no agent's capabilities match 'quantum_chemistry'"
    )
    assert _reason(router.resolve, "me", "book", down=DownSet.of(["me"])) == (
        "the source 'me' is down"
    )
    cut = DownSet.of([], [("me", "near"), ("me", "far")])
    assert "is reachable from 'me' around the down" in _reason(
        router.resolve, "me", "book", down=cut
    )


# --- caches --------------------------------------------------------------------------------


def test_route_cache_per_key_and_invalidation() -> None:
    graph = mesh(
        [agent("s", "A"), agent("v", "A"), agent("d", "A")],
        [("s", "v", {"A": 0.01}), ("v", "d", {"A": 0.01})],
    )
    router = ResilientRouter(graph)
    first = router.route("s", "d")
    assert router.route("s", "d") is first
    assert router.route("s", "d", source_protocol="A") == first
    assert "v" in first.path
    with pytest.raises(NoRoute):
        router.route("s", "d", down=DownSet.of(["v"]))
    assert router.route("s", "d") is first  # the down-set is part of the key
    graph.add_link(Link("s", "d", {"A": 0.005}))
    shortcut = router.route("s", "d")
    assert shortcut.path == ("s", "d") and shortcut.cost == pytest.approx(0.005)
    assert router.route("s", "d", down=DownSet.of(["v"])).path == ("s", "d")
    graph.remove_link("d", "s")
    assert router.route("s", "d").path == ("s", "v", "d")


# --- determinism --------------------------------------------------------------------------


def _route_calls(scenario: str, big: str) -> list[list[str]]:
    """``route`` command lines (less ``route`` and ``--json``) on the shipped scenario and on
    :func:`_big_scenario`: every router, down sets, protocols, a capability target."""
    shipped_down = ["--down", "gw1,accounts~gw2", "--protocol", "A2A", "--to-protocol", "MCP"]
    big_down = ["--protocol", "A2A", "--down", "n5,n6,n1~n2"]
    calls = []
    for router in ("dijkstra", "bfs", "resilient", "semantic"):
        for a, b in (("planner", "tickets"), ("planner", "accounts"), ("tickets", "planner")):
            calls.append([scenario, "--from", a, "--to", b, "--router", router])
        calls.append([scenario, "--from", "planner", "--to", "tickets", "--router", router])
        calls[-1] += shipped_down
    calls.append([scenario, "--from", "planner", "--to", "train_booking", "--router", "semantic"])
    for router in ("dijkstra", "bfs", "resilient"):
        for a, b in (("n0", "n199"), ("n42", "n3")):
            calls.append([big, "--from", a, "--to", b, "--router", router])
        calls.append([big, "--from", "n17", "--to", "n150", "--router", router, *big_down])
    calls.append([big, "--from", "n0", "--to", "route_planning", "--router", "semantic"])
    calls[-1] += ["--down", "n10"]
    return calls


#: Prints its hash seed's hash of a string, then runs ``route`` for each command line of
#: the JSON list in the file ``argv[1]``, printing each exit code after the command's output.
_ROUTES = r"""
import json, sys
from sim.cli import main
print(hash("protomesh"), flush=True)
with open(sys.argv[1], encoding="utf-8") as f:
    calls = json.load(f)
for call in calls:
    print(main(["route", *call, "--json"]), flush=True)
"""


def _big_scenario(n: int = 200, seed: int = 11) -> str:
    rng = random.Random(seed)
    protocols = ["MCP", "MCP+", "A2A", "ANP"]
    caps = ["route_planning", "ticketBooking", "user.profile", "weather", "geo:lookup"]
    lines = [
        "name: big",
        "duration: 10",
        f"protocols: [{', '.join(protocols)}]",
        "translations:",
        "  - {from: A2A, to: ANP, allowed: false}",
        "  - {from: MCP, to: A2A, loss: 0.05, delay: 0.01}",
        "agents:",
    ]
    speaks: list[list[str]] = []
    for i in range(n):
        spoken = rng.sample(protocols, rng.randint(1, 3)) if i % 10 else protocols
        speaks.append(spoken)
        gammas = ", ".join(f"{p}: {rng.choice([1.0, 0.9, 0.5])}" for p in spoken)
        cap = rng.sample(caps, rng.randint(0, 2))
        lines.append(
            f"  - {{id: n{i}, type: {'GATEWAY' if i % 10 == 0 else 'LLM_AGENT'}, "
            f"protocols: {{{gammas}}}, capabilities: [{', '.join(cap)}]}}"
        )
    lines.append("links:")
    seen: set[frozenset[int]] = set()
    for i in range(n):
        for j in [*rng.sample(range(n), 3), (i + 1) % n]:
            common = [p for p in speaks[i] if p in speaks[j]]
            if i == j or not common or frozenset((i, j)) in seen:
                continue
            seen.add(frozenset((i, j)))
            lat = ", ".join(f"{p}: {rng.choice([0.001, 0.002, 0.005, 0.01])}" for p in common)
            lines.append(f"  - {{between: [n{i}, n{j}], latency: {{{lat}}}}}")
    return "\n".join(lines) + "\n"


def test_routes_do_not_depend_on_hash_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same lines and exit codes in a process with PYTHONHASHSEED=0 (12345 where this
    one has 0) as in this process, whose strings hash differently (checked)."""
    big = tmp_path / "big.yaml"
    big.write_text(_big_scenario())
    load_scenario(big)  # valid
    calls = _route_calls(str(SHIPPED), str(big))
    (tmp_path / "calls.json").write_text(json.dumps(calls), encoding="utf-8")
    seed = "12345" if os.environ.get("PYTHONHASHSEED") == "0" else "0"
    other = subprocess.Popen(
        [sys.executable, "-c", _ROUTES, str(tmp_path / "calls.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": seed},
        cwd=ROOT,
    )
    capsys.readouterr()
    print(hash("protomesh"), flush=True)
    for call in calls:
        print(main(["route", *call, "--json"]), flush=True)
    here = capsys.readouterr()
    there_out, there_err = other.communicate(timeout=120)
    assert other.returncode == 0, there_err
    mine, theirs = here.out.split("\n", 1), there_out.split("\n", 1)
    assert mine[0] != theirs[0]  # the two hash seeds differ
    assert (mine[1], here.err) == (theirs[1], there_err)
    routes = [json.loads(line) for line in mine[1].splitlines() if line.startswith("{")]
    assert len(routes) >= 20
    assert {r["router"] for r in routes} == {"dijkstra", "bfs", "resilient", "semantic"}
