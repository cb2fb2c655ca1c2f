"""The four principles of paper §6 as checks on a tool list (``python -m sim lint``).

- P1 SemanticCompleteness (§6.1): ``sem_density(d) = |entities(d)| / |tokens(d)| ≥ θ`` for
  the tool description and every input-property description, and the tool description names
  at least ``min_entities`` entities (the ratio alone rewards a one-word description).
- P2 WriteApproval (§6.2): ``side_effects ∈ {write, delete} ⇒ requires_approval``; for a
  plain MCP tool, what its annotations imply (absent hints take the spec defaults) and that
  the approval requirement is missing.
- P3 FailureModes (§6.3): failure modes are declared; fallback targets exist.
- P4 Dependencies (§6.4): a dependency is declared wherever the schemas show one (a required
  input of B that another tool A of the same namespace produces as a new output: in A's
  output schema, not among A's inputs, and not an envelope every output schema of the
  namespace has, like ``content``), and declared targets exist. The namespace is the
  ``Service__`` prefix (one namespace for a list without prefixes).

``tokens``: maximal runs of letters and digits (a possessive ``'s`` dropped), lower-cased.
``entities``: the tokens that carry domain meaning, i.e. that are neither English function
words nor generic filler (:data:`STOP_WORDS`,
:data:`FILLER_WORDS`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sim.calculus.mcp import (
    Fallback,
    Relation,
    SideEffect,
    Tool,
    ToolPlus,
)
from sim.calculus.sgd import SERVICE_SEPARATOR

__all__ = [
    "DEFAULT_MIN_ENTITIES",
    "DEFAULT_THETA",
    "FILLER_WORDS",
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
    out: list[str] = []
    for word in _WORD.findall(text):
        word = word.lower()
        if word.endswith("'s"):
            word = word[:-2]
        elif "'" in word:
            word = word.replace("'", "")
        out.append(word)
    return out


def entities(text: str) -> list[str]:
    """``entities(s)`` of paper §6.1: the tokens that are neither function words nor filler."""
    return [t for t in tokens(text) if t not in STOP_WORDS and t not in FILLER_WORDS]


def sem_density(text: str) -> float:
    """``sem_density(s) = |entities(s)| / |tokens(s)|`` (paper §6.1); 0 for no tokens."""
    toks = tokens(text)
    return len(entities(text)) / len(toks) if toks else 0.0


@dataclass(frozen=True, slots=True)
class Finding:
    """One violated rule of paper §6: the tool, the principle (P1..P4), the field, and why."""

    tool: str
    principle: str
    field: str
    message: str

    @property
    def principle_name(self) -> str:
        """``P2 WriteApproval`` etc."""
        return f"{self.principle} {PRINCIPLES[self.principle]}"

    def __str__(self) -> str:
        return f"{self.tool}: {self.principle_name}: field {self.field}: {self.message}"


def _plus(tool: Tool | ToolPlus) -> tuple[ToolPlus, bool]:
    if isinstance(tool, Tool):
        return ToolPlus.from_tool(tool), False
    return tool, True


def _check_p1(t: ToolPlus, theta: float, min_entities: int) -> Iterable[Finding]:
    desc = t.description
    if not desc or not desc.strip():
        yield Finding(t.name, "P1", "description", "missing or empty")
    else:
        density = sem_density(desc)
        n_ent = len(entities(desc))
        if density < theta:
            yield Finding(t.name, "P1", "description", f"sem_density {density:.2f} < θ={theta:.2f}")
        if n_ent < min_entities:
            yield Finding(
                t.name,
                "P1",
                "description",
                f"{n_ent} entit{'y' if n_ent == 1 else 'ies'} ({' '.join(entities(desc)) or '-'})"
                f" < {min_entities}: does not say what the tool acts on and why",
            )
    props = (t.input_schema or {}).get("properties") or {}
    for pname, prop in props.items():
        where = f"inputSchema.properties.{pname}.description"
        pdesc = prop.get("description") if isinstance(prop, Mapping) else None
        if not isinstance(pdesc, str) or not pdesc.strip():
            yield Finding(t.name, "P1", where, "missing: the parameter's purpose is not stated")
        elif sem_density(pdesc) < theta:
            yield Finding(
                t.name, "P1", where, f"sem_density {sem_density(pdesc):.2f} < θ={theta:.2f}"
            )


def _check_p2(t: ToolPlus, is_plus: bool) -> Iterable[Finding]:
    if is_plus:
        if t.side_effects is None:
            yield Finding(t.name, "P2", "side_effects", "not declared (none|read|write|delete)")
        elif t.side_effects in (SideEffect.WRITE, SideEffect.DELETE):
            if t.requires_approval is not True:
                state = "missing" if t.requires_approval is None else "false"
                yield Finding(
                    t.name,
                    "P2",
                    "requires_approval",
                    f"side_effects={t.side_effects.value} but requires_approval is {state}",
                )
        elif t.requires_approval is None:
            yield Finding(t.name, "P2", "requires_approval", "not declared")
        return
    ann = t.annotations
    if ann is None:
        yield Finding(
            t.name,
            "P2",
            "annotations",
            "no annotations: by the MCP defaults (readOnlyHint=false, destructiveHint=true) "
            "the tool may destroy data, and nothing says whether it needs approval",
        )
        return
    if ann.effective("readOnlyHint"):
        return
    if ann.read_only is None:
        yield Finding(
            t.name,
            "P2",
            "annotations.readOnlyHint",
            "absent: the MCP default false says the tool may write",
        )
    if ann.effective("destructiveHint"):
        how = "absent (MCP default true)" if ann.destructive is None else "true"
        yield Finding(
            t.name,
            "P2",
            "annotations.destructiveHint",
            f"{how}: a destructive tool without requires_approval (MCP cannot express it)",
        )
    else:
        yield Finding(
            t.name,
            "P2",
            "requires_approval",
            "writes (readOnlyHint=false) but MCP cannot say whether approval is required",
        )


def _check_p3(t: ToolPlus, names: set[str]) -> Iterable[Finding]:
    if t.failure_modes is None:
        yield Finding(t.name, "P3", "failure_modes", "not declared: errors get the default abort")
        return
    for i, fm in enumerate(t.failure_modes):
        if isinstance(fm.recovery, Fallback) and fm.recovery.tool not in names:
            yield Finding(
                t.name,
                "P3",
                f"failure_modes[{i}].recovery.fallback",
                f"fallback tool {fm.recovery.tool!r} is not in the list",
            )


def _namespace(name: str) -> str:
    return name.partition(SERVICE_SEPARATOR)[0] if SERVICE_SEPARATOR in name else ""


def _props(schema: Mapping[str, Any] | None) -> set[str]:
    return set(((schema or {}).get("properties") or {}).keys())


def _required(schema: Mapping[str, Any] | None) -> set[str]:
    req = (schema or {}).get("required") or []
    return {r for r in req if isinstance(r, str)}


def _check_p4(t: ToolPlus, tools: Sequence[ToolPlus], names: set[str]) -> Iterable[Finding]:
    for i, dep in enumerate(t.dependencies or ()):
        if dep.tool not in names:
            yield Finding(
                t.name, "P4", f"dependencies[{i}].tool", f"{dep.tool!r} is not in the list"
            )
    needs = _required(t.input_schema)
    if not needs:
        return
    declared = {(d.tool, d.relation) for d in t.dependencies or ()}
    peers = [o for o in tools if _namespace(o.name) == _namespace(t.name)]
    outputs = [_props(o.output_schema) for o in peers if o.output_schema is not None]
    envelope = set.intersection(*outputs) if len(outputs) > 1 else set()
    for other in peers:
        if other.name == t.name:
            continue
        produced = _props(other.output_schema) - _props(other.input_schema) - envelope
        shared = sorted(produced & needs)
        if not shared:
            continue
        theirs = {(d.tool, d.relation) for d in other.dependencies or ()}
        if (other.name, Relation.REQUIRES) in declared or (
            t.name,
            Relation.PRODUCES_INPUT_FOR,
        ) in theirs:
            continue
        yield Finding(
            t.name,
            "P4",
            "dependencies",
            f"input {', '.join(shared)} is produced by {other.name}'s output, but neither "
            f"{t.name} declares ({other.name}, Requires) nor {other.name} declares "
            f"({t.name}, ProducesInputFor)",
        )


def lint(
    tools: Sequence[Tool | ToolPlus],
    *,
    theta: float = DEFAULT_THETA,
    min_entities: int = DEFAULT_MIN_ENTITIES,
) -> list[Finding]:
    """Check P1–P4 (paper §6.1–6.4) on every tool; one :class:`Finding` per violated rule, in
    tool order then principle order."""
    plus = [_plus(t) for t in tools]
    descriptors = [p for p, _ in plus]
    names = {p.name for p in descriptors}
    findings: list[Finding] = []
    for t, is_plus in plus:
        findings.extend(_check_p1(t, theta, min_entities))
        findings.extend(_check_p2(t, is_plus))
        findings.extend(_check_p3(t, names))
        findings.extend(_check_p4(t, descriptors, names))
    return findings
