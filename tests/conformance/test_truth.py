"""The ground truth's per-dialect facts (``sim.conformance.truth.DialectFacts``): each
dialect's facts built at its first reading, the same as building them all at once, and
pickled (to a worker) as the plain dict of all of them."""

from __future__ import annotations

import pickle

from sim.calculus.mcp.dialects import BUILTIN, MCP, Dialect
from sim.conformance.truth import DialectFacts, ToolFacts, from_scenario
from sim.scenario import load_scenario
from tests.harness.small_mesh import SMALL_FILE


def test_a_dialect_s_facts_are_built_once_and_only_when_read() -> None:
    built: list[str] = []

    def facts_in(d: Dialect) -> ToolFacts:
        built.append(d.name)
        return ToolFacts(name=d.name, write=False)

    lazy = DialectFacts((*BUILTIN.values(), MCP), facts_in)  # MCP twice: one key
    assert list(lazy) == list(BUILTIN.values()) and len(lazy) == len(BUILTIN)
    assert built == []
    assert lazy[BUILTIN["sgd"]].name == "sgd" and lazy[BUILTIN["sgd"]] is lazy[BUILTIN["sgd"]]
    assert built == ["sgd"]
    assert dict(pickle.loads(pickle.dumps(lazy))) == dict(lazy.items())
    assert sorted(built) == sorted(d.name for d in BUILTIN.values())


def test_the_lazy_facts_equal_the_facts_built_at_once() -> None:
    truth = from_scenario(load_scenario(SMALL_FILE))
    for facts in truth.tools.values():
        assert isinstance(facts.dialects, DialectFacts)
        eager = pickle.loads(pickle.dumps(facts))
        assert type(eager.dialects) is dict and eager == facts
        assert facts.dialects[MCP].ltss == facts.ltss
