"""Labelled transition systems (paper §3.3) and their operators.

An :class:`LTS` has states ``0..n-1``, an initial state, and transitions
``(src, label, dst)`` whose labels are interned strings of the label grammar of
``docs/calculus.md`` (``action`` or ``action(arg,...)``); the silent action τ is
the label :data:`TAU` (``"tau"``, as in the Aldebaran format). Adjacency is built
once, so :meth:`LTS.enabled` and :meth:`LTS.step` are cheap for the engine.
"""

from __future__ import annotations

import re
import sys
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

__all__ = [
    "AUT_DIALECTS",
    "LTS",
    "TAU",
    "AutDialect",
    "AutFormatError",
    "Transition",
    "accepts",
    "aut_label",
    "hide",
    "is_label_argument",
    "label",
    "parallel",
    "parse_label",
    "read_aut",
    "relabel",
    "restrict",
    "traces",
    "write_aut",
]

TAU = sys.intern("tau")
"""The silent action τ (paper §3.3); ``tau`` in ``.aut`` files."""

_LABEL_RE = re.compile(r"^([a-z][a-z_]*)(?:\(([^()\"]*)\))?$")
_ARG_FORBIDDEN = re.compile(r"[,()\"\s]")


def is_label_argument(text: str) -> bool:
    """True when ``text`` can be an argument of a label (paper §3.3 label grammar): not
    empty, and no ``,``, ``(``, ``)``, ``"`` or whitespace."""
    return bool(text) and _ARG_FORBIDDEN.search(text) is None


def label(action: str, *args: str) -> str:
    """The interned label ``action(arg1,arg2,...)`` (paper §3.3 label sets).

    Arguments must not contain ``,``, ``(``, ``)``, ``"`` or whitespace.
    """
    for arg in args:
        if not is_label_argument(arg):
            raise ValueError(f"bad label argument {arg!r} for {action}")
    if not args:
        return sys.intern(action)
    return sys.intern(f"{action}({','.join(args)})")


def parse_label(text: str) -> tuple[str, tuple[str, ...]]:
    """Split a label of the grammar into ``(action, args)`` (paper §3.3 labels); inverse of
    :func:`label`."""
    match = _LABEL_RE.match(text)
    if match is None:
        raise ValueError(f"not a label of the grammar: {text!r}")
    action, inner = match.group(1), match.group(2)
    if inner is None:
        return action, ()
    return action, tuple(inner.split(","))


@dataclass(frozen=True, slots=True)
class Transition:
    """One transition ``src --label--> dst`` of ``→ ⊆ States × Labels × States`` (paper §3.3)."""

    src: int
    label: str
    dst: int


class LTS:
    """A finite labelled transition system (paper §3.3), immutable after construction.

    ``names`` optionally names the states (for humans; ``.aut`` does not carry them).
    """

    __slots__ = ("_index", "_out", "initial", "n_states", "names", "transitions")

    def __init__(
        self,
        n_states: int,
        initial: int,
        transitions: Iterable[tuple[int, str, int]],
        names: Sequence[str] | None = None,
    ) -> None:
        if n_states < 1:
            raise ValueError("an LTS has at least one state")
        if not 0 <= initial < n_states:
            raise ValueError(f"initial state {initial} not in 0..{n_states - 1}")
        seen: set[tuple[int, str, int]] = set()
        out: list[list[tuple[str, int]]] = [[] for _ in range(n_states)]
        trans: list[Transition] = []
        for src, lab, dst in transitions:
            if not (0 <= src < n_states and 0 <= dst < n_states):
                raise ValueError(f"transition ({src},{lab!r},{dst}) leaves 0..{n_states - 1}")
            lab = sys.intern(lab)
            key = (src, lab, dst)
            if key in seen:
                continue
            seen.add(key)
            trans.append(Transition(src, lab, dst))
            out[src].append((lab, dst))
        if names is not None and len(names) != n_states:
            raise ValueError("names must name every state")
        self.n_states = n_states
        self.initial = initial
        self.transitions: tuple[Transition, ...] = tuple(trans)
        self.names: tuple[str, ...] | None = tuple(names) if names is not None else None
        self._out: tuple[tuple[tuple[str, int], ...], ...] = tuple(tuple(o) for o in out)
        index: list[dict[str, int]] = []
        for o in out:
            first: dict[str, int] = {}
            for lab, dst in o:
                first.setdefault(lab, dst)
            index.append(first)
        self._index: tuple[dict[str, int], ...] = tuple(index)

    def enabled(self, state: int) -> tuple[tuple[str, int], ...]:
        """The transitions ``(label, dst)`` enabled in ``state`` (paper §3.3), precomputed."""
        return self._out[state]

    def step(self, state: int, lab: str) -> int | None:
        """The (first) ``lab``-successor of ``state``, or ``None`` when ``lab`` is not enabled."""
        return self._index[state].get(lab)

    def successors(self, state: int, lab: str) -> tuple[int, ...]:
        """All ``lab``-successors of ``state`` (paper §3.3 ``→``; several when nondeterministic)."""
        return tuple(d for a, d in self._out[state] if a == lab)

    @property
    def labels(self) -> frozenset[str]:
        """The labels that occur on some transition."""
        return frozenset(t.label for t in self.transitions)

    def is_final(self, state: int) -> bool:
        """Whether ``state`` enables nothing (the process ``0``)."""
        return not self._out[state]

    def name(self, state: int) -> str:
        """A readable name of ``state`` (its given name, else its number)."""
        return self.names[state] if self.names is not None else str(state)

    def reachable(self) -> LTS:
        """The reachable part, states renumbered in breadth-first order from the initial state."""
        order = [self.initial]
        number = {self.initial: 0}
        queue = deque([self.initial])
        while queue:
            s = queue.popleft()
            for _, d in self._out[s]:
                if d not in number:
                    number[d] = len(order)
                    order.append(d)
                    queue.append(d)
        trans = [
            (number[t.src], t.label, number[t.dst]) for t in self.transitions if t.src in number
        ]
        names = [self.name(s) for s in order] if self.names is not None else None
        return LTS(len(order), 0, trans, names)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LTS):
            return NotImplemented
        return (
            self.n_states == other.n_states
            and self.initial == other.initial
            and set(self.transitions) == set(other.transitions)
        )

    def __hash__(self) -> int:
        return hash((self.n_states, self.initial, frozenset(self.transitions)))

    def __repr__(self) -> str:
        return (
            f"LTS(n_states={self.n_states}, initial={self.initial}, "
            f"transitions={len(self.transitions)})"
        )


def relabel(lts: LTS, rename: Mapping[str, str] | Callable[[str], str | None]) -> LTS:
    """Rename labels by ``rename`` (a mapping, or a function where ``None`` drops the edge).

    This is the action equivalence of paper §4.3 when comparing SGD and MCP LTSs, and
    CCS relabelling ``P[f]`` in general.
    """
    fn: Callable[[str], str | None]
    if isinstance(rename, Mapping):
        table = rename
        fn = lambda a: table.get(a, a)  # noqa: E731
    else:
        fn = rename
    trans: list[tuple[int, str, int]] = []
    for t in lts.transitions:
        new = fn(t.label)
        if new is not None:
            trans.append((t.src, new, t.dst))
    return LTS(lts.n_states, lts.initial, trans, lts.names)


def hide(lts: LTS, labels: Collection[str] | Callable[[str], bool]) -> LTS:
    """Hiding ``P \\ L`` (CSP/CCS): labels in ``labels`` become τ (paper §3.3, silent actions)."""
    pred = labels if callable(labels) else labels.__contains__
    return relabel(lts, lambda a: TAU if pred(a) else a)


def restrict(lts: LTS, labels: Collection[str] | Callable[[str], bool]) -> LTS:
    """Restriction ``(ν L) P`` (paper §3.1 ``(νc) S``): drop ``labels``; keep the reachable part."""
    pred = labels if callable(labels) else labels.__contains__
    return relabel(lts, lambda a: None if pred(a) else a).reachable()


def parallel(left: LTS, right: LTS, sync: Collection[str] = ()) -> LTS:
    """Parallel composition ``P ∥_A Q`` (paper §3.1 ``S1 | S2``), reachable product only.

    Labels in ``sync`` are taken jointly by both sides (CSP-style synchronisation, the
    result keeps the label; hide or restrict it afterwards for a CCS-style τ); every
    other label, τ included, interleaves. State names are ``"(l,r)"``.
    """
    sync_set = frozenset(sync) - {TAU}
    start = (left.initial, right.initial)
    number: dict[tuple[int, int], int] = {start: 0}
    order = [start]
    trans: list[tuple[int, str, int]] = []
    queue = deque([start])

    def visit(pair: tuple[int, int]) -> int:
        idx = number.get(pair)
        if idx is None:
            idx = number[pair] = len(order)
            order.append(pair)
            queue.append(pair)
        return idx

    while queue:
        pair = queue.popleft()
        src = number[pair]
        l_state, r_state = pair
        r_out = right.enabled(r_state)
        for lab, l_dst in left.enabled(l_state):
            if lab in sync_set:
                for r_lab, r_dst in r_out:
                    if r_lab == lab:
                        trans.append((src, lab, visit((l_dst, r_dst))))
            else:
                trans.append((src, lab, visit((l_dst, r_state))))
        for lab, r_dst in r_out:
            if lab not in sync_set:
                trans.append((src, lab, visit((l_state, r_dst))))
    names = [f"({left.name(a)},{right.name(b)})" for a, b in order]
    return LTS(len(order), 0, trans, names)


def traces(lts: LTS, max_length: int, *, weak: bool = True) -> frozenset[tuple[str, ...]]:
    """The (weak: τ-free) traces of length ≤ ``max_length`` from the initial state (paper §4.4)."""
    result: set[tuple[str, ...]] = {()}
    frontier: set[tuple[int, tuple[str, ...]]] = {(lts.initial, ())}
    seen: set[tuple[int, tuple[str, ...]]] = set(frontier)
    while frontier:
        nxt: set[tuple[int, tuple[str, ...]]] = set()
        for state, trace in frontier:
            for lab, dst in lts.enabled(state):
                if weak and lab == TAU:
                    new = (dst, trace)
                else:
                    if len(trace) >= max_length:
                        continue
                    new = (dst, (*trace, lab))
                    result.add(new[1])
                if new not in seen:
                    seen.add(new)
                    nxt.add(new)
        frontier = nxt
    return frozenset(result)


def accepts(lts: LTS, trace: Sequence[str], *, weak: bool = True) -> bool:
    """Whether ``trace`` is a trace of ``lts`` from its initial state (paper §4.4, τ-absorption
    when ``weak``: τ steps may occur anywhere and are not written in ``trace``)."""
    current = _tau_closure(lts, {lts.initial}) if weak else {lts.initial}
    for lab in trace:
        nxt = {d for s in current for a, d in lts.enabled(s) if a == lab}
        current = _tau_closure(lts, nxt) if weak else nxt
        if not current:
            return False
    return True


def _tau_closure(lts: LTS, states: set[int]) -> set[int]:
    stack = list(states)
    seen = set(states)
    while stack:
        s = stack.pop()
        for lab, d in lts.enabled(s):
            if lab == TAU and d not in seen:
                seen.add(d)
                stack.append(d)
    return seen


class AutFormatError(ValueError):
    """A malformed Aldebaran ``.aut`` text (an LTS of paper §3.3); ``line`` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


_HEADER_RE = re.compile(r"^\s*des\s*\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)\s*$")
_EDGE_RE = re.compile(
    r'^\s*\(\s*(\d+)\s*,\s*(?:"((?:[^"\\]|\\.)*)"|([^,"]*?))\s*,\s*(\d+)\s*\)\s*$'
)


def write_aut(lts: LTS) -> str:
    """The LTS (paper §3.3) as Aldebaran text: ``des (init, m, n)`` then ``(src,"label",dst)``;
    τ is ``tau``."""
    lines = [f"des ({lts.initial}, {len(lts.transitions)}, {lts.n_states})"]
    lines.extend(f'({t.src},"{t.label}",{t.dst})' for t in lts.transitions)
    return "\n".join(lines) + "\n"


AutDialect = Literal["mcrl2", "cadp"]
"""Whose ``.aut`` conventions a file follows: mCRL2 (only ``tau`` is internal, ``i`` is a
visible action) or CADP (``i`` is internal; ``tau`` is read as internal too)."""
AUT_DIALECTS: tuple[str, ...] = get_args(AutDialect)


def aut_label(text: str, dialect: AutDialect = "mcrl2") -> str:
    """The label an ``.aut`` label text stands for (paper §3.3): τ per ``dialect``'s convention;
    a multi-action ``a|b`` is a multiset of actions, written with its actions sorted (so
    ``"b|a"`` and ``"a|b"`` are one label)."""
    if text == "tau" or (dialect == "cadp" and text == "i"):
        return TAU
    if "|" in text:
        parts = [p.strip() for p in text.split("|")]
        if all(parts):
            return sys.intern("|".join(sorted(parts)))
    return text


def read_aut(text: str | Path, dialect: AutDialect = "mcrl2") -> LTS:
    """Parse an LTS (paper §3.3) from Aldebaran text (or a ``Path`` to it). Labels may be quoted or
    bare and are read by :func:`aut_label`: ``tau`` is τ, and CADP's ``i`` too when ``dialect``
    is ``cadp``; multi-actions compare as multisets. Raises :class:`AutFormatError` naming the
    line."""
    if dialect not in AUT_DIALECTS:
        raise ValueError(f"aut dialect must be mcrl2|cadp, not {dialect!r}")
    if isinstance(text, Path):
        text = text.read_text(encoding="utf-8")
    lines = _content_lines(text)
    header = next(lines, None)
    if header is None:
        raise AutFormatError(1, "empty file: expected 'des (init, transitions, states)'")
    h_no, h_text = header
    match = _HEADER_RE.match(h_text)
    if match is None:
        raise AutFormatError(h_no, f"expected 'des (init, transitions, states)', got {h_text!r}")
    initial, n_trans, n_states = (int(g) for g in match.groups())
    if n_states < 1 or initial >= n_states:
        raise AutFormatError(h_no, f"initial state {initial} not in 0..{n_states - 1}")
    trans: list[tuple[int, str, int]] = []
    for no, line in lines:
        edge = _EDGE_RE.match(line)
        if edge is None:
            raise AutFormatError(no, f'expected (src,"label",dst), got {line!r}')
        src, dst = int(edge.group(1)), int(edge.group(4))
        lab = edge.group(2) if edge.group(2) is not None else edge.group(3).strip()
        if not lab:
            raise AutFormatError(no, "empty label")
        if src >= n_states or dst >= n_states:
            raise AutFormatError(no, f"state out of range 0..{n_states - 1}")
        trans.append((src, aut_label(lab, dialect), dst))
    if len(trans) != n_trans:
        raise AutFormatError(h_no, f"header says {n_trans} transitions, file has {len(trans)}")
    return LTS(n_states, initial, trans)


def _content_lines(text: str) -> Iterator[tuple[int, str]]:
    for no, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield no, line
