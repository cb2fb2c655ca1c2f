"""The probabilities of the untimed model's choices (issue 35): which transitions of one
task form one probabilistic choice, and with what weight each.

Two choices are weighed by the scenario: the approver's answer (``approve`` with the
approval policy's grant probability, ``deny`` with the rest) and an execution's outcome
(each error of the tool with its probability per execution, ``result`` with what is
left). Every other choice (which task moves, the route and view a discovery finds, a
re-sent attempt's placement, a timeout before or after execution) is the untimed
model's nondeterminism: the scheduler's in the MDP. Weights are exact fractions of the
scenario's decimals; each weighed choice's weights sum to 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from sim.verify.model import Model
from sim.verify.states import ASK, EXEC, RUNNING, Event


def exact(value: Any) -> Fraction:
    """A scenario's probability (a float or a decimal) as the exact decimal it was written."""
    return Fraction(str(value))


def weight(model: Model, ts: Any, events: Sequence[Event]) -> tuple[str, Fraction] | None:
    """The choice a transition of a task in state ``ts`` belongs to (``"approval"`` or
    ``"outcome"``) and its weight there; None for a nondeterministic transition."""
    if not (isinstance(ts, tuple) and ts[0] == RUNNING) or not events:
        return None
    first = events[0]
    tool = model.option_list[ts[1]].tool
    if ts[4] == ASK:
        grant = exact(model.scenario.approval.grant_probability)
        if first[0] == "approve":
            return "approval", grant
        if first[0] == "deny":
            return "approval", 1 - grant
        return None
    if ts[4] != EXEC:
        return None
    if first[0] == "result":
        return "outcome", 1 - sum(
            (exact(model.errors[tool][e]) for e in model.raised[tool]), Fraction(0)
        )
    detail = dict(first[5])
    if first[0] == "error" and "cause" not in detail:
        return "outcome", exact(model.errors[tool][detail["error"]])
    return None


def choices(
    model: Model, ts: Any, weighed: Sequence[tuple[Sequence[Event], Any]]
) -> list[list[tuple[Fraction, Any]]]:
    """``weighed``'s (events, target) pairs of one task in state ``ts`` as choices: the
    weighed ones of one kind together, every other one alone with weight 1."""
    groups: dict[str, list[tuple[Fraction, Any]]] = {}
    out: list[list[tuple[Fraction, Any]]] = []
    for events, target in weighed:
        w = weight(model, ts, events)
        if w is None:
            out.append([(Fraction(1), target)])
        else:
            groups.setdefault(w[0], []).append((w[1], target))
    for kind, group in groups.items():
        total = sum((w for w, _ in group), Fraction(0))
        assert total == 1, f"the {kind} choice's weights sum to {total}, not 1"
        out.append(group)
    return out
