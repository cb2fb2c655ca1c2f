"""The fuzzer's mutators of issue 38's resources part (items 3, 5, 7 and 12), listed in
:data:`benchmarks.mutation.MUTATORS`: ``huge`` times and rates, ``long_name``,
``big_mesh``. Each mutant is refused at load with its located bound (a time past 1e9 s, a
rate past 1e6 per second, a name past 100 characters, a mesh past 350,000 agents and
links), or runs."""

from __future__ import annotations

import random
from typing import Any

import yaml

#: Times past what a float clock keeps to the microsecond, and rates past a microsecond's gap.
HUGE_TIMES: tuple[float, ...] = (1e10, 1e12, 1e30, 1e300)
HUGE_RATES: tuple[float, ...] = (1e7, 1e30, 1e300)
#: Keys whose value is a time on the clock (seconds), and the rate of arrivals.
TIME_KEYS = frozenset({"duration", "timeout", "at", "for", "mtbf", "mttr", "mean", "value"})
#: Names that name a folder or are referenced elsewhere: a scenario's, a router's, an id.
NAME_KEYS = frozenset({"name", "id", "initiator"})
#: Million-agent generator blocks of large degree (each refused by the size estimate).
BIG_MESHES: tuple[tuple[str, dict[str, float]], ...] = (
    ("erdos_renyi", {"degree": 1000}),
    ("barabasi_albert", {"m": 500}),
    ("watts_strogatz", {"k": 1000}),
    ("random_regular", {"degree": 999}),
    ("grid", {"rows": 1000, "cols": 1000}),
)


def _huge(parent: Any, key: Any, rng: random.Random) -> bool:
    value = parent[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if key == "rate":
        parent[key] = rng.choice(HUGE_RATES)
    elif key in TIME_KEYS:
        parent[key] = rng.choice(HUGE_TIMES)
    else:
        return False
    return True


def _on_document(change: Any) -> Any:
    """:func:`benchmarks.mutation._on_document` (imported when a mutant is drawn: that
    module lists these mutators)."""
    from benchmarks import mutation

    return mutation._on_document(change)


def huge(text: str, rng: random.Random) -> str:
    """A time (``duration``, a timeout, an outage's ``at``/``for``, ``mtbf``, a mean) set
    past a float clock's microseconds, or an arrival rate past a microsecond's gap;
    ``duration`` when no other place was drawn."""
    mutated = _on_document(_huge)(text, rng)
    if mutated == yaml.safe_dump(yaml.safe_load(text), sort_keys=False, allow_unicode=True):
        doc = yaml.safe_load(text)
        doc["duration"] = rng.choice(HUGE_TIMES)
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    return mutated


def _long_name(parent: Any, key: Any, rng: random.Random) -> bool:
    if key not in NAME_KEYS or not isinstance(parent[key], str):
        return False
    parent[key] = (parent[key] or "x")[0].lower() * rng.choice((256, 300, 5000))
    return True


def long_name(text: str, rng: random.Random) -> str:
    """A name (the scenario's, a router's, a workflow's, a tool's) or an id made 256 to
    5,000 characters long; a router listed by name becomes a long plug-in name."""
    doc = yaml.safe_load(text)
    if rng.randrange(3) == 0 and isinstance(doc.get("routers"), list) and doc["routers"]:
        k = rng.randrange(len(doc["routers"]))
        doc["routers"][k] = {"name": "r" * 300, "plugin": "sim.mesh.routing:DijkstraRouter"}
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    return _on_document(_long_name)(text, rng)


def big_mesh(text: str, rng: random.Random) -> str:
    """A ``topology:`` block of a million agents and a large degree (replacing the
    scenario's, or added with its first protocol)."""
    doc = yaml.safe_load(text)
    generator, params = rng.choice(BIG_MESHES)
    block = doc.get("topology") if isinstance(doc.get("topology"), dict) else None
    if block is None:
        first = doc.get("protocols", ["MCP"])[0]
        name = first.get("name", "MCP") if isinstance(first, dict) else str(first)
        block = doc["topology"] = {"protocols": {name: 1.0}}
    block.update({"generator": generator, "agents": 1_000_000, "params": dict(params)})
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
