"""LTLf with past operators and time bounds, evaluated over a finite trace (SPEC §9).

A formula is compiled into a :class:`Program`: its subformulas in post-order, each a
``(code, a, b, bound)`` tuple (``a``/``b`` index earlier entries; for an atom ``a`` is its
bit in the event's atom mask). Positions are events 0..n-1 of a scope with times ``t``:

- ``X φ`` (strong next): i+1 < n and φ at i+1.  ``Y φ`` (strong previous): i > 0 and φ at i-1.
- ``F[<=b] φ``: φ at some j ≥ i with t_j − t_i ≤ b.  ``G[<=b] φ``: φ at every such j.
- ``O[<=b] φ``: φ at some j ≤ i with t_i − t_j ≤ b.  ``H[<=b] φ``: φ at every such j.
- ``φ U[<=b] ψ``: ψ at some j ≥ i with t_j − t_i ≤ b and φ at i..j-1.
- ``φ S[<=b] ψ``: ψ at some j ≤ i with t_i − t_j ≤ b and φ at j+1..i.

Without a bound the time condition is dropped. A formula holds on a trace iff it holds at
position 0. :func:`evaluate` computes every subformula at every position (past operators
forward, future ones backward: O(|φ|·n)); :class:`PastState` steps a past-only formula
one event at a time in O(|φ|) memory, for the streaming monitor, with straight-line code
generated once per formula (:func:`stepper`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sim.properties.ast import Atom, Binary, Const, Formula, Not, Unary

ATOM, TRUE, FALSE, NOT, AND, OR, IMP, IFF = range(8)
PREV, ONCE, HIST, SINCE, NEXT, EVENTUALLY, ALWAYS, UNTIL = range(8, 16)
_UNARY = {"Y": PREV, "O": ONCE, "H": HIST, "X": NEXT, "F": EVENTUALLY, "G": ALWAYS}
_BINARY = {"&": AND, "|": OR, "->": IMP, "<->": IFF, "S": SINCE, "U": UNTIL}
FUTURE_CODES: frozenset[int] = frozenset((NEXT, EVENTUALLY, ALWAYS, UNTIL))

#: One compiled subformula: (code, a, b, bound).
Step = tuple[int, int, int, float | None]


@dataclass(frozen=True, slots=True)
class Program:
    """A compiled formula: its subformulas in post-order (the last is the formula) and its
    atoms (``atoms[k]`` is bit ``k`` of an event's mask)."""

    steps: tuple[Step, ...]
    atoms: tuple[Atom, ...]
    past: bool  #: no future operator: PastState can step it

    @property
    def root(self) -> int:
        return len(self.steps) - 1


def compile_formula(formula: Formula, atoms: list[Atom] | None = None) -> Program:
    """Compile ``formula``; atoms are numbered in ``atoms`` (shared between formulas when
    given: a new atom is appended, an equal one reused)."""
    table: list[Atom] = [] if atoms is None else atoms
    steps: list[Step] = []
    memo: dict[Formula, int] = {}

    def emit(node: Formula) -> int:
        key = _strip(node)
        hit = memo.get(key)
        if hit is not None:
            return hit
        if isinstance(node, Atom):
            atom = Atom(node.label, node.conditions)
            if atom not in table:
                table.append(atom)
            step: Step = (ATOM, table.index(atom), 0, None)
        elif isinstance(node, Const):
            step = (TRUE if node.value else FALSE, 0, 0, None)
        elif isinstance(node, Not):
            step = (NOT, emit(node.sub), 0, None)
        elif isinstance(node, Unary):
            step = (_UNARY[node.op], emit(node.sub), 0, node.bound)
        else:
            left = emit(node.left)
            step = (_BINARY[node.op], left, emit(node.right), node.bound)
        steps.append(step)
        memo[key] = len(steps) - 1
        return len(steps) - 1

    emit(formula)
    past = all(s[0] not in FUTURE_CODES for s in steps)
    return Program(tuple(steps), tuple(table), past)


def _strip(node: Formula) -> Any:
    """``node`` without source positions (equal subformulas share one step)."""
    if isinstance(node, Atom):
        return ("atom", node.label, tuple((c.key, c.value) for c in node.conditions))
    if isinstance(node, Const):
        return node.value
    if isinstance(node, Not):
        return ("!", _strip(node.sub))
    if isinstance(node, Unary):
        return (node.op, node.bound, _strip(node.sub))
    assert isinstance(node, Binary)
    return (node.op, node.bound, _strip(node.left), _strip(node.right))


class PastState:
    """A past-only program stepped one event at a time in O(|φ|) memory: what each
    temporal operator remembers of the earlier events (Y: the operand's previous value;
    O, S unbounded: the previous value; H: all so far; bounded O and S: the time the
    operand last held, None if never; bounded H: the last failure). Used for programs
    with time bounds; ``advance`` returns the state and the formula's value."""

    __slots__ = ("step_fn", "steps")

    def __init__(self, program: Program) -> None:
        self.step_fn = stepper(program)
        self.steps = program.steps

    def initial(self) -> Any:
        """A fresh scope's memory."""
        return [
            (s[0] == HIST) if s[3] is None and s[0] in (PREV, ONCE, HIST, SINCE) else None
            for s in self.steps
        ]

    def advance(self, memory: Any, mask: int, t: float) -> tuple[Any, bool]:
        """Step over one event (atom ``mask``, time ``t``): (memory, value there)."""
        return memory, self.step_fn(mask, t, memory)


class PastAutomaton(PastState):
    """A past-only program without time bounds as a deterministic automaton built lazily:
    a scope's state is one int, each (state, mask) transition is computed once and then
    looked up (at most :data:`AUTOMATON_CAP` transitions are kept; beyond, it steps)."""

    __slots__ = ("delta", "index", "states")

    def __init__(self, program: Program) -> None:
        super().__init__(program)
        first = tuple(super().initial())
        self.states: list[tuple[Any, ...]] = [first]
        self.index: dict[tuple[Any, ...], int] = {first: 0}
        self.delta: dict[tuple[int, int], tuple[int, bool]] = {}

    def initial(self) -> Any:
        return 0

    def advance(self, memory: Any, mask: int, t: float) -> tuple[Any, bool]:
        hit = self.delta.get((memory, mask))
        if hit is not None:
            return hit
        mem = list(self.states[memory])
        value = self.step_fn(mask, t, mem)
        key = tuple(mem)
        state = self.index.get(key)
        if state is None:
            state = self.index[key] = len(self.states)
            self.states.append(key)
        if len(self.delta) < AUTOMATON_CAP:
            self.delta[(memory, mask)] = (state, value)
        return state, value


#: Transitions a :class:`PastAutomaton` keeps.
AUTOMATON_CAP = 1 << 16


def past_runner(program: Program) -> PastState:
    """The stepping of a past-only program: an automaton when it has no time bound."""
    if any(s[3] is not None for s in program.steps):
        return PastState(program)
    return PastAutomaton(program)


_STEPPERS: dict[tuple[Step, ...], Callable[[int, float, list[Any]], bool]] = {}


def stepper(program: Program) -> Callable[[int, float, list[Any]], bool]:
    """``step(mask, t, memory) -> value`` for a past-only program: straight-line Python
    generated once per program (one local per subformula), the monitor's hot path."""
    hit = _STEPPERS.get(program.steps)
    if hit is not None:
        return hit
    body: list[str] = []
    for k, (code, a, b, bound) in enumerate(program.steps):
        v, x, y, m = f"v{k}", f"v{a}", f"v{b}", f"m[{k}]"
        if code == ATOM:
            body.append(f"{v} = (mask >> {a}) & 1 == 1")
        elif code in (TRUE, FALSE):
            body.append(f"{v} = {code == TRUE}")
        elif code == NOT:
            body.append(f"{v} = not {x}")
        elif code == AND:
            body.append(f"{v} = {x} and {y}")
        elif code == OR:
            body.append(f"{v} = {x} or {y}")
        elif code == IMP:
            body.append(f"{v} = (not {x}) or {y}")
        elif code == IFF:
            body.append(f"{v} = {x} == {y}")
        elif code == PREV:
            body += [f"{v} = {m}", f"{m} = {x}"]
        elif code in (ONCE, HIST, SINCE) and bound is None:
            how = {ONCE: f"{m} or {x}", HIST: f"{m} and {x}", SINCE: f"{y} or ({x} and {m})"}
            body.append(f"{v} = {m} = {how[code]}")
        elif code == ONCE:
            body += [f"if {x}: {m} = t", f"{v} = {m} is not None and t - {m} <= {bound!r}"]
        elif code == HIST:
            body += [f"if not {x}: {m} = t", f"{v} = {m} is None or t - {m} > {bound!r}"]
        elif code == SINCE:
            body += [
                f"if {y}: {m} = t",
                f"elif not {x}: {m} = None",
                f"{v} = {m} is not None and t - {m} <= {bound!r}",
            ]
        else:
            raise ValueError("a stepper runs past-only programs")
    source = "def step(mask, t, m):\n" + "".join(f"    {line}\n" for line in body)
    source += f"    return v{len(program.steps) - 1}\n"
    scope: dict[str, Any] = {}
    exec(compile(source, "<formula>", "exec"), scope)  # source generated from the AST above
    fn: Callable[[int, float, list[Any]], bool] = scope["step"]
    _STEPPERS[program.steps] = fn
    return fn


def evaluate(program: Program, masks: Sequence[int], times: Sequence[float]) -> list[list[bool]]:
    """Every subformula's value at every position of a trace (``masks[i]`` the atom mask
    of event i, ``times[i]`` its time); ``result[program.root][0]`` is the verdict."""
    n = len(masks)
    cols: list[list[bool]] = []
    for code, a, b, bound in program.steps:
        if code == ATOM:
            col = [(m >> a) & 1 == 1 for m in masks]
        elif code in (TRUE, FALSE):
            col = [code == TRUE] * n
        elif code == NOT:
            col = [not v for v in cols[a]]
        elif code in (AND, OR, IMP, IFF):
            x, y = cols[a], cols[b]
            if code == AND:
                col = [p and q for p, q in zip(x, y, strict=True)]
            elif code == OR:
                col = [p or q for p, q in zip(x, y, strict=True)]
            elif code == IMP:
                col = [(not p) or q for p, q in zip(x, y, strict=True)]
            else:
                col = [p == q for p, q in zip(x, y, strict=True)]
        elif code in FUTURE_CODES:
            col = _backward(code, cols[a], cols[b] if code == UNTIL else cols[a], bound, times)
        else:
            col = _forward(code, cols[a], cols[b] if code == SINCE else cols[a], bound, times)
        cols.append(col)
    return cols


def _forward(
    code: int, x: list[bool], y: list[bool], bound: float | None, times: Sequence[float]
) -> list[bool]:
    n = len(x)
    out = [False] * n
    if code == PREV:
        for i in range(1, n):
            out[i] = x[i - 1]
        return out
    last: float | None = None
    acc = code == HIST
    for i in range(n):
        t = times[i]
        if code == ONCE:
            if bound is None:
                acc = acc or x[i]
            else:
                last = t if x[i] else last
                acc = last is not None and t - last <= bound
        elif code == HIST:
            if bound is None:
                acc = acc and x[i]
            else:
                last = t if not x[i] else last
                acc = last is None or t - last > bound
        else:  # S: x S y
            if bound is None:
                acc = y[i] or (x[i] and acc)
            else:
                last = t if y[i] else (last if x[i] else None)
                acc = last is not None and t - last <= bound
        out[i] = acc
    return out


def _backward(
    code: int, x: list[bool], y: list[bool], bound: float | None, times: Sequence[float]
) -> list[bool]:
    n = len(x)
    out = [False] * n
    if code == NEXT:
        for i in range(n - 1):
            out[i] = x[i + 1]
        return out
    nxt: float | None = None
    acc = code == ALWAYS
    for i in range(n - 1, -1, -1):
        t = times[i]
        if code == EVENTUALLY:
            if bound is None:
                acc = acc or x[i]
            else:
                nxt = t if x[i] else nxt
                acc = nxt is not None and nxt - t <= bound
        elif code == ALWAYS:
            if bound is None:
                acc = acc and x[i]
            else:
                nxt = t if not x[i] else nxt
                acc = nxt is None or nxt - t > bound
        else:  # U: x U y
            if bound is None:
                acc = y[i] or (x[i] and acc)
            else:
                nxt = t if y[i] else (nxt if x[i] else None)
                acc = nxt is not None and nxt - t <= bound
        out[i] = acc
    return out
