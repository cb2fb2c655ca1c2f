"""The checks of SPEC §6 that the language expresses, as formulas (docs/properties.md).

``write_approval`` is one fixed formula; ``exclusive`` and ``requires_order`` are
formulas built from the scenario's relations (passed in as plain data: tool pairs, the
tools each workflow's tasks name, the task ids). Each flags exactly the scopes its
built-in check flags (tests/properties/test_builtin.py proves it on mutated and generated
traces). ``recovery``, ``lts``, ``conservation`` and ``route_validity`` have no formula
here: docs/properties.md says why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from sim.properties.monitor import Property
from sim.properties.parse import ToolAttributes, parse

#: P2 WriteApproval per execution, per invocation (SPEC §9's example).
WRITE_APPROVAL = "G (execute(side_effects={write,delete}) -> Y (!execute S approve))"


_NAME = re.compile(r"[A-Za-z_](?:[A-Za-z0-9_.+]|-(?!>))*")


def _name(word: str) -> str:
    """``word`` as a formula value: bare when it is a name token, else double-quoted."""
    return word if _NAME.fullmatch(word) and word not in ("true", "false") else f'"{word}"'


#: The most operands joined flat in a built formula; longer joins are grouped in
#: parentheses (a tree of depth log_8 n), so built formulas stay within MAX_DEPTH.
JOIN_WIDTH = 8


def _join(parts: list[str], op: str) -> str:
    """``parts`` joined by the associative ``op`` (``&`` or ``|``), grouped so that the
    formula nests about ``JOIN_WIDTH * log_JOIN_WIDTH(len(parts))`` levels."""
    while len(parts) > JOIN_WIDTH:
        parts = [
            "(" + f" {op} ".join(parts[i : i + JOIN_WIDTH]) + ")"
            for i in range(0, len(parts), JOIN_WIDTH)
        ]
    return f" {op} ".join(parts)


def _set(names: Iterable[str]) -> str:
    return "{" + ", ".join(_name(n) for n in sorted(names)) + "}"


def exclusive(pairs: Iterable[tuple[str, str]]) -> str | None:
    """P4 ExclusiveWith per instance: never both tools of a pair executed (None: no pair)."""
    unique = sorted({tuple(sorted(p)) for p in pairs})
    parts = [f"G !(O execute({_name(a)}) & O execute({_name(b)}))" for a, b in unique]
    return _join(parts, "&") if parts else None


def requires_order(
    requires: Mapping[str, Iterable[str]],
    workflow_tools: Mapping[str, Iterable[str]],
    tasks: Iterable[str],
) -> str | None:
    """P4 Requires per instance: for Ti Requires Tj, every ``execute(Ti)`` is preceded by
    a success of Tj (its ``result``, or a ``result`` in a task that called Tj: a fallback's
    success is its task's), when Tj is a task tool of the instance's workflow or is called
    in the instance at all (None: no Requires)."""
    task_ids = sorted(set(tasks))
    parts = []
    for ti in sorted(requires):
        for tj in sorted(set(requires[ti])):
            i, j = _name(ti), _name(tj)
            called = f"(call({j}) | invoke({j}))"
            via_task = [
                f"O (result(task={t}) & O (call({j}, task={t}) | invoke({j}, task={t})))"
                for t in map(_name, task_ids)
            ]
            succeeded = _join([f"O result({j})", *via_task], "|")
            # "every execute succeeded-before, or Tj never called", as an invariant: once
            # Tj has been called, no execute so far lacked a success of Tj before it
            both = f"G (O {called} -> H (execute({i}) -> ({succeeded})))"
            static = sorted(w for w, tools in workflow_tools.items() if tj in set(tools))
            if static:
                in_static = f"G (execute({i}, wf={_set(static)}) -> ({succeeded}))"
                parts.append(f"{in_static} & {both}")
            else:
                parts.append(both)
    return _join(parts, "&") if parts else None


def builtin_properties(
    tools: Mapping[str, ToolAttributes],
    requires: Mapping[str, Iterable[str]],
    exclusive_pairs: Iterable[tuple[str, str]],
    workflow_tools: Mapping[str, Iterable[str]],
    tasks: Iterable[str],
) -> list[Property]:
    """The formulas of the checks above for one scenario, named after their checks
    (``true`` for a check whose relation the scenario does not declare)."""
    out = [
        Property("write_approval", "invocation", parse(WRITE_APPROVAL, tools=tools), WRITE_APPROVAL)
    ]
    for name, text in (
        ("requires_order", requires_order(requires, workflow_tools, tasks)),
        ("exclusive", exclusive(exclusive_pairs)),
    ):
        text = text or "true"  # no relation: the empty conjunction, nothing to violate
        out.append(Property(name, "instance", parse(text, tools=tools, max_chars=None), text))
    return out
