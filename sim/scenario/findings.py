"""What the cross-field rules report, and what they share.

A :class:`Finding` is a rule's verdict on one field path; :class:`KnownNames` holds the
names the file declares (including items whose own fields are invalid). The rules
themselves are in :mod:`sim.scenario.rules` and the modules it names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sim.plugins import router_names
from sim.scenario.diagnostics import FieldPath
from sim.spelling import did_you_mean

if TYPE_CHECKING:
    from sim.scenario.model import Scenario


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule's verdict on one field; ``at_key`` points at the key rather than its value."""

    path: FieldPath
    message: str
    warning: bool = False
    at_key: bool = False
    first: FieldPath | None = None  # an earlier field this one repeats
    inner: tuple[str, int] | None = None  # (string value, offset of the problem in it)


@dataclass(frozen=True, slots=True)
class KnownNames:
    """Names declared in the file, including items whose own fields are invalid.

    A reference to such an item is not reported as unknown: its own error is enough.
    """

    agents: set[str] = field(default_factory=set)
    tools: set[str] = field(default_factory=set)
    protocols: set[str] = field(default_factory=set)
    speaks: dict[str, set[str]] = field(default_factory=dict)  # agent id → protocol names
    #: Sections given as lists. References into a section that is missing or not a
    #: list are not checked: that section's own error is enough.
    sections: frozenset[str] = frozenset({"agents", "tools", "protocols"})
    #: Tool names listed in some agent's ``tools:`` (None: take them from the scenario).
    hosted: set[str] | None = None
    #: Task ids in the file, by workflow name (tasks whose own fields are invalid too).
    tasks: dict[str, set[str]] = field(default_factory=dict)
    #: The router names known without a plug-in entry (from the registry, above).
    routers: tuple[str, ...] = field(default_factory=router_names)

    def lacks(self, section: str, name: str) -> bool:
        """True when ``name`` is certainly not declared in ``section``."""
        names = {"agents": self.agents, "tools": self.tools, "protocols": self.protocols}
        return section in self.sections and name not in names[section]


#: A cross-field rule: the findings it makes on a scenario, given the declared names.
Rule = Callable[["Scenario", KnownNames], Iterable[Finding]]


def unknown(kind: str, name: str, known: set[str]) -> str:
    """``unknown tool 'x'`` with a did-you-mean, or the short list of what is declared."""
    hint = did_you_mean(name, known)
    if not hint and known and len(known) <= 8:
        hint = f" (declared: {', '.join(sorted(known))})"
    elif not known:
        hint = " (none declared)"
    return f"unknown {kind} '{name}'{hint}"


def hosted(scn: Scenario, known: KnownNames) -> set[str]:
    """Tools some agent lists (including agents whose other fields are invalid)."""
    if known.hosted is not None:
        return known.hosted
    return {tool for agent in scn.agents for tool in agent.tools}


def not_spoken(role: str, agent: str, proto: str, spoken: set[str]) -> str:
    """``initiator 'a' does not speak P (it speaks ...)``."""
    return (
        f"{role} '{agent}' does not speak {proto} "
        f"(it speaks {', '.join(sorted(spoken)) or 'nothing'})"
    )


def duplicates(section: str, key: str, names: Sequence[str]) -> Iterator[Finding]:
    """A finding on each repeat of a name in ``section``, pointing at the first."""
    seen: Counter[str] = Counter()
    for i, name in enumerate(names):
        seen[name] += 1
        if seen[name] == 2:
            first = names.index(name)
            yield Finding(
                (section, i, key), f"duplicate {key} '{name}'", first=(section, first, key)
            )


def find_cycle(edges: dict[str, list[str]]) -> list[str] | None:
    """A cycle of the directed graph ``node → successors`` as [a, b, ..., a], or None.

    Deterministic: nodes are explored in the order the mapping lists them.
    """
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(edges, white)
    for root in edges:
        if colour[root] != white:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(edges[root]))]
        path = [root]
        colour[root] = grey
        while stack:
            node, successors = stack[-1]
            nxt = next(successors, None)
            if nxt is None:
                stack.pop()
                path.pop()
                colour[node] = black
                continue
            if nxt not in colour:
                continue
            if colour[nxt] == grey:
                return [*path[path.index(nxt) :], nxt]
            if colour[nxt] == white:
                colour[nxt] = grey
                path.append(nxt)
                stack.append((nxt, iter(edges[nxt])))
    return None
