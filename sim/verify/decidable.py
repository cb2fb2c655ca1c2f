"""Which formulas the untimed model decides exactly: insertion invariance.

The model's events are the trace's protocol-level events of a scope *minus* some that
a real trace has between them: translations of requests and replies, ``reroute``,
transport events at level ``full``, and events of late replies after the scope's last
modelled one. None of them is at a scope's first
position (``wf_start``, ``call``/``invoke``). So a verdict on a model path carries over to
the simulator's trace only if inserting such events anywhere after the first cannot
change it. Atoms on the labels of inserted events are not decidable at all
(:data:`UNMODELED`); every other atom is false at an inserted event.

:func:`insertion_invariant` is a sufficient syntactic test. Per subformula it tracks
whether its value at every original position is unchanged by insertions and what it is
at an inserted position: a constant, the value at the previous original position
(``PREV``: past operators whose argument does not change there), or at the next original
one (``NEXT_T``/``NEXT_F``: future operators; ``T``/``F`` after the last). An inserted
``PREV`` value repeats one that ``F``, ``G``, ``O``, ``H`` already range over. ``X`` is
never invariant (the next event may be an inserted one), ``Y ψ`` only where ψ is ``PREV``.
"""

from __future__ import annotations

from sim.properties.ast import Atom, Binary, Const, Formula, Not, Unary

#: Labels of events a trace can have that the model leaves out (see the module).
UNMODELED = frozenset(
    [
        "send",
        "hop",
        "deliver",
        "drop",
        "translate",
        "reroute",
        "node_down",
        "node_up",
        "link_down",
        "link_up",
    ]
)

T, F, PREV, NEXT_T, NEXT_F, UNKNOWN = "T", "F", "PREV", "NEXT_T", "NEXT_F", "?"
_NOT = {T: F, F: T, PREV: PREV, NEXT_T: NEXT_F, NEXT_F: NEXT_T, UNKNOWN: UNKNOWN}
_NEXT = {NEXT_T: True, NEXT_F: False}


def _and(a: str, b: str) -> str:
    """The value at an inserted position of a conjunction."""
    if F in (a, b):
        return F
    if a == T:
        return b
    if b == T:
        return a
    if a == b:
        return a
    if a in _NEXT and b in _NEXT:  # both the next original's; at the end, both ends
        return NEXT_T if _NEXT[a] and _NEXT[b] else NEXT_F
    return UNKNOWN


def _or(a: str, b: str) -> str:
    return _NOT[_and(_NOT[a], _NOT[b])]


def _analyse(node: Formula) -> tuple[bool, str]:
    """(unchanged at original positions, value at an inserted position)."""
    if isinstance(node, Const):
        return True, T if node.value else F
    if isinstance(node, Atom):
        return node.label not in UNMODELED, F
    if isinstance(node, Not):
        same, ins = _analyse(node.sub)
        return same, _NOT[ins]
    if isinstance(node, Unary):
        same, ins = _analyse(node.sub)
        op = node.op
        # an inserted PREV value repeats one the operator already ranges over
        if op == "F":
            return same and ins in (F, PREV), NEXT_F if ins == F else UNKNOWN
        if op == "G":
            return same and ins in (T, PREV), NEXT_T if ins == T else UNKNOWN
        if op == "O":
            return same and ins in (F, PREV), PREV
        if op == "H":
            return same and ins in (T, PREV), PREV
        if op == "Y":
            return same and ins == PREV, UNKNOWN
        return False, UNKNOWN  # X
    assert isinstance(node, Binary)
    ls, li = _analyse(node.left)
    rs, ri = _analyse(node.right)
    op = node.op
    if op == "&":
        return ls and rs, _and(li, ri)
    if op == "|":
        return ls and rs, _or(li, ri)
    if op == "->":
        return ls and rs, _or(_NOT[li], ri)
    if op == "<->":
        both = _and(li, ri)
        neither = _and(_NOT[li], _NOT[ri])
        return ls and rs, _or(both, neither)
    if op == "U":
        exact = li == T and ri == F
        return ls and rs and li in (T, PREV) and ri in (F, PREV), NEXT_F if exact else UNKNOWN
    assert op == "S"
    return ls and rs and li == T and ri in (F, PREV), PREV


def insertion_invariant(formula: Formula) -> bool:
    """Whether ``formula``'s verdict on a scope's events is the same with events of
    :data:`UNMODELED` labels inserted anywhere after the first (see the module)."""
    return _analyse(formula)[0]
