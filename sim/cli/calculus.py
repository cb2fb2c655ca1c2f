"""Commands of the formal calculus: lts, bisim, phi, unphi, lint (SPEC §7)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.calculus.lts import AUT_DIALECTS
from sim.calculus.principles import DEFAULT_MIN_ENTITIES, DEFAULT_THETA
from sim.cli.console import EXIT_NEGATIVE, EXIT_OK, BadInput, guarded, read_json

if TYPE_CHECKING:
    from sim.calculus.mcp.dialects import Dialect
    from sim.calculus.sgd import Service
    from sim.calculus.unphi import ServiceUnphi


def register(sub: Any) -> None:
    """Add this group's commands to ``sub`` (an argparse subparsers action)."""
    p = sub.add_parser(
        "lts",
        help="the LTS of a scenario's tool as the engine uses it",
        description="Print the LTS of one tool invocation (paper §3.3, §6; docs/calculus.md) as a "
        "caller speaking --protocol sees it (docs/reference/routing.md): its approval gate "
        "follows that view; "
        "it is in the dialect of the caller's protocol (docs/scenario.md#protocols): sgd "
        "(SGD's: invoke, collect per required input, no validation τ), a2a (call, "
        "collect), a plug-in's, else mcp (call, τ validate). "
        "Error branches: declared failure modes, the tool's `errors`, and ServiceDown (a "
        "timeout). Exit 0, or 2 on bad input.",
    )
    p.add_argument("file", metavar="FILE", help="scenario YAML")
    p.add_argument("--tool", required=True, metavar="NAME", help="tool name")
    p.add_argument(
        "--protocol", default="MCP+", metavar="P", help="the caller's protocol (default MCP+)"
    )
    p.add_argument("--aut", action="store_true", help="Aldebaran .aut output")
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"tool", "protocol", "fields", "dialect", "approval", "approval_reason", '
        '"states", "initial", "transitions": [{"from", "label", "to"}]}',
    )
    p.set_defaults(handler=lts_command)

    p = sub.add_parser(
        "bisim",
        help="LTS equivalence of two .aut files",
        description="Decide weak (default) or strong bisimilarity of two Aldebaran .aut files "
        "(paper §4.4). Labels follow --aut-dialect: mcrl2 (default) reads only `tau` as "
        "internal, so `i` is a visible action; cadp reads `i` as internal (τ) too. In both, a "
        'multi-action "a|b" is a multiset: "a|b" and "b|a" are one label. Exit 0 equivalent, '
        "1 not (with a distinguishing trace), 2 bad input.",
    )
    p.add_argument("a", metavar="A.aut")
    p.add_argument("b", metavar="B.aut")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--weak", dest="weak", action="store_true", default=True)
    mode.add_argument("--strong", dest="weak", action="store_false")
    p.add_argument(
        "--aut-dialect",
        choices=AUT_DIALECTS,
        default="mcrl2",
        help="whose .aut conventions: mcrl2 (default; only tau is internal, i is visible) or "
        "cadp (i is internal)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"equivalent", "weak", "distinction": null or {"kind", "trace", "text"}}',
    )
    p.set_defaults(handler=bisim_command)

    p = sub.add_parser(
        "phi",
        help="SGD services to an MCP tools/list result (Φ, Φ⁺)",
        description="Map an SGD schema.json to a tools/list result: Φ (paper §4.1), or Φ⁺ "
        '(§7.2) with MCP+ metadata under _meta["protomesh/mcp-plus"]. Exit 0, or 2.',
    )
    p.add_argument("schema", metavar="SCHEMA.json")
    p.add_argument("--plus", action="store_true", help="Φ⁺: add the MCP+ metadata")
    p.add_argument(
        "--annotations",
        action="store_true",
        help="add MCP annotations (transactional → readOnlyHint false, ...)",
    )
    p.set_defaults(handler=phi_command)

    p = sub.add_parser(
        "unphi",
        help="an MCP tools/list result back to SGD services (Φ⁻¹, (Φ⁺)⁻¹)",
        description="Map a tools/list result to SGD services in the schema.json shape (paper "
        "§5.3, §7.2). What no field carries is null with an 'unknown' list, and reported "
        "on stderr. Exit 0, or 2.",
    )
    p.add_argument("tools", metavar="TOOLS.json")
    p.set_defaults(handler=unphi_command)

    p = sub.add_parser(
        "lint",
        help="the four principles P1-P4 on a tools/list result",
        description="Check P1-P4 (paper §6) on every tool; one line per finding or note. "
        "Exit 0 clean or notes only, 1 findings, 2 bad input.",
    )
    p.add_argument("tools", metavar="TOOLS.json")
    p.add_argument(
        "--theta",
        type=float,
        default=DEFAULT_THETA,
        metavar="X",
        help=f"P1 threshold on sem_density (default {DEFAULT_THETA})",
    )
    p.add_argument(
        "--min-entities",
        type=int,
        default=DEFAULT_MIN_ENTITIES,
        metavar="N",
        help=f"P1 minimum entities in a tool description (default {DEFAULT_MIN_ENTITIES})",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per finding or note (JSON Lines) on stdout, the summary on stderr",
    )
    p.set_defaults(handler=lint_command)


def _read_tools(path: str) -> tuple[Any, ...]:
    from sim.calculus import ToolsListError, tools_from_list

    try:
        return tools_from_list(read_json(path))
    except ToolsListError as exc:
        raise BadInput(f"{path}: {exc}") from None


def _read_services(path: str) -> tuple[Service, ...]:
    from sim.calculus import SchemaError
    from sim.calculus.sgd import services_from_json

    try:
        return services_from_json(read_json(path))
    except SchemaError as exc:
        raise BadInput(f"{path}: {exc}") from None


@guarded()
def lts_command(args: argparse.Namespace) -> int:
    """``lts FILE --tool NAME [--protocol P] [--aut]``."""
    from sim.admission import load_scenario
    from sim.calculus import (
        ToolsListError,
        caller_view,
        tool_plus_from_mapping,
        write_aut,
    )
    from sim.calculus.mcp import SERVICE_DOWN
    from sim.scenario import ScenarioError
    from sim.scenario.model.dialects import dialect_of

    if not Path(args.file).is_file():
        raise BadInput(f"{args.file}: no such file")
    try:
        scenario = load_scenario(args.file)
    except ScenarioError as exc:
        raise BadInput(str(exc).strip().replace("\n", "; ")) from None
    specs = {t.name: t for t in scenario.tools}
    spec = specs.get(args.tool)
    if spec is None:
        known = ", ".join(sorted(specs)) or "none"
        raise BadInput(f"{args.file}: no tool {args.tool!r} (tools: {known})")
    fields = _protocol_fields(scenario, args.protocol, args.file)
    policy = _value(getattr(getattr(scenario, "approval", None), "mcp_policy", "hints"))
    data = spec.model_dump(by_alias=True, exclude_none=True)
    try:
        truth = tool_plus_from_mapping(data, f"tools[{args.tool}]")
    except ToolsListError as exc:
        raise BadInput(f"{args.file}: {exc}") from None
    view = caller_view(truth, fields, str(policy))
    errors = [str(e) for e in data.get("errors", {})]
    dialect: Dialect = scenario.dialects().get(args.protocol) or dialect_of(args.protocol)
    lts = dialect.lts(view, error_types=(*errors, SERVICE_DOWN))
    if args.aut:
        sys.stdout.write(write_aut(lts))
        return EXIT_OK
    if args.json:
        shown = {
            "tool": truth.name,
            "protocol": args.protocol,
            "fields": sorted(fields),
            "dialect": dialect.name,
            "approval": bool(view.approval),
            "approval_reason": view.approval_reason,
            "states": lts.n_states,
            "initial": lts.name(0),
            "transitions": [
                {"from": lts.name(t.src), "label": t.label, "to": lts.name(t.dst)}
                for t in lts.transitions
            ],
        }
        print(json.dumps(shown))
        return EXIT_OK
    print(f"tool {truth.name} seen through {args.protocol}: fields {', '.join(sorted(fields))}")
    print(f"dialect: {dialect.name}, {'/'.join(dialect.steps())}")
    print(f"approval gate: {'yes' if view.approval else 'no'} ({view.approval_reason})")
    print(f"{lts.n_states} states, {len(lts.transitions)} transitions, initial {lts.name(0)}")
    for t in lts.transitions:
        print(f"  {lts.name(t.src)} --{t.label}--> {lts.name(t.dst)}")
    return EXIT_OK


def _value(x: Any) -> Any:
    return getattr(x, "value", x)


def _protocol_fields(scenario: Any, protocol: str, path: str) -> frozenset[str]:
    from sim.calculus import PROTOCOL_FIELDS

    for entry in getattr(scenario, "protocols", None) or ():
        carried = entry.carries() if getattr(entry, "name", entry) == protocol else None
        if carried is not None:
            return frozenset(str(f) for f in carried)
    if protocol in PROTOCOL_FIELDS:
        return PROTOCOL_FIELDS[protocol]
    raise BadInput(f"{path}: unknown protocol {protocol!r} (declare its fields in the scenario)")


@guarded()
def bisim_command(args: argparse.Namespace) -> int:
    """``bisim A.aut B.aut [--weak | --strong]``."""
    from sim.calculus import AutFormatError, bisimilar, read_aut

    ltss = []
    for path in (args.a, args.b):
        try:
            ltss.append(read_aut(Path(path), args.aut_dialect))
        except FileNotFoundError:
            raise BadInput(f"{path}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"{path}: cannot read: {exc}") from None
        except AutFormatError as exc:
            raise BadInput(f"{path}: {exc}") from None
    result = bisimilar(ltss[0], ltss[1], weak=args.weak)
    kind = "weakly" if args.weak else "strongly"
    if args.json:
        d = result.distinction
        print(
            json.dumps(
                {
                    "equivalent": result.equivalent,
                    "weak": args.weak,
                    "distinction": None
                    if d is None
                    else {
                        "kind": d.kind,
                        "trace": list(d.trace),
                        "text": d.describe().replace("left", "A").replace("right", "B"),
                    },
                }
            )
        )
        return EXIT_OK if result.equivalent else EXIT_NEGATIVE
    if result.equivalent:
        print(f"equivalent ({kind} bisimilar)")
        return EXIT_OK
    assert result.distinction is not None
    print(f"not equivalent (not {kind} bisimilar)")
    distinction = result.distinction
    if distinction.kind == "trace":
        print("distinguishing trace: " + " ".join(distinction.trace))
    print(distinction.describe().replace("left", "A").replace("right", "B"))
    return EXIT_NEGATIVE


@guarded()
def phi_command(args: argparse.Namespace) -> int:
    """``phi SCHEMA.json [--plus] [--annotations]``."""
    from sim.calculus import phi_services, tools_to_list

    services = _read_services(args.schema)
    tools = phi_services(services, plus=args.plus, annotations=args.annotations)
    json.dump(tools_to_list(tools), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return EXIT_OK


def _unknown(x: Any) -> Any:
    from sim.calculus.unphi import Unknown

    return None if isinstance(x, Unknown) else x


def _service_json(s: ServiceUnphi) -> dict[str, Any]:
    slots: dict[str, Any] = {}
    intents: list[dict[str, Any]] = []
    for u in s.intents:
        for sl in (*u.required, *u.optional, *u.result_slots):
            slots.setdefault(
                sl.name,
                {
                    "name": sl.name,
                    "description": sl.description,
                    "is_categorical": sl.is_categorical,
                    "possible_values": list(sl.possible_values),
                },
            )
        defaults = dict(u.defaults)
        entry: dict[str, Any] = {
            "name": u.name,
            "description": u.description,
            "is_transactional": _unknown(u.transactional),
            "required_slots": [sl.name for sl in u.required],
            "optional_slots": {sl.name: defaults.get(sl.name, "dontcare") for sl in u.optional},
            "result_slots": [sl.name for sl in u.result_slots],
        }
        unknown = [f for f in u.unknown if f != "service"]
        if unknown:
            entry["unknown"] = unknown
        if u.provenance:
            entry["recovered_from"] = dict(u.provenance)
        intents.append(entry)
    return {
        "service_name": s.name,
        "description": None,
        "unknown": ["description"],
        "slots": list(slots.values()),
        "intents": intents,
    }


@guarded()
def unphi_command(args: argparse.Namespace) -> int:
    """``unphi TOOLS.json``."""
    from sim.calculus import unphi_services

    tools = _read_tools(args.tools)
    services = unphi_services(tools, default_service=Path(args.tools).stem)
    json.dump([_service_json(s) for s in services], sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    counts: Counter[str] = Counter()
    n = 0
    for s in services:
        for u in s.intents:
            n += 1
            counts.update(f for f in u.unknown if f != "service")
            for note in u.notes:
                print(f"note: {s.name}.{u.name}: {note}", file=sys.stderr)
    print(
        f"unphi: {n} tools → {len(services)} services; service descriptions unknown; "
        + (
            ", ".join(f"{f} unknown for {c}" for f, c in sorted(counts.items()))
            if counts
            else "every intent field recovered"
        ),
        file=sys.stderr,
    )
    return EXIT_OK


@guarded()
def lint_command(args: argparse.Namespace) -> int:
    """``lint TOOLS.json [--theta X] [--min-entities N] [--json]``: exit 1 with a finding,
    0 with notes alone."""
    from sim.calculus import lint
    from sim.calculus.principles import NOTE

    if not 0.0 <= args.theta <= 1.0:
        raise BadInput(f"--theta must be in [0, 1], got {args.theta}")
    tools = _read_tools(args.tools)
    items = lint(tools, theta=args.theta, min_entities=args.min_entities)
    findings = [f for f in items if f.severity != NOTE]
    notes = len(items) - len(findings)
    for f in items:
        print(json.dumps(f.to_json(), ensure_ascii=False) if args.json else f)
    and_notes = f", {notes} note{'' if notes == 1 else 's'}" if notes else ""
    if findings:
        by_principle = Counter(f.principle_name for f in findings)
        flagged = len({f.tool for f in findings if f.tool is not None})
        on_list = sum(f.tool is None for f in findings)
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(by_principle.items()))
        whole = f", {on_list} on the whole list" if on_list else ""
        summary = (
            f"{len(findings)} findings in {flagged} of {len(tools)} tools{whole} ({detail})"
            f"{and_notes}"
        )
        print(summary, file=sys.stderr if args.json else sys.stdout)
        return EXIT_NEGATIVE
    summary = f"clean: {len(tools)} tools, no findings{and_notes}"
    print(summary, file=sys.stderr if args.json else sys.stdout)
    return EXIT_OK
