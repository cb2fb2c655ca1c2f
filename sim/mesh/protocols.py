"""Protocols, their descriptor fields, and translation between them (SPEC §2).

A protocol represents a subset of a tool descriptor's fields. Translating p → p'
keeps ``fields(p) ∩ fields(p')``; its *loss* is the share of the eight semantic
fields that p has and p' lacks. A scenario may forbid a pair, mark it destructive
(the message fails to translate, ⊥, with probability ``fail``), or calibrate it
(a measured loss and delay override the derived ones).

Translation cost at node v (seconds-equivalent):
``τ(p, p', v) = delay + loss_penalty × loss(p, p')`` with delay the node's own
``translation_delay``, else the pair's calibrated delay, else the routing default.
A node may chain transformers through protocols it speaks; τ at v is the cheapest
chain (composition sums losses, capped at 1, and sums delays).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum

from sim.calculus.mcp import PROTOCOL_FIELDS
from sim.calculus.mcp.dialects import MCP, Dialect

#: What each built-in protocol represents (SPEC §2), shared with the calculus.
BUILTIN_FIELDS: Mapping[str, frozenset[str]] = PROTOCOL_FIELDS

#: The eight semantic fields of an MCP+ descriptor (loss is measured on these).
SEMANTIC_FIELDS: frozenset[str] = PROTOCOL_FIELDS["SGD"]


class TranslationKind(IntEnum):
    """Transformer classes of the Protocol Graph Model, ordered from best to worst."""

    LOSSLESS = 0
    LOSSY = 1
    DESTRUCTIVE = 2

    @property
    def label(self) -> str:
        """Lower-case name, as traces and reports print it."""
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Protocol:
    """A protocol p ∈ P: the descriptor fields its wire carries and how its invocations go."""

    name: str
    fields: frozenset[str]
    dialect: Dialect = MCP


@dataclass(frozen=True, slots=True)
class Transformer:
    """A transformer T: M_p → M_p' ∪ {⊥} for one protocol pair, or a chain of them.

    ``loss`` in [0, 1]; ``delay`` is the calibrated time in seconds (None: use the
    node's or the routing default); ``fail`` is the probability of ⊥; ``dropped`` the
    descriptor fields a message loses.
    """

    chain: tuple[str, ...]  # protocols in order, first = source, last = target
    loss: float
    delay: float | None
    kind: TranslationKind
    fail: float
    dropped: frozenset[str]

    @property
    def source(self) -> str:
        """The protocol translated from."""
        return self.chain[0]

    @property
    def target(self) -> str:
        """The protocol translated to."""
        return self.chain[-1]

    def then(self, other: Transformer) -> Transformer:
        """The composition ``other ∘ self`` (self first).

        Losses add (capped at 1), calibrated delays add (None counts as unknown and
        stays None only if both are None), ⊥ happens if either part fails, the kind is
        the worst of the two, and the dropped fields accumulate.
        """
        if self.target != other.source:
            raise ValueError(f"cannot compose {self.target} with a transformer from {other.source}")
        delay = (
            None
            if self.delay is None and other.delay is None
            else ((self.delay or 0.0) + (other.delay or 0.0))
        )
        return Transformer(
            chain=self.chain + other.chain[1:],
            loss=min(1.0, self.loss + other.loss),
            delay=delay,
            kind=max(self.kind, other.kind),
            fail=1.0 - (1.0 - self.fail) * (1.0 - other.fail),
            dropped=self.dropped | other.dropped,
        )


def derived_loss(source: frozenset[str], target: frozenset[str]) -> float:
    """Share of the eight semantic fields that ``source`` has and ``target`` lacks."""
    return len((source & SEMANTIC_FIELDS) - target) / len(SEMANTIC_FIELDS)


@dataclass(frozen=True, slots=True)
class PairRule:
    """A scenario's rule for one ordered pair (see ``translations:`` in SPEC §1)."""

    source: str
    target: str
    allowed: bool = True
    loss: float | None = None
    delay: float | None = None
    destructive: bool = False
    fail: float = 0.0


_Pair = tuple[str, str]
_Chain = tuple[float, Transformer]


class TranslationTable:
    """τ for a set of protocols: direct transformers and the cheapest chain at a node.

    Chains are searched once per distinct (spoken protocols, node delay) signature and
    cached, so routers pay a dictionary lookup per node.
    """

    def __init__(
        self,
        protocols: Sequence[Protocol],
        rules: Iterable[PairRule] = (),
        *,
        loss_penalty: float = 1.0,
        default_delay: float = 0.002,
    ) -> None:
        self.protocols: tuple[Protocol, ...] = tuple(protocols)
        self.names: tuple[str, ...] = tuple(p.name for p in self.protocols)
        self.loss_penalty = loss_penalty
        self.default_delay = default_delay
        fields = {p.name: p.fields for p in self.protocols}
        by_pair = {(r.source, r.target): r for r in rules}
        self._direct: dict[tuple[str, str], Transformer] = {}
        for p in self.names:
            for q in self.names:
                if p == q:
                    continue
                rule = by_pair.get((p, q), PairRule(p, q))
                if not rule.allowed:
                    continue
                dropped = fields[p] - fields[q]
                loss = derived_loss(fields[p], fields[q]) if rule.loss is None else rule.loss
                kind = (
                    TranslationKind.DESTRUCTIVE
                    if rule.destructive
                    else TranslationKind.LOSSY
                    if dropped or loss > 0
                    else TranslationKind.LOSSLESS
                )
                self._direct[(p, q)] = Transformer(
                    (p, q), loss, rule.delay, kind, rule.fail if rule.destructive else 0.0, dropped
                )
        self._chains: dict[tuple[frozenset[str], float | None], dict[_Pair, _Chain]] = {}

    def fields(self, protocol: str) -> frozenset[str]:
        """The descriptor fields ``protocol`` represents."""
        for p in self.protocols:
            if p.name == protocol:
                return p.fields
        raise KeyError(protocol)

    def direct(self, source: str, target: str) -> Transformer | None:
        """The one-step transformer source → target, or None when forbidden."""
        return self._direct.get((source, target))

    def step_delay(self, transformer: Transformer, node_delay: float | None) -> float:
        """Delay of one step at a node: the node's own, else calibrated, else default."""
        if node_delay is not None:
            return node_delay
        if transformer.delay is not None:
            return transformer.delay
        return self.default_delay

    def chains_at(
        self, speaks: frozenset[str], node_delay: float | None
    ) -> Mapping[tuple[str, str], tuple[float, Transformer]]:
        """Cheapest chain for every ordered pair of ``speaks``: (τ in seconds, transformer).

        A chain passes only through spoken protocols and never through a forbidden pair;
        pairs with no chain are absent. The search enumerates simple chains with a
        bound, exact because the cost of a chain never decreases as it grows.
        """
        key = (speaks, node_delay)
        cached = self._chains.get(key)
        if cached is not None:
            return cached
        spoken = [p for p in self.names if p in speaks]
        result: dict[tuple[str, str], tuple[float, Transformer]] = {}
        for source in spoken:
            for target in spoken:
                if source != target:
                    best = self._cheapest(source, target, spoken, node_delay)
                    if best is not None:
                        result[(source, target)] = best
        self._chains[key] = result
        return result

    def _cost(self, delay: float, loss: float) -> float:
        return delay + self.loss_penalty * min(1.0, loss)

    def _cheapest(
        self, source: str, target: str, spoken: list[str], node_delay: float | None
    ) -> tuple[float, Transformer] | None:
        best: tuple[float, Transformer] | None = None

        def extend(chain: Transformer, delay: float, visited: frozenset[str]) -> None:
            nonlocal best
            for nxt in spoken:
                if nxt in visited:
                    continue
                step = self._direct.get((chain.target, nxt))
                if step is None:
                    continue
                longer = chain.then(step)
                total_delay = delay + self.step_delay(step, node_delay)
                cost = self._cost(total_delay, longer.loss)
                if best is not None and cost >= best[0]:
                    continue  # cost never decreases along a chain: prune
                if nxt == target:
                    best = (cost, longer)
                else:
                    extend(longer, total_delay, visited | {nxt})

        for first in spoken:
            step = self._direct.get((source, first))
            if step is None:
                continue
            delay = self.step_delay(step, node_delay)
            cost = self._cost(delay, step.loss)
            if best is not None and cost >= best[0]:
                continue
            if first == target:
                best = (cost, step)
            else:
                extend(step, delay, frozenset((source, first)))
        return best

    def tau(
        self, source: str, target: str, speaks: frozenset[str], node_delay: float | None = None
    ) -> float | None:
        """τ(source, target, v) in seconds-equivalent for a node that speaks ``speaks``.

        0 when source == target; None when no chain of allowed translations exists.
        """
        if source == target:
            return 0.0
        hit = self.chains_at(speaks, node_delay).get((source, target))
        return None if hit is None else hit[0]
