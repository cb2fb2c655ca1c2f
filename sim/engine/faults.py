"""Faults as components: every node, link and message fault is a :class:`Fault`.

One interface, three questions: which elements a fault acts on (:meth:`Fault.covers`:
nodes and links, marked ``fallible`` before any path is compiled, so the transport
stops at them), when it strikes in time (:meth:`Fault.start`: it schedules outages on
the :class:`~sim.engine.failures.Failures` of the run, which takes nodes and links
down and up, and what a node's outage does to its agent: the server loses its work,
the initiator its instances), and what it does to a message that leaves over one of
its links (:meth:`Fault.strike`: None, or the reason of the ``drop`` the message ends
in at the link's far end, after crossing it).

The built-in faults are the scenario's outages (``failures:``: :class:`Outage`,
:class:`RandomOutages`) and the kinds of :data:`~sim.scenario.model.faults.FAULT_KINDS`
(``faults:``); a new fault kind is one :class:`Fault` subclass and one
:class:`~sim.scenario.model.faults.FaultSpec` registered there (docs/architecture.md,
"How to add a fault"). This module is not compiled (tests subclass :class:`Fault`); the
compiled transport calls :meth:`Fault.strike` only for links a message fault covers.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from sim.scenario.model import FailureSpec, FaultSpec, Scenario

if TYPE_CHECKING:
    from sim.engine.failures import Failures
    from sim.engine.topology import LinkState, Node, Topology
    from sim.engine.transport import Message

#: An element a fault acts on: ``("node", Node)`` or ``("link", LinkState)``.
Element = tuple[str, Any]


class Fault:
    """A fault of one run: the elements it covers, when it strikes, what it does to a
    message. The defaults do nothing: an outage overrides :meth:`start`, a message
    fault :meth:`strike` (and sets :attr:`strikes_messages`)."""

    #: True when :meth:`strike` acts on the messages leaving over the links it covers
    strikes_messages: ClassVar[bool] = False

    def covers(self, topology: Topology) -> list[Element]:
        """The nodes and links this fault acts on, in the scenario's order."""
        return []

    def start(self, failures: Failures) -> None:
        """Schedule this fault's strikes in time (at the start of the run)."""

    def strike(self, msg: Message) -> str | None:
        """A message leaves over a link this fault covers: None (it crosses), or the
        ``drop`` reason it ends in at the link's far end."""
        return None


class Outage(Fault):
    """A scheduled outage of one node or link: down at ``at``, up ``length`` seconds
    later (``{node|link, at, for}``)."""

    def __init__(self, spec: FailureSpec) -> None:
        self.node = spec.node
        self.link = spec.link
        self.at = float(spec.at or 0.0)
        self.length = float(spec.for_ or 0.0)
        self._element: Element | None = None

    def covers(self, topology: Topology) -> list[Element]:
        if self.node is not None:
            element: Element = ("node", topology.nodes[self.node])
        else:
            a, b = self.link or ("", "")
            element = ("link", topology.link(a, b))
        self._element = element
        return [element]

    def start(self, failures: Failures) -> None:
        element = self._element
        assert element is not None, "covers() binds the outage to the topology first"
        length, later = self.length, failures.later

        def begin(_: Any) -> None:
            failures.down(element)
            later(length, None, lambda _e: failures.up(element))

        later(self.at, None, begin)


class RandomOutages(Fault):
    """Random outages of each listed node and link: up for Exp(mean ``mtbf``), then
    down for Exp(mean ``mttr``), alternately, from t = 0 until the run ends, drawn from
    the run's ``failures`` stream (``{random: {nodes, links, mtbf, mttr}}``)."""

    def __init__(self, spec: FailureSpec) -> None:
        assert spec.random is not None
        self.spec = spec.random
        self._elements: list[Element] = []

    def covers(self, topology: Topology) -> list[Element]:
        r = self.spec
        elements: list[Element] = [("node", topology.nodes[n]) for n in r.nodes]
        elements += [("link", topology.link(a, b)) for a, b in r.links]
        self._elements = elements
        return elements

    def start(self, failures: Failures) -> None:
        for element in self._elements:
            _alternate(failures, element, self.spec.mtbf, self.spec.mttr)


def _alternate(failures: Failures, element: Element, mtbf: float, mttr: float) -> None:
    """``element`` up for Exp(mean ``mtbf``) s, down for Exp(mean ``mttr``) s, in turn."""
    rng, later = failures.rng, failures.later

    def fail(_: Any) -> None:
        if not failures.active:
            return
        failures.down(element)
        later(rng.expovariate(1.0 / mttr), None, repair)

    def repair(_: Any) -> None:
        failures.up(element)
        if failures.active:
            later(rng.expovariate(1.0 / mtbf), None, fail)

    later(rng.expovariate(1.0 / mtbf), None, fail)


class KindFault(Fault):
    """The fault of a ``faults:`` entry: built from its spec (a
    :class:`~sim.scenario.model.faults.FaultSpec`) and the run's ``faults`` stream, the
    one its draws come from."""

    def __init__(self, spec: Any, rng: random.Random) -> None:
        self.spec = spec
        self.rng = rng


class LinkFault(KindFault):
    """A message fault on the links ``spec.links`` (either way): the base of
    :class:`LinkLoss` and of a test's corrupting link; a subclass gives :meth:`strike`."""

    strikes_messages = True

    def covers(self, topology: Topology) -> list[Element]:
        return [("link", topology.link(a, b)) for a, b in self.spec.links]


class LinkLoss(LinkFault):
    """``{kind: loss, links, p}``: each message crossing one of ``links`` is lost with
    probability ``p`` (a ``drop`` with reason ``link_loss`` at the far end)."""

    def strike(self, msg: Message) -> str | None:
        return "link_loss" if self.rng.random() < self.spec.p else None


def faults_of(scenario: Scenario, rng: random.Random) -> list[Fault]:
    """The faults of ``scenario``: its outages (``failures:``), then its ``faults:``
    entries, each built by its kind's engine class with ``rng`` (the ``faults``
    stream), in the file's order."""
    out: list[Fault] = [
        RandomOutages(f) if f.random is not None else Outage(f) for f in scenario.failures
    ]
    out.extend(fault_of(spec, rng) for spec in scenario.faults)
    return out


def fault_of(spec: FaultSpec, rng: random.Random) -> Fault:
    """The engine's fault of a ``faults:`` entry: its kind's class (``spec.engine``,
    ``module:Class``) built from the spec and the ``faults`` stream."""
    module, _, name = spec.engine.partition(":")
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, KindFault)):
        raise TypeError(f"fault kind '{spec.kind}': {spec.engine} is not a KindFault")
    fault: KindFault = cls(spec, rng)
    return fault


def attach(faults: Sequence[Fault], topology: Topology) -> None:
    """Bind ``faults`` to ``topology`` before any path is compiled: every element one
    covers is marked ``fallible``; a message fault is added to its links' ``faults``
    and marks their two ends too, so a stretch never runs past a link that strikes (the
    message is dropped where it arrives, at the link's far end)."""
    for fault in faults:
        for kind, obj in fault.covers(topology):
            obj.fallible = True
            if kind == "link" and fault.strikes_messages:
                link: LinkState = obj
                link.faults = (*(link.faults or ()), fault)
                for end in (link.a, link.b):
                    node: Node = topology.nodes[end]
                    node.fallible = True
