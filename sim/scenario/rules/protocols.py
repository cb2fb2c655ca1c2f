"""The rules on ``protocols:`` and ``translations:``: each protocol built in or declaring
its descriptor fields, each translation joining two declared, different protocols once."""

from __future__ import annotations

from collections.abc import Iterator

from sim.plugins import dialect_names
from sim.scenario.findings import Finding, KnownNames, duplicates, unknown
from sim.scenario.model import BUILTIN_PROTOCOLS, Scenario
from sim.scenario.model.dialects import dialect_problem
from sim.spelling import did_you_mean


def protocol_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    yield from duplicates("protocols", "name", [p.name for p in scn.protocols])
    for i, proto in enumerate(scn.protocols):
        problem = None if proto.dialect is None else dialect_problem(proto.dialect)
        if problem is not None:
            assert proto.dialect is not None
            yield Finding(
                ("protocols", i, "dialect"),
                problem + did_you_mean(proto.dialect, dialect_names()),
            )
        elif proto.carries() is None:
            yield Finding(
                ("protocols", i, "name"),
                f"protocol '{proto.name}' is not built in ({', '.join(BUILTIN_PROTOCOLS)}); "
                "declare the descriptor fields it represents with `fields:` (or a "
                "`dialect:` whose wire carries them)" + did_you_mean(proto.name, BUILTIN_PROTOCOLS),
            )
    for i, rule in enumerate(scn.translations):
        for key, name in (("from", rule.from_), ("to", rule.to)):
            if known.lacks("protocols", name):
                yield Finding(("translations", i, key), unknown("protocol", name, known.protocols))
        if rule.from_ == rule.to:
            yield Finding(
                ("translations", i, "to"),
                f"a translation joins two different protocols (got {rule.to} → {rule.to})",
            )
        if rule.fail > 0 and not rule.destructive:
            yield Finding(
                ("translations", i, "fail"),
                "`fail` needs `destructive: true` (only a destructive translation can fail)",
            )
    pairs = [(t.from_, t.to) for t in scn.translations]
    yield from duplicates("translations", "to", [f"{a} -> {b}" for a, b in pairs])
