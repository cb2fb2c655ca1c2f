"""The LTS of one tool invocation (paper §3.2.3, §6.2, §6.3; SPEC §4), built for a dialect.

A tool invocation (paper §3.2.3 and §6.3 ``Tool_robust``, SPEC §4) is::

    call(n) . τ(validate) . [approve(n) | deny(n)] . execute(n) .
        (result(n) | error(n,t) . recovery)

with ``error(n,ValidationError)`` beside the τ when the schema constrains an input (a
required input, or a property with a ``type`` or an ``enum``: an argument can then violate
it, paper §4.4 MCP-Validate-Err), the approval gate only when the caller's view asks for
approval, one error branch per error type, and recovery ``retry(n)`` (back to the gate: an
approval is consumed by one execute, at most ``k`` times, then ``abort``),
``fallback(n,tool)``, ``prompt(n)`` or ``abort(n)``; an error type without a declared
strategy aborts (SPEC §2).

The same invocation in a collecting dialect (SGD's, ``dialect="sgd"``, SPEC §4's intent
shape; :mod:`sim.calculus.mcp.dialects` declares which) is::

    invoke(n) . collect(r1)? ... collect(rk)? . [approve(n) | deny(n)] . execute(n) .
        (result(n) | error(n,t) . recovery)

one optional ``collect(ri)`` per required input, in the schema's ``required`` order (the
caller asks the user for the slots its arguments lack; any in-order subset is a trace),
``collect(o)`` for an optional input ``o`` at any point of the collecting phase (the engine's
callers never take it; SGD dialogues do), no
validation τ (collected slots cannot fail validation), and SGD's ``confirm`` traced as
``approve`` (SPEC §5 has no ``confirm`` label). Recovery is the MCP dialect's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from sim.calculus.lts import LTS, TAU, is_label_argument, label
from sim.calculus.mcp.model import (
    VALIDATION_ERROR,
    Abort,
    Fallback,
    RecoveryStrategy,
    Retry,
    Tool,
    ToolPlus,
    UserPrompt,
)
from sim.calculus.mcp.view import ToolView
from sim.calculus.sgd import EXECUTION_ERROR

__all__ = ["RETRY_STATES", "invocation_lts", "validates"]

#: Retries counted in states per error type: a ``retry(k)`` with k above it folds its
#: counter there (from the RETRY_STATES-th retry on, the state loops; the LTS then allows
#: more than k retries, which the ``recovery`` check still counts), so ``retry: 1000000000``
#: builds 101 counter values, not a billion. Every k up to it is exact.
RETRY_STATES = 100

CONSTRAINTS = ("type", "enum")
"""The property keywords an argument can violate (besides ``required``) that open the
``ValidationError`` branch."""


def validates(schema: Mapping[str, Any]) -> bool:
    """Whether some argument can violate ``schema`` (paper §4.4 MCP-Validate-Err; an input
    schema): it has required inputs, or a top-level property declares a ``type`` or an
    ``enum``. An unconstrained schema (``{}``, ``{"type": "object"}``, properties without
    either) accepts every object."""
    if schema.get("required"):
        return True
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return False
    return any(isinstance(p, Mapping) and any(k in p for k in CONSTRAINTS) for p in props.values())


def invocation_lts(
    tool: Tool | ToolPlus | ToolView,
    *,
    opening: str,
    collects: bool,
    approval: bool | None = None,
    error_types: Sequence[str] = (EXECUTION_ERROR,),
) -> LTS:
    """The LTS of one invocation of ``tool`` (paper §3.2.3, §6.2 ``Tool_write``, §6.3
    ``Tool_robust``; SPEC §4).

    The approval gate follows ``approval`` if given, else the view's decision, else
    ``requires_approval is True`` (a plain :class:`Tool` has none). Errors after ``execute``:
    each declared failure mode's type plus ``error_types`` (undeclared ones abort). A
    ``ValidationError`` branch replaces nothing: it is offered beside the τ whenever the schema
    constrains an input (:func:`validates`: required inputs, or a property with ``type`` or
    ``enum``) or the failure modes declare it. State names show the phase and the retries
    used.

    ``opening``: the label that opens it (a dialect's, :mod:`sim.calculus.mcp.dialects`, whose
    ``tool_lts`` calls this); ``collects``: the intake collects slots instead of the
    validation above. A collecting invocation (SGD's) opens with its label (``invoke``), then
    the collecting states ``collect_i`` (``i`` the next position in the schema's
    ``required`` list) where ``collect(r_j)`` for any ``j ≥ i`` leads to ``collect_{j+1}``
    and the gate (or ``execute``) is enabled too: any in-order subset of the required
    inputs is collected, with no τ (a weak-trace equivalent of "``collect(r_i)`` or a τ
    skip" at each position, without silent steps for the engine to take or the ``lts``
    check to close over). No validation phase; ``retry`` goes back to the gate.
    """
    if isinstance(tool, ToolView):
        desc, gate = tool.descriptor, tool.approval
    elif isinstance(tool, Tool):
        desc, gate = ToolPlus.from_tool(tool), False
    else:
        desc, gate = tool, tool.requires_approval is True
    if approval is not None:
        gate = approval
    n = desc.name
    modes: dict[str, RecoveryStrategy] = {}
    for fm in desc.failure_modes or ():
        modes.setdefault(fm.error, fm.recovery)
    schema = desc.input_schema or {}
    slots: tuple[str, ...] = tuple(schema.get("required", ()) or ()) if collects else ()
    collect_labels = [label("collect", r) for r in slots]
    # optional inputs an SGD caller may also be asked for (never by the engine's callers,
    # which collect only missing required slots; the dialogue replay collects them)
    optional = (
        [
            label("collect", o)
            for o in schema.get("properties") or {}
            if o not in slots and is_label_argument(o)
        ]
        if collects
        else []
    )
    collecting = bool(slots or optional)
    validation_fails = not collects and (validates(schema) or VALIDATION_ERROR in modes)
    exec_errors = [e for e in modes if e != VALIDATION_ERROR]
    exec_errors.extend(e for e in error_types if e not in modes and e != VALIDATION_ERROR)
    retried = sorted(e for e, r in modes.items() if isinstance(r, Retry))
    slot = {e: i for i, e in enumerate(retried)}

    # state key: (phase, error type or "", retries used per retried error type)
    Key = tuple[str, str, tuple[int, ...]]
    start: Key = ("idle", "", tuple(0 for _ in retried))
    number: dict[Key, int] = {start: 0}
    order: list[Key] = [start]
    trans: list[tuple[int, str, int]] = []
    queue: deque[Key] = deque([start])

    def go(src: int, lab: str, key: Key) -> None:
        dst = number.get(key)
        if dst is None:
            dst = number[key] = len(order)
            order.append(key)
            queue.append(key)
        trans.append((src, lab, dst))

    done: Key = ("done", "", ())

    def gate_from(src: int, used: tuple[int, ...]) -> None:
        if gate:
            go(src, label("approve", n), ("approved", "", used))
            go(src, label("deny", n), done)
        else:
            go(src, label("execute", n), ("executing", "", used))

    while queue:
        key = queue.popleft()
        phase, err, used = key
        src = number[key]
        if phase == "idle":
            if not collects:
                go(src, label(opening, n), ("validating", "", used))
            else:
                go(src, label(opening, n), ("collect_0" if collecting else "ready", "", used))
        elif phase.startswith("collect_"):
            for j in range(int(phase[8:]), len(slots)):
                nxt = f"collect_{j + 1}" if j + 1 < len(slots) or optional else "ready"
                go(src, collect_labels[j], (nxt, "", used))
            for lab in optional:
                go(src, lab, key)
            gate_from(src, used)
        elif phase == "validating":
            go(src, TAU, ("ready", "", used))
            if validation_fails:
                go(src, label("error", n, VALIDATION_ERROR), ("failed", VALIDATION_ERROR, used))
        elif phase == "ready":
            gate_from(src, used)
        elif phase == "approved":
            go(src, label("execute", n), ("executing", "", used))
        elif phase == "executing":
            go(src, label("result", n), done)
            for e in exec_errors:
                go(src, label("error", n, e), ("failed", e, used))
        elif phase == "failed":
            rec = modes.get(err, Abort())
            if isinstance(rec, Retry) and used[slot[err]] < rec.n:
                more = list(used)
                more[slot[err]] = min(more[slot[err]] + 1, RETRY_STATES)
                back = "validating" if err == VALIDATION_ERROR else "ready"
                go(src, label("retry", n), (back, "", tuple(more)))
            elif isinstance(rec, Fallback):
                go(src, label("fallback", n, rec.tool), done)
            elif isinstance(rec, UserPrompt):
                go(src, label("prompt", n), done)
            else:
                go(src, label("abort", n), done)

    def show(key: Key) -> str:
        phase, err, used = key
        text = f"{phase}:{err}" if err else phase
        if any(used):
            text += "[" + ",".join(f"{e}={used[slot[e]]}" for e in retried) + "]"
        return text

    return LTS(len(order), 0, trans, [show(k) for k in order])
