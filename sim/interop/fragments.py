"""Tool descriptors → a scenario fragment (SPEC §1 YAML) that validates on its own.

A fragment is a complete minimal scenario: ``name``, ``protocols``, one ``TOOL_SERVER`` agent
per server (or SGD service) hosting its tools, and the ``tools`` section. It starts with the
``# yaml-language-server: $schema=...`` line and a header saying where it came from and what
is unknown. Nothing is invented silently (docs/interop.md §Decisions):

- A field the source does not carry (for a plain MCP tool: ``side_effects``,
  ``requires_approval``, ``failure_modes``, ``dependencies``) is still written explicitly,
  because the scenario needs a value, but as a *labelled guess*: a ``# unknown:`` comment above
  the tool says so, and the top-level extension ``x-mcp.tools.<name>.guessed`` records the
  guessed values. ``export mcp`` treats a field as unknown as long as it still equals its guess
  (so editing the value is how a user declares it).
- ``side_effects`` is guessed from the MCP hints *with the specification's defaults* (absent
  ``readOnlyHint`` = false, absent ``destructiveHint`` = true): ``readOnlyHint`` true → read;
  else ``destructiveHint`` true → delete; else write. That is the most cautious reading the
  hints allow, so the checks and P2 see the risk an MCP client must assume.
- MCP fields the scenario does not model (``title``, ``outputSchema``, ``execution``, ``icons``,
  other ``_meta`` keys) are kept verbatim under ``x-mcp.tools.<name>.mcp`` for ``export mcp``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from sim.calculus.lts import is_label_argument
from sim.calculus.mcp import (
    MCP_PLUS_META,
    Annotations,
    SideEffect,
    Tool,
    ToolPlus,
    ToolsListError,
    mcp_plus_key,
    tools_from_list,
)
from sim.calculus.phi import phi_plus
from sim.calculus.principles import FINDING, PRINCIPLES, lint
from sim.calculus.sgd import Service
from sim.interop.errors import InteropError
from sim.interop.plus_meta import Carried, carried, fragment_protocols, protocol_name
from sim.interop.withhold import withhold

__all__ = [
    "EXTENSION_KEY",
    "GUESSABLE",
    "Fragment",
    "ImportedTool",
    "LintSummary",
    "dump_yaml",
    "fragment_from_sgd",
    "fragment_from_tools_list",
    "guess_side_effects",
    "imported_tools",
    "lint_summary",
    "schema_line",
    "slug",
]

EXTENSION_KEY = "x-mcp"
"""Top-level scenario extension (``x-`` keys are ignored by the loader) holding what the
scenario model does not: per tool, the guessed fields and the verbatim MCP extras."""

GUESSABLE = ("side_effects", "requires_approval", "failure_modes", "dependencies")
"""MCP⁺ fields a fragment must give a value even when the source does not carry them."""

_MODELLED_KEYS = frozenset({"name", "description", "inputSchema", "annotations", "_meta"})
_ANNOTATION_KEYS = frozenset(
    {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
)
_SCHEMA_FILE = Path(__file__).resolve().parents[2] / "scenarios" / "protomesh.schema.json"


def slug(text: str) -> str:
    """A scenario name (``[a-z0-9-]+``) from ``text``: lower-cased, other runs become ``-``."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "imported"


def schema_line(out: str | Path | None) -> str:
    """The ``# yaml-language-server: $schema=...`` line: a path relative to ``out``'s folder
    when the repository's ``scenarios/protomesh.schema.json`` is there to point at; otherwise
    (stdout, or no checkout) ``./protomesh.schema.json``, right for a file saved in
    ``scenarios/`` like every shipped scenario."""
    target = "./protomesh.schema.json"
    if out is not None and _SCHEMA_FILE.is_file():
        try:
            rel = os.path.relpath(_SCHEMA_FILE, Path(out).resolve().parent)
        except ValueError:  # another drive (Windows)
            rel = None
        if rel is not None:
            target = rel if rel.startswith(".") else f"./{rel}"
    return f"# yaml-language-server: $schema={target.replace(os.sep, '/')}"


def guess_side_effects(annotations: Annotations | None) -> tuple[SideEffect, str]:
    """The most cautious side effect the MCP hints allow (absent hints take the spec defaults)
    and the reason, for the ``# unknown:`` comment."""
    ann = annotations or Annotations()
    ro = ann.effective("readOnlyHint")
    dest = ann.effective("destructiveHint")

    def show(hint: str, value: bool | None) -> str:
        return f"{hint}={str(value).lower()}" if value is not None else f"{hint} absent"

    if ro:
        return SideEffect.READ, show("readOnlyHint", ann.read_only)
    why = f"{show('readOnlyHint', ann.read_only)}, {show('destructiveHint', ann.destructive)}"
    return (SideEffect.DELETE if dest else SideEffect.WRITE), why


@dataclass(frozen=True, slots=True)
class ImportedTool:
    """One tool as a fragment holds it: the descriptor with every field decided, which fields
    are guesses (with why), and the MCP extras the scenario does not model."""

    descriptor: ToolPlus
    guessed: Mapping[str, Any] = field(default_factory=dict)
    reasons: Mapping[str, str] = field(default_factory=dict)
    extras: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    withheld: Mapping[str, Any] = field(default_factory=dict)
    carried: Carried = field(default_factory=Carried)

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.descriptor.name


def _decide(tool: ToolPlus, extras: Mapping[str, Any], notes: Sequence[str]) -> ImportedTool:
    """Fill every MCP⁺ field the source left undeclared with a labelled guess."""
    guessed: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    side = tool.side_effects
    if side is None:
        side, why = guess_side_effects(tool.annotations)
        guessed["side_effects"] = side.value
        reasons["side_effects"] = f"guessed {side.value!r} from the hints ({why})"
    approval = tool.requires_approval
    if approval is None:
        approval = False
        guessed["requires_approval"] = False
        reasons["requires_approval"] = "not declared; false is what an MCP server gives"
    failure_modes = tool.failure_modes
    if failure_modes is None:
        failure_modes = ()
        guessed["failure_modes"] = []
        reasons["failure_modes"] = "not declared (callers abort on any error)"
    dependencies = tool.dependencies
    if dependencies is None:
        dependencies = ()
        guessed["dependencies"] = []
        reasons["dependencies"] = "not declared"
    decided = ToolPlus(
        tool.name,
        tool.description,
        tool.input_schema,
        side,
        approval,
        failure_modes,
        tool.summary,
        dependencies,
        tool.annotations,
        None,  # the output schema travels in extras (the scenario has no field for it)
    )
    return ImportedTool(decided, guessed, reasons, extras, tuple(notes))


def imported_tools(data: Any, path: str = "$") -> tuple[ImportedTool, ...]:
    """The tools of a ``tools/list`` result, decided for a fragment. Raises
    :class:`InteropError` on a malformed result (naming the JSON path)."""
    try:
        parsed = tools_from_list(data, path)
    except ToolsListError as exc:
        raise InteropError(str(exc)) from None
    seen: set[str] = set()
    out: list[ImportedTool] = []
    for i, (entry, tool) in enumerate(zip(data["tools"], parsed, strict=True)):
        if tool.name in seen:
            raise InteropError(f"{path}.tools[{i}].name: duplicate tool name {tool.name!r}")
        if not is_label_argument(tool.name):  # the fragment would not load (rules/tools.py)
            raise InteropError(
                f"{path}.tools[{i}].name: tool name {tool.name!r} cannot name a scenario's "
                "tool: no commas, parentheses, double quotes or spaces (it appears in trace "
                "labels)"
            )
        seen.add(tool.name)
        extras: dict[str, Any] = {k: v for k, v in entry.items() if k not in _MODELLED_KEYS}
        notes: list[str] = []
        if "description" not in entry:
            extras["description"] = None  # absent, not empty: export leaves it out again
        raw_meta = entry.get("_meta") or {}
        read = mcp_plus_key(raw_meta)
        meta = {k: v for k, v in raw_meta.items() if k != read}
        if meta:
            extras["_meta"] = meta
        held = carried(tool.name, raw_meta.get(read), f"{path}.tools[{i}]._meta.{read}")
        if held.unknown:
            extras["mcp_plus"] = dict(held.unknown)
        ann = entry.get("annotations")
        if isinstance(ann, Mapping):
            unknown = {k: v for k, v in ann.items() if k not in _ANNOTATION_KEYS}
            if unknown:
                extras["annotations"] = unknown
                notes.append(f"annotation keys {sorted(unknown)} kept under {EXTENSION_KEY}")
        plus = tool if isinstance(tool, ToolPlus) else ToolPlus.from_tool(tool)
        out.append(replace(_decide(plus, extras, notes), carried=held))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class LintSummary:
    """P1–P4 on the tools as received: findings per principle, tools flagged, notes."""

    tools: int
    flagged: int
    findings: Mapping[str, int]
    notes: int = 0

    def line(self) -> str:
        """One line for the end of an import."""
        notes = f", {self.notes} note{'' if self.notes == 1 else 's'}" if self.notes else ""
        if not any(self.findings.values()):
            return f"lint: {self.tools} tools, no findings{notes}"
        parts = ", ".join(
            f"{p} {PRINCIPLES[p]}: {self.findings.get(p, 0)}" for p in sorted(PRINCIPLES)
        )
        total = sum(self.findings.values())
        return f"lint: {total} findings in {self.flagged} of {self.tools} tools ({parts}){notes}"


def lint_summary(tools: Sequence[Tool | ToolPlus]) -> LintSummary:
    """P1–P4 (:func:`sim.calculus.lint`) on ``tools`` as a source declares them."""
    items = lint(tools)
    findings = [f for f in items if f.severity == FINDING]
    counts = Counter(f.principle for f in findings)
    flagged = len({f.tool for f in findings if f.tool is not None})  # None: the whole list
    notes = len(items) - len(findings)
    return LintSummary(len(tools), flagged, {p: counts.get(p, 0) for p in PRINCIPLES}, notes)


@dataclass(frozen=True, slots=True)
class Fragment:
    """A scenario fragment: its YAML text and what the caller reports about it."""

    text: str
    name: str
    tools: int
    guessed: Mapping[str, int]
    lint: LintSummary
    notes: tuple[str, ...] = ()


def dump_yaml(value: Any) -> str:
    """YAML as fragments write it (keys in order, block style, 100 columns)."""
    return yaml.safe_dump(
        value, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100
    )


def _tool_entry(t: ImportedTool) -> dict[str, Any]:
    entry = t.descriptor.to_mapping()
    # the scenario's key order: name, description, summary, schema, ground truth, hints
    order = (
        "name",
        "description",
        "summary",
        "input_schema",
        "side_effects",
        "requires_approval",
        "annotations",
        "failure_modes",
        "dependencies",
    )
    return {k: entry[k] for k in order if k in entry} | dict(t.carried.simulation)


def _render(
    *,
    name: str,
    description: str,
    header: Sequence[str],
    protocols: Sequence[Any],
    servers: Sequence[tuple[str, Sequence[ImportedTool]]],
    out: str | Path | None,
    lint_of: LintSummary,
    notes: Sequence[str] = (),
    agents: Sequence[Mapping[str, Any]] | None = None,
    extensions: Sequence[tuple[str, str, Any]] = (),
) -> Fragment:
    """The fragment's text; ``agents``: the agent entries (default: a ``TOOL_SERVER`` per
    server); ``extensions``: further top-level ``(key, comment, value)`` blocks."""
    servers = withhold(servers)
    all_tools = [t for _, ts in servers for t in ts]
    guessed: Counter[str] = Counter()
    for t in all_tools:
        guessed.update(t.guessed.keys())
    lines = [schema_line(out)]
    lines += [f"# {h}" if h else "#" for h in header]
    if guessed:
        lines.append("#")
        lines.append(
            "# Unknown (the source does not carry them; written as labelled guesses, see the "
            f"`# unknown:` comments and {EXTENSION_KEY}):"
        )
        for fname in GUESSABLE:
            if guessed[fname]:
                lines.append(f"#   {fname}: {guessed[fname]} of {len(all_tools)} tools")
    lines.append(f"# {lint_of.line()}")
    top: dict[str, Any] = {"name": name}
    if description:
        top["description"] = description
    top["protocols"] = list(protocols)
    speaks = {protocol_name(p): 1.0 for p in protocols}
    top["agents"] = (
        [
            {
                "id": agent,
                "type": "TOOL_SERVER",
                "protocols": dict(speaks),
                "tools": [t.name for t in ts],
            }
            for agent, ts in servers
        ]
        if agents is None
        else [dict(a) for a in agents]
    )
    lines.append(dump_yaml(top).rstrip("\n"))
    lines.append("tools:")
    for t in all_tools:
        for fname in GUESSABLE:
            if fname in t.reasons:
                lines.append(f"# unknown: {t.name}: {fname}: {t.reasons[fname]}")
        for note in t.notes:
            lines.append(f"# note: {t.name}: {note}")
        lines.append(dump_yaml([_tool_entry(t)]).rstrip("\n"))
    ext: dict[str, Any] = {}
    for t in all_tools:
        item: dict[str, Any] = {}
        if t.guessed:
            item["guessed"] = dict(t.guessed)
        if t.withheld:
            item["withheld"] = dict(t.withheld)
        if t.extras:
            item["mcp"] = dict(t.extras)
        if item:
            ext[t.name] = item
    if ext:
        lines.append(
            f"# {EXTENSION_KEY}: what the scenario model does not hold, for `export mcp` "
            "(guessed fields; MCP fields kept verbatim)"
        )
        lines.append(dump_yaml({EXTENSION_KEY: {"tools": ext}}).rstrip("\n"))
    for key, comment, value in extensions:
        lines.append(f"# {key}: {comment}")
        lines.append(dump_yaml({key: value}).rstrip("\n"))
    text = "\n".join(lines) + "\n"
    return Fragment(text, name, len(all_tools), dict(guessed), lint_of, tuple(notes))


def fragment_from_tools_list(
    data: Any,
    *,
    name: str,
    agent: str,
    source: str,
    out: str | Path | None = None,
    description: str = "",
) -> Fragment:
    """A fragment for one MCP server from its ``tools/list`` result ``data`` (a saved file or
    a live listing). ``source`` says where it came from (header). Raises
    :class:`InteropError`."""
    tools = imported_tools(data)
    try:
        received = tools_from_list(data)
    except ToolsListError as exc:  # pragma: no cover - imported_tools parsed it already
        raise InteropError(str(exc)) from None
    n_plus = sum(isinstance(t, ToolPlus) for t in received)
    protocols = fragment_protocols([t.carried for t in tools], len(received) - n_plus, n_plus)
    header = [
        f"Scenario fragment imported by protomesh from {source}.",
        f"{len(tools)} tools, {n_plus} with MCP+ metadata "
        f'(_meta["{MCP_PLUS_META}"]); the rest plain MCP.',
        "Merge `agents` and `tools` into a scenario (link the agent), or run it as it is.",
    ]
    notes = [f"{t.name}: {n}" for t in tools for n in t.notes]
    return _render(
        name=slug(name),
        description=description,
        header=header,
        protocols=protocols,
        servers=[(agent, tools)],
        out=out,
        lint_of=lint_summary(received),
        notes=notes,
    )


def fragment_from_sgd(
    services: Sequence[Service], *, name: str, source: str, out: str | Path | None = None
) -> Fragment:
    """A fragment for SGD services through Φ⁺ (paper §7.2): one MCP⁺ tool server per service
    (agent id = service name), tools ``Service__Intent``; a transactional intent becomes a write
    tool requiring approval. Result slots (Φ⁺'s ``outputSchema``) go to ``x-mcp``."""
    servers: list[tuple[str, list[ImportedTool]]] = []
    received: list[ToolPlus] = []
    for svc in services:
        tools: list[ImportedTool] = []
        for intent in svc.intents:
            tp = phi_plus(intent, svc)
            received.append(tp)
            extras: dict[str, Any] = {}
            if tp.output_schema is not None:
                extras["outputSchema"] = dict(tp.output_schema)
            tools.append(_decide(tp, extras, ()))
        servers.append((svc.name, tools))
    n = len(received)
    n_tx = sum(t.requires_approval is True for t in received)
    header = [
        f"Scenario fragment imported by protomesh from SGD services in {source},",
        f"through Φ⁺ (paper §7.2): {len(services)} services, {n} intents → MCP+ tools "
        f"Service__Intent; {n_tx} transactional → side_effects write, requires_approval.",
        "Every MCP+ field is known; result slots (outputSchema) are kept under x-mcp.",
        "Service descriptions have no place in a tool descriptor (see each agent's id).",
    ]
    return _render(
        name=slug(name),
        description="",
        header=header,
        protocols=["MCP+"],
        servers=servers,
        out=out,
        lint_of=lint_summary(received),
    )
