"""The semantic router (SPEC §3) on random protocol graphs: scores against an
independent tokeniser and cosine, the best-scoring reachable host chosen."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.mesh import (
    DownSet,
    NoRoute,
    SemanticRouter,
)
from tests.harness.routing_oracle import (
    CAPABILITIES,
    PROPS,
    ROUTE_DRAWS,
    TOOLS,
    Mesh,
    brute_force,
    check_valid,
    exhaustively,
    meshes,
)


def my_tokens(text: str) -> list[str]:
    words: list[str] = []
    current = ""
    for i, ch in enumerate(text):
        if ch in "_-./: \t":
            if current:
                words.append(current)
            current = ""
            continue
        if current and ch.isupper():
            prev = text[i - 1]
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower()):
                words.append(current)
                current = ""
        current += ch
    if current:
        words.append(current)
    return [w.lower() for w in words]


def my_cosine(a: list[str], b: list[str]) -> float:
    ca, cb = Counter(a), Counter(b)
    dot = sum(ca[t] * cb[t] for t in ca)
    if not dot:
        return 0.0
    return dot / (
        math.sqrt(sum(v * v for v in ca.values())) * math.sqrt(sum(v * v for v in cb.values()))
    )


def test_my_tokeniser() -> None:
    assert my_tokens("trainTicket_lookup") == ["train", "ticket", "lookup"]
    assert my_tokens("HTTPServer") == ["http", "server"]
    assert my_tokens("geo:lookup/data.store-x") == ["geo", "lookup", "data", "store", "x"]


NEEDS = st.sampled_from(CAPABILITIES + TOOLS + ("ticket", "train lookup", "nothing_here"))


@PROPS
@given(data=st.data(), mesh=meshes(), need=NEEDS)
def test_semantic_scores_match_the_formula(data: st.DataObject, mesh: Mesh, need: str) -> None:
    router = SemanticRouter(mesh.graph)
    ids = mesh.ids
    source = data.draw(st.sampled_from(ids))
    sp = data.draw(st.none() | st.sampled_from(list(mesh.graph.agent(source).protocols)))
    down_nodes = set(data.draw(st.lists(st.sampled_from(ids), max_size=2))) - {source}
    mesh.down_nodes = down_nodes
    down = DownSet.of(down_nodes)
    ranked = router.rank(source, need, source_protocol=sp, down=down)
    hosts = [a.id for a in mesh.graph.agents if need in a.tools]
    pool = hosts or [x for x in ids if x != source]
    expected_ids = []
    for agent_id in pool:
        agent = mesh.graph.agent(agent_id)
        caps = [t for c in agent.capabilities for t in my_tokens(c)]
        sim = 1.0 if need in agent.tools else my_cosine(my_tokens(need), caps)
        if (
            sim > 0
            and agent_id not in down_nodes
            and brute_force(mesh, source, agent_id, sp) is not None
        ):
            expected_ids.append(agent_id)
    assert sorted(c.agent for c in ranked) == sorted(expected_ids)
    for c in ranked:
        agent = mesh.graph.agent(c.agent)
        caps = [t for cap in agent.capabilities for t in my_tokens(cap)]
        sim = 1.0 if need in agent.tools else my_cosine(my_tokens(need), caps)
        route = c.route
        arrival = route.protocols[-1] if route.protocols else sp
        gamma = agent.protocols[arrival] if arrival else max(agent.protocols.values())
        cost = brute_force(mesh, source, c.agent, sp)
        assert cost is not None
        assert route.cost == pytest.approx(cost, rel=1e-9, abs=1e-12)
        assert c.similarity == pytest.approx(sim, rel=1e-12)
        assert c.affinity == gamma
        assert c.score == pytest.approx(sim * gamma * (1.0 / (1.0 + cost)), rel=1e-9)
        check_valid(mesh, route, sp, None)
        assert not set(route.path) & down_nodes
    assert [c.score for c in ranked] == sorted((c.score for c in ranked), reverse=True)
    if ranked:
        best = router.resolve(source, need, source_protocol=sp, down=down)
        assert best.path[-1] == ranked[0].agent
        assert best.router == "semantic"
    else:
        with pytest.raises(NoRoute):
            router.resolve(source, need, source_protocol=sp, down=down)


test_semantic_scores_match_the_formula_exhaustively = exhaustively(
    test_semantic_scores_match_the_formula, **ROUTE_DRAWS, need=NEEDS
)
