"""The fault kinds of a scenario's ``faults:`` list: the one registry of them.

An entry is ``{kind: NAME, ...}``; :data:`FAULT_KINDS` maps NAME to the
:class:`FaultSpec` subclass that validates the rest of the entry (its fields are the
kind's schema: ``python -m sim schema`` writes one ``anyOf`` branch per kind) and that
names the engine's class of the fault (:attr:`FaultSpec.engine`, ``module:Class``, a
subclass of :class:`sim.engine.faults.KindFault`, imported when a run builds it). The
scenario's outages (``failures:``) are the other faults (docs/scenario.md).

A kind registered at run time (:func:`register_fault_kind`, e.g. by a test) is known
to the process that registered it.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, WrapValidator

from sim.scenario.model.base import Probability, Spec, SpecError
from sim.spelling import did_you_mean


class FaultSpec(Spec):
    """A ``faults:`` entry: its ``kind`` and the kind's own fields. A subclass declares
    ``kind`` as a one-value ``Literal``, :attr:`engine`, and :meth:`links_named`/
    :meth:`nodes_named` (what the loader checks exists)."""

    kind: str = Field(description="The fault kind (a key of FAULT_KINDS).")
    #: the engine's class of this kind, ``module:Class`` (a ``sim.engine.faults.KindFault``)
    engine: ClassVar[str]

    def links_named(self) -> list[tuple[tuple[str | int, ...], list[str]]]:
        """The links the entry names, each with its field path in the entry."""
        return []

    def nodes_named(self) -> list[tuple[tuple[str | int, ...], str]]:
        """The agent ids the entry names, each with its field path in the entry."""
        return []


class LinkFaultSpec(FaultSpec):
    """A fault on the messages crossing some links (either way, every protocol)."""

    links: list[Annotated[list[str], Field(min_length=2, max_length=2)]] = Field(
        min_length=1, description="The links it strikes (pairs of agent ids)."
    )

    def links_named(self) -> list[tuple[tuple[str | int, ...], list[str]]]:
        return [(("links", j), pair) for j, pair in enumerate(self.links)]


class LinkLossSpec(LinkFaultSpec):
    """``loss``: each message crossing one of the links is lost with probability ``p``
    (drawn from the ``faults`` stream), dropped with reason ``link_loss`` at the far
    end."""

    kind: Literal["loss"] = Field(description="loss: messages lost on links.")
    p: Probability = Field(description="Probability a crossing message is lost.")
    engine: ClassVar[str] = "sim.engine.faults:LinkLoss"


#: Every fault kind of ``faults:``, by name: the one list of them.
FAULT_KINDS: dict[str, type[FaultSpec]] = {"loss": LinkLossSpec}


def register_fault_kind(spec: type[FaultSpec]) -> None:
    """Add a fault kind (the name is ``spec``'s ``kind`` Literal's one value)."""
    names: tuple[object, ...] = getattr(spec.model_fields["kind"].annotation, "__args__", ())
    name = names[0] if len(names) == 1 else None
    if not isinstance(name, str):
        raise TypeError(f"{spec.__name__}.kind must be a Literal of one name")
    FAULT_KINDS[name] = spec


def fault_entry(value: Any, handler: Any) -> Any:
    """Validate a ``faults:`` entry by its kind's spec (pydantic's errors located in it)."""
    if isinstance(value, FaultSpec):
        return value
    if not isinstance(value, dict):
        return handler(value)
    known = ", ".join(sorted(FAULT_KINDS))
    kind = value.get("kind")
    if kind is None:
        raise SpecError(f"a fault names its kind (one of {known})")
    spec = FAULT_KINDS.get(kind) if isinstance(kind, str) else None
    if spec is None:
        hint = did_you_mean(str(kind), FAULT_KINDS) or f" (known: {known})"
        raise SpecError(f"unknown fault kind {kind!r}{hint}", "kind")
    allowed = [info.alias or name for name, info in spec.model_fields.items()]
    for key in value:
        if key not in allowed:  # the loader's hint would name the base's fields only
            hint = did_you_mean(str(key), allowed) or f" (allowed: {', '.join(allowed)})"
            raise SpecError(f"unknown key '{key}'{hint}", key)
    return spec.model_validate(value)


#: A ``faults:`` entry, validated by its kind (:func:`fault_entry`).
FaultEntry = Annotated[FaultSpec, WrapValidator(fault_entry)]
