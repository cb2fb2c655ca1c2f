"""The four principles of paper §6 as checks on a tool list (``python -m sim lint``).

Each :class:`Finding` has a severity: ``finding`` (a rule is violated, with its evidence) or
``note`` (something is unknown; the note names the field that would settle it).

- P1 SemanticCompleteness (§6.1): ``sem_density(d) = |entities(d)| / |tokens(d)| ≥ θ`` for
  the tool description and every input-property description at any depth (nested objects,
  array items, ``anyOf``/``oneOf``/``allOf``, ``$defs``: :mod:`sim.calculus.schemas`), and the
  tool description names at least ``min_entities`` entities.
- P2 WriteApproval (§6.2): ``side_effects ∈ {write, delete} ⇒ requires_approval``. A plain MCP
  tool that declares a write (``readOnlyHint: false``, ``destructiveHint: true``) with a write
  verb or argument (:mod:`sim.calculus.writes`), or with ``destructiveHint: true``, is a
  finding (MCP cannot say it needs approval); one that declares nothing and *looks like* a
  write is a finding with the evidence; one that declares nothing and does not look like a
  write, or declares ``readOnlyHint: false`` with no evidence of a write, is a note naming
  ``readOnlyHint: true``, the annotation that would settle it.
- P3 FailureModes (§6.3): an MCP⁺ tool declares its failure modes; fallback targets exist.
  For the plain MCP tools of a list, one note says what plain MCP cannot carry.
- P4 Dependencies (§6.4): declared targets exist, and a dependency is declared wherever a
  text or the data flow gives evidence of one (:mod:`sim.calculus.evidence`: a description
  that says so; :mod:`sim.calculus.dataflow`: an input that refers to what only another tool
  reports or creates); the finding quotes the evidence and names the tool it ``requires``.

Every :class:`Finding` says which field or annotation would clear it (``clear``). Time is
linear in the size of the list.

``tokens``: maximal runs of letters and digits (a possessive ``'s`` dropped), lower-cased.
``entities``: the tokens that carry domain meaning, i.e. that are neither English function
words nor generic filler (:data:`STOP_WORDS`,
:data:`FILLER_WORDS`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sim.calculus.mcp import (
    MCP_PLUS_META,
    Annotations,
    Fallback,
    Relation,
    SideEffect,
    Tool,
    ToolPlus,
)
from sim.calculus.schemas import Property, Walked, walk

__all__ = [
    "DEFAULT_MIN_ENTITIES",
    "DEFAULT_THETA",
    "FILLER_WORDS",
    "FINDING",
    "LIST",
    "NOTE",
    "PRINCIPLES",
    "STOP_WORDS",
    "Finding",
    "entities",
    "lint",
    "sem_density",
    "tokens",
]

DEFAULT_THETA = 0.25
"""Default θ of P1 (justified in docs/calculus.md from the real SGD and MCP descriptions)."""
DEFAULT_MIN_ENTITIES = 3
"""Default minimum number of entities in a tool description (P1)."""

PRINCIPLES = {
    "P1": "SemanticCompleteness",
    "P2": "WriteApproval",
    "P3": "FailureModes",
    "P4": "Dependencies",
}
"""The principle names of paper §6 as findings print them."""
FINDING = "finding"
"""Severity of a violated rule (``lint`` exits 1 when there is one)."""
NOTE = "note"
"""Severity of an unknown that a field would settle (``lint`` exits 0 on notes alone)."""
LIST = "tools/list"
"""How a finding about the whole list (``Finding.tool is None``) names its subject."""
PLUS = f'_meta["{MCP_PLUS_META}"]'
"""Where a ``tools/list`` entry carries MCP⁺ metadata, as the ``clear`` texts name it."""

STOP_WORDS = frozenset(
    """
    a an the and or nor but if then else than so as of in on at to for from by with
    without into onto over under about above below between through during before after
    up down out off again further once here there when where why how all any both each
    few more most such no not only own same too very can will just should would could
    may might must shall do does did doing done be is are was were been being have has
    had having it its it's this that these those i me my we our you your he him his she
    her they them their what which who whom whose whether while until also via per
    either neither yet s t
    """.split()  # noqa: SIM905
)
"""English function words: tokens that never count as entities."""

FILLER_WORDS = frozenset(
    """
    thing things stuff data info information item items object objects value values
    tool tools function functions method operation operations etc various given
    specific certain particular optionally optional other others some based way ways
    use used uses using allows allow allowing helps help helpful useful simply
    basically just like well new
    """.split()  # noqa: SIM905
)
"""Generic words that carry no domain meaning (``data``, ``information``, ``given``...)."""

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")


def tokens(text: str) -> list[str]:
    """``tokens(s)`` of paper §6.1: lower-cased runs of letters and digits (``'s`` dropped)."""
    words: list[str] = _WORD.findall(text.lower())
    if "'" not in text:
        return words
    return [(w[:-2] if w.endswith("'s") else w.replace("'", "")) if "'" in w else w for w in words]


_NOT_ENTITIES = STOP_WORDS | FILLER_WORDS


def entities(text: str) -> list[str]:
    """``entities(s)`` of paper §6.1: the tokens that are neither function words nor filler."""
    return [t for t in tokens(text) if t not in _NOT_ENTITIES]


def _density(toks: Sequence[str]) -> tuple[float, list[str]]:
    found = [t for t in toks if t not in _NOT_ENTITIES]
    return (len(found) / len(toks) if toks else 0.0), found


def sem_density(text: str) -> float:
    """``sem_density(s) = |entities(s)| / |tokens(s)|`` (paper §6.1); 0 for no tokens."""
    return _density(tokens(text))[0]


@dataclass(frozen=True, slots=True)
class Finding:
    """One item of paper §6: the tool (``None``: the whole list), the principle (P1..P4),
    the field, the evidence (``message``), which field or annotation would clear it, the
    severity (``finding``: a rule is violated; ``note``: something is unknown and what would
    settle it), and for P4 the tool it requires."""

    tool: str | None
    principle: str
    field: str
    message: str
    clear: str
    severity: str = FINDING
    requires: str | None = None

    @property
    def principle_name(self) -> str:
        """``P2 WriteApproval`` etc."""
        return f"{self.principle} {PRINCIPLES[self.principle]}"

    def to_json(self) -> dict[str, str | None]:
        """The ``lint --json`` object: tool, principle, severity, field, evidence, clear, and
        for P4 ``requires``."""
        out: dict[str, str | None] = {
            "tool": self.tool,
            "principle": self.principle,
            "severity": self.severity,
            "field": self.field,
            "evidence": self.message,
            "clear": self.clear,
        }
        if self.principle == "P4":
            out["requires"] = self.requires
        return out

    def __str__(self) -> str:
        subject = LIST if self.tool is None else self.tool
        kind = " (note)" if self.severity == NOTE else ""
        return (
            f"{subject}: {self.principle_name}{kind}: field {self.field}: {self.message}; "
            f"to clear: {self.clear}"
        )


def _plus(tool: Tool | ToolPlus) -> tuple[ToolPlus, bool]:
    if isinstance(tool, Tool):
        return ToolPlus.from_tool(tool), False
    return tool, True


def _check_p1(
    t: ToolPlus, inputs: Sequence[Property], theta: float, min_entities: int
) -> Iterable[Finding]:
    desc = t.description
    if not desc or not desc.strip():
        yield Finding(
            t.name, "P1", "description", "missing or empty", "description: what it acts on, why"
        )
    else:
        density, found = _density(tokens(desc))
        if density < theta:
            yield Finding(
                t.name,
                "P1",
                "description",
                f"sem_density {density:.2f} < θ={theta:.2f}",
                f"description with fewer function and filler words (sem_density ≥ {theta:.2f})",
            )
        if len(found) < min_entities:
            yield Finding(
                t.name,
                "P1",
                "description",
                f"{len(found)} entit{'y' if len(found) == 1 else 'ies'} "
                f"({' '.join(found) or '-'}) < {min_entities}: does not say what the tool acts "
                "on and why",
                f"description naming at least {min_entities} entities (an action, its object, "
                "a qualifier)",
            )
    for prop in inputs:
        where = f"{prop.path}.description"
        pdesc = prop.description
        if not pdesc.strip():
            yield Finding(
                t.name,
                "P1",
                where,
                "missing: the parameter's purpose is not stated",
                f"{where}: what the value is and what it is for",
            )
        elif (density := sem_density(pdesc)) < theta:
            yield Finding(
                t.name,
                "P1",
                where,
                f"sem_density {density:.2f} < θ={theta:.2f}",
                f"{where} with more domain words (sem_density ≥ {theta:.2f})",
            )


_APPROVAL = f"requires_approval: true under {PLUS} (MCP⁺; plain MCP has no such field)"
_SETTLE = "annotations.readOnlyHint: true if the tool only reads (or changes only the session)"


def _note(tool: str, field: str, message: str, clear: str) -> Finding:
    return Finding(tool, "P2", field, message, clear, NOTE)


def _check_p2(t: ToolPlus, is_plus: bool, inputs: Sequence[Property]) -> Iterable[Finding]:
    """One P2 item per tool at most: a finding where the tool writes (declared, or evident
    from its texts, :mod:`sim.calculus.writes`) and no approval requirement is declared; a
    note where nothing settles whether it writes."""
    # imported here: every command line imports this module (lint's defaults), and only
    # lint reads the evidence
    from sim.calculus.writes import write_evidence

    ev = write_evidence(t, inputs)
    if is_plus:
        if t.side_effects is None:
            if ev.writes:
                yield Finding(
                    t.name,
                    "P2",
                    "side_effects",
                    f"not declared, and it looks like a write: {ev.describe()}",
                    "side_effects: write|delete, and requires_approval: true",
                )
            else:
                yield _note(
                    t.name,
                    "side_effects",
                    "declares nothing: whether the tool writes is unknown",
                    "side_effects: none|read|write|delete",
                )
        elif t.side_effects in (SideEffect.WRITE, SideEffect.DELETE):
            if t.requires_approval is not True:
                state = "missing" if t.requires_approval is None else "false"
                yield Finding(
                    t.name,
                    "P2",
                    "requires_approval",
                    f"side_effects={t.side_effects.value} but requires_approval is {state}",
                    "requires_approval: true",
                )
        elif t.requires_approval is None:
            yield Finding(
                t.name,
                "P2",
                "requires_approval",
                f"not declared (side_effects={t.side_effects.value})",
                "requires_approval: false (or true)",
            )
        return
    ann = t.annotations or Annotations()
    if ann.read_only is True:
        return
    declared = [f"readOnlyHint: {str(ann.read_only).lower()}"] if ann.read_only is False else []
    if ann.destructive is True:
        declared.append("destructiveHint: true")
    if declared:
        said = "annotations." + ", ".join(declared)
        if ev.writes or ann.destructive is True:
            why = f"; {ev.describe()}" if ev.writes else ""
            yield Finding(
                t.name,
                "P2",
                "requires_approval",
                f"declares a write ({said}{why}) and MCP cannot say whether it needs approval",
                _APPROVAL,
            )
        else:
            yield _note(
                t.name,
                "annotations.readOnlyHint",
                f"declares {said}, but neither its name nor its description names a write "
                "(no write verb, no write argument)",
                f"{_SETTLE}; if it writes, {_APPROVAL}",
            )
        return
    absent = "no annotations" if t.annotations is None else "no readOnlyHint"
    if ev.writes:
        yield Finding(
            t.name,
            "P2",
            "annotations",
            f"looks like a write and is not marked ({absent}): {ev.describe()}",
            "annotations.readOnlyHint: false, destructiveHint: false if it only adds, and "
            + _APPROVAL,
        )
    elif ev.reads:
        yield _note(
            t.name,
            "annotations.readOnlyHint",
            f"{absent}; its description says {ev.reads!r}, which no client reads",
            _SETTLE,
        )
    else:
        yield _note(
            t.name,
            "annotations.readOnlyHint",
            f"declares nothing ({absent}; the spec's default readOnlyHint: false would make "
            "it a write), and nothing in its name, description or arguments says it writes",
            _SETTLE,
        )


def _check_p3(t: ToolPlus, names: set[str]) -> Iterable[Finding]:
    if t.failure_modes is None:
        yield Finding(
            t.name,
            "P3",
            "failure_modes",
            "not declared by this MCP⁺ tool: every error gets the default abort",
            "failure_modes: [{error, recovery: retry|fallback|prompt|abort}, ...] ([] if none)",
        )
        return
    for i, fm in enumerate(t.failure_modes):
        if isinstance(fm.recovery, Fallback) and fm.recovery.tool not in names:
            yield Finding(
                t.name,
                "P3",
                f"failure_modes[{i}].recovery.fallback",
                f"fallback tool {fm.recovery.tool!r} is not in the list",
                f"failure_modes[{i}].recovery: a fallback tool of this list, or another recovery",
            )


def _p3_plain(plain: Sequence[str], total: int) -> Finding:
    """The one P3 note of a list with plain MCP tools: what plain MCP cannot carry."""
    return Finding(
        None,
        "P3",
        "failure_modes",
        f"plain MCP cannot carry failure modes (every error gets the default abort), whether "
        f"a write needs approval, or dependencies; {len(plain)} of {total} tools are plain "
        f"MCP: {_names(plain)}",
        f"failure_modes, requires_approval and dependencies under {PLUS} of each tool (MCP⁺)",
        NOTE,
    )


def _names(names: Sequence[str], most: int = 5) -> str:
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown} and {len(names) - most} more"


def _check_p4(
    tools: Sequence[tuple[ToolPlus, bool]], schemas: Sequence[Walked], names: set[str]
) -> dict[str, list[Finding]]:
    """P4 findings per consumer tool: unknown targets, then undeclared evidenced ones."""
    from sim.calculus.dataflow import dataflow_evidence  # imported here: see _check_p2
    from sim.calculus.evidence import dependency_evidence

    out: dict[str, list[Finding]] = {}
    declared: set[tuple[str, str, Relation]] = set()
    plus = {t.name: is_plus for t, is_plus in tools}
    for t, _ in tools:
        for i, dep in enumerate(t.dependencies or ()):
            declared.add((t.name, dep.tool, dep.relation))
            if dep.tool not in names:
                out.setdefault(t.name, []).append(
                    Finding(
                        t.name,
                        "P4",
                        f"dependencies[{i}].tool",
                        f"{dep.tool!r} is not in the list",
                        f"dependencies[{i}].tool: a tool of this list",
                        requires=dep.tool,
                    )
                )
    plain_tools = [t for t, _ in tools]
    seen: set[tuple[str, str]] = set()
    evidence = [
        *dependency_evidence(plain_tools, schemas),
        *dataflow_evidence(plain_tools, schemas),
    ]
    for ev in evidence:
        b, a = ev.consumer, ev.producer
        if (b, a) in seen:
            continue
        seen.add((b, a))
        if (b, a, Relation.REQUIRES) in declared or (a, b, Relation.PRODUCES_INPUT_FOR) in declared:
            continue
        where = "" if plus[b] and plus[a] else f" under {PLUS} (MCP⁺; plain MCP cannot declare it)"
        out.setdefault(b, []).append(
            Finding(
                b,
                "P4",
                "dependencies",
                f"depends on {a}, undeclared: {ev.describe()}",
                f"dependencies: ({a}, Requires) on {b} or ({b}, ProducesInputFor) on {a}{where}",
                requires=a,
            )
        )
    return out


def lint(
    tools: Sequence[Tool | ToolPlus],
    *,
    theta: float = DEFAULT_THETA,
    min_entities: int = DEFAULT_MIN_ENTITIES,
) -> list[Finding]:
    """Check P1–P4 (paper §6.1–6.4) on every tool; one :class:`Finding` per violated rule or
    unknown, in tool order then principle order, then the list's own note (P3 of its plain
    MCP tools). Linear in the size of the list."""
    plus = [_plus(t) for t in tools]
    names = {p.name for p, _ in plus}
    schemas = [walk(t.input_schema, t.output_schema) for t, _ in plus]  # once per tool
    p4 = _check_p4(plus, schemas, names)
    findings: list[Finding] = []
    plain: list[str] = []
    for (t, is_plus), walked in zip(plus, schemas, strict=True):
        findings.extend(_check_p1(t, walked.inputs, theta, min_entities))
        findings.extend(_check_p2(t, is_plus, walked.inputs))
        if is_plus:
            findings.extend(_check_p3(t, names))
        else:
            plain.append(t.name)
        findings.extend(p4.get(t.name, ()))
    if plain:
        findings.append(_p3_plain(plain, len(plus)))
    return findings
