"""The abstract syntax of SPEC §9 formulas: atoms, constants, operators with bounds.

Nodes are frozen, hashable dataclasses; ``pos`` is the 0-based character offset of the
node's first token in the formula text (for located errors). Bounds are in simulated
seconds (``None``: unbounded).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

#: A value in an atom's ``key=value``: a name, a number, a boolean, or a set of them.
Scalar = str | int | float | bool
Value = Scalar | frozenset[Scalar]

#: Unary temporal operators: X (strong next), F, G, Y (strong previous), O, H.
FUTURE_UNARY: frozenset[str] = frozenset(("X", "F", "G"))
PAST_UNARY: frozenset[str] = frozenset(("Y", "O", "H"))
#: Binary temporal operators: U (until, future), S (since, past).
TEMPORAL_BINARY: frozenset[str] = frozenset(("U", "S"))
#: Boolean binary operators, weakest last.
BOOLEAN_BINARY: tuple[str, ...] = ("&", "|", "->", "<->")
#: Operators that take an optional ``[<=b]`` bound.
BOUNDABLE: frozenset[str] = frozenset(("F", "G", "O", "H", "U", "S"))

#: The keys an atom may constrain (besides ``detail.<name>``).
ATOM_KEYS: tuple[str, ...] = (
    "tool",
    "agent",
    "proto",
    "wf",
    "task",
    "side_effects",
    "requires_approval",
)
#: The values of ``side_effects`` (SPEC §1).
SIDE_EFFECTS: tuple[str, ...] = ("none", "read", "write", "delete")


@dataclass(frozen=True, slots=True)
class Condition:
    """``key=value`` in an atom; a set value matches any of its members."""

    key: str  #: one of ATOM_KEYS or ``detail.<name>``
    value: Value
    pos: int = 0


@dataclass(frozen=True, slots=True)
class Atom:
    """An event with ``label`` whose fields satisfy every condition."""

    label: str
    conditions: tuple[Condition, ...] = ()
    pos: int = 0

    def __str__(self) -> str:
        if not self.conditions:
            return self.label
        return f"{self.label}({', '.join(_cond_text(c) for c in self.conditions)})"


@dataclass(frozen=True, slots=True)
class Const:
    """``true`` or ``false``."""

    value: bool
    pos: int = 0

    def __str__(self) -> str:
        return "true" if self.value else "false"


@dataclass(frozen=True, slots=True)
class Not:
    """``!sub``."""

    sub: Formula
    pos: int = 0

    def __str__(self) -> str:
        return f"!{_wrap(self.sub)}"


@dataclass(frozen=True, slots=True)
class Unary:
    """A unary temporal operator (X F G Y O H) with an optional bound in seconds."""

    op: str
    sub: Formula
    bound: float | None = None
    pos: int = 0

    def __str__(self) -> str:
        return f"{self.op}{_bound_text(self.bound)} {_wrap(self.sub)}"


@dataclass(frozen=True, slots=True)
class Binary:
    """A binary operator: ``&``, ``|``, ``->``, ``<->``, or U / S with an optional bound."""

    op: str
    left: Formula
    right: Formula
    bound: float | None = None
    pos: int = 0

    def __str__(self) -> str:
        return f"{_wrap(self.left)} {self.op}{_bound_text(self.bound)} {_wrap(self.right)}"


Formula = Atom | Const | Not | Unary | Binary


def children(node: Formula) -> tuple[Formula, ...]:
    """The direct subformulas of ``node``."""
    if isinstance(node, Not | Unary):
        return (node.sub,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    return ()


def atoms(node: Formula) -> Iterator[Atom]:
    """Every atom of ``node``, in no particular order (repeats included)."""
    todo = [node]
    while todo:
        sub = todo.pop()
        if isinstance(sub, Atom):
            yield sub
        todo.extend(children(sub))


def is_past(node: Formula) -> bool:
    """True when ``node`` uses no future operator (X, F, G, U): its value at a position
    depends only on the events up to that position."""
    if isinstance(node, Unary) and node.op in FUTURE_UNARY:
        return False
    if isinstance(node, Binary) and node.op == "U":
        return False
    return all(is_past(c) for c in children(node))


def has_bound(node: Formula) -> bool:
    """True when some operator of ``node`` carries a time bound."""
    if isinstance(node, Unary | Binary) and node.bound is not None:
        return True
    return any(has_bound(c) for c in children(node))


def _wrap(node: Formula) -> str:
    text = str(node)
    return text if isinstance(node, Atom | Const) else f"({text})"


def _bound_text(bound: float | None) -> str:
    if bound is None:
        return ""
    return f"[<={int(bound) if float(bound).is_integer() else bound}]"


def _value_text(value: Value) -> str:
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(_value_text(v) for v in value)) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _cond_text(cond: Condition) -> str:
    return f"{cond.key}={_value_text(cond.value)}"
