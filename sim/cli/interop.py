"""Commands for real protocol artifacts (SPEC §7, issue 7): ``import mcp|tools|sgd``,
``export mcp``, ``serve mcp``. See docs/interop.md."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sim.cli.a2a import add_export_a2a, add_import_a2a, add_serve_a2a
from sim.cli.artifacts import (
    add_simulation_options,
    load_with_extension,
    report_fragment,
    speed_of,
    write_output,
)
from sim.cli.console import EXIT_OK, BadInput, guarded, positive_number, read_json
from sim.cli.import_mcp import add_import_mcp
from sim.cli.otel import add_export_otel
from sim.interop.elicitation import ELICITATION_TIMEOUT
from sim.interop.errors import InteropError


def register(sub: Any) -> None:
    """Add this group's commands to ``sub`` (an argparse subparsers action)."""
    p = sub.add_parser(
        "import",
        help="a scenario fragment from a live MCP server, a tools/list result or SGD services",
        description="Write a scenario fragment (a complete minimal scenario: a TOOL_SERVER agent "
        "with its tools) to stdout or --out; what the source does not carry is marked unknown; "
        "a lint summary (P1-P4) goes to stderr. Exit 0, or 2 on bad input.",
    )
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")

    add_import_mcp(kinds)
    add_import_a2a(kinds)

    k = kinds.add_parser(
        "tools",
        help="from a saved tools/list result",
        description="A fragment from a saved MCP tools/list result (JSON).",
    )
    k.add_argument("tools", metavar="TOOLS.json")
    k.add_argument("--out", metavar="FILE", help="write the fragment here (default: stdout)")
    k.add_argument("--name", metavar="NAME", help="scenario name (default: the file's stem)")
    k.set_defaults(handler=import_tools_command)

    k = kinds.add_parser(
        "sgd",
        help="from SGD services (schema.json) through Φ⁺",
        description="A fragment from SGD services through Φ⁺ (paper §7.2): one MCP+ tool server "
        "per service; transactional intents become write tools requiring approval.",
    )
    k.add_argument("schema", metavar="SCHEMA.json")
    k.add_argument("--out", metavar="FILE", help="write the fragment here (default: stdout)")
    k.add_argument("--name", metavar="NAME", help="scenario name (default: sgd-<folder>)")
    k.set_defaults(handler=import_sgd_command)

    p = sub.add_parser(
        "export",
        help="a scenario's tools as a real MCP tools/list result, its agents as A2A cards, "
        "or a trace as OTLP spans",
        description="Export a scenario's tools as an artifact of a real protocol.",
    )
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    k = kinds.add_parser(
        "mcp",
        help="tools/list result with MCP+ metadata",
        description="The scenario's tools as a spec-valid tools/list result: MCP+ metadata under "
        '_meta["protomesh/mcp-plus"], annotations derived from side effects. Exit 0, or 2.',
    )
    k.add_argument("file", metavar="FILE", help="scenario YAML")
    k.add_argument("--out", metavar="FILE", help="write the JSON here (default: stdout)")
    k.add_argument(
        "--tool", action="append", default=[], metavar="NAME", help="only this tool (repeatable)"
    )
    k.add_argument(
        "--revision",
        choices=("2025-11-25", "2026-07-28"),
        default="2025-11-25",
        help="the MCP revision whose ListToolsResult is written (2026-07-28 adds resultType, "
        "ttlMs, cacheScope; default 2025-11-25)",
    )
    k.set_defaults(handler=export_mcp_command)
    add_export_a2a(kinds)
    add_export_otel(kinds)

    p = sub.add_parser(
        "serve",
        help="a real MCP server (stdio or Streamable HTTP) exposing a scenario's tools with "
        "simulated behaviour",
        description="Serve a scenario as a real protocol endpoint.",
    )
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    k = kinds.add_parser(
        "mcp",
        help="an MCP server over stdio or Streamable HTTP",
        description="Serve the scenario's tools over MCP (stdio, or Streamable HTTP with --http; "
        "official SDK) with their MCP+ "
        "metadata; service times scaled to wall-clock (--speed), errors drawn from each tool's "
        "`errors` (--seed) and returned as isError results; protocol revisions 2025-11-25 and "
        "2026-07-28; a tool whose descriptor requires approval asks the user by elicitation "
        "first. Runs until the client closes stdin (stdio) or a SIGINT/SIGTERM (HTTP). Exit 0, "
        "or 2 on bad input.",
    )
    k.add_argument("file", metavar="FILE", help="scenario YAML")
    add_simulation_options(k)
    k.add_argument(
        "--arg-errors",
        choices=("result", "protocol"),
        default="result",
        help="a bad argument as an isError result (default, as MCP 2025-11-25 asks) or as a "
        "JSON-RPC error -32602 (protocol)",
    )
    k.add_argument(
        "--tool", action="append", default=[], metavar="NAME", help="only this tool (repeatable)"
    )
    k.add_argument(
        "--page-size",
        type=_page_size,
        default=None,
        metavar="N",
        help="serve tools/list in pages of N tools linked by nextCursor (default: one page)",
    )
    k.add_argument(
        "--max-frame",
        type=_page_size,
        default=None,
        metavar="BYTES",
        help="longest line (one JSON-RPC message) accepted; a longer one is answered with "
        "error -32600 and skipped; over HTTP, the longest request body (default 4 MiB)",
    )
    k.add_argument(
        "--http",
        metavar="HOST:PORT",
        default=None,
        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0: any free "
        "port; the URL is printed on stderr); runs until SIGINT or SIGTERM",
    )
    k.add_argument(
        "--trace",
        metavar="FILE",
        default=None,
        help="record the live session as a protomesh trace (docs/reference/trace.md), with "
        "detail.wall and each call's traceparent (check it with: check FILE --scenario "
        "SCENARIO)",
    )
    k.add_argument(
        "--elicitation-timeout",
        type=positive_number,
        default=ELICITATION_TIMEOUT,
        metavar="S",
        help="seconds a 2025-11-25 approval question waits for the user's answer; then the "
        f"call is refused (deny reason timeout; default {ELICITATION_TIMEOUT:g})",
    )
    k.set_defaults(handler=serve_mcp_command)
    add_serve_a2a(kinds)


@guarded(InteropError)
def import_tools_command(args: argparse.Namespace) -> int:
    """``import tools TOOLS.json [--out FILE]``."""
    from sim.interop.fragments import fragment_from_tools_list

    data = read_json(args.tools)
    stem = Path(args.tools).stem
    try:
        fragment = fragment_from_tools_list(
            data,
            name=args.name or stem,
            agent=stem,
            source=f"the saved tools/list result {Path(args.tools).name}",
            out=args.out,
        )
    except InteropError as exc:
        raise BadInput(f"{args.tools}: {exc}") from None
    write_output(fragment.text, args.out)
    report_fragment(fragment, args.out)
    return EXIT_OK


@guarded(InteropError)
def import_sgd_command(args: argparse.Namespace) -> int:
    """``import sgd SCHEMA.json [--out FILE]``."""
    from sim.calculus import SchemaError
    from sim.calculus.sgd import services_from_json
    from sim.interop.fragments import fragment_from_sgd

    data = read_json(args.schema)
    try:
        services = services_from_json(data)
    except SchemaError as exc:
        raise BadInput(f"{args.schema}: {exc}") from None
    path = Path(args.schema)
    default = f"sgd-{path.resolve().parent.name}" if path.stem == "schema" else f"sgd-{path.stem}"
    fragment = fragment_from_sgd(
        services, name=args.name or default, source=path.name, out=args.out
    )
    write_output(fragment.text, args.out)
    report_fragment(fragment, args.out)
    marks = _unknown_marks(data)
    if marks:
        print(
            "note: the input marks fields as unknown (a Φ⁻¹ result); Φ⁺ gives them its own "
            "defaults (empty description, abort on errors, dependencies from the slots): "
            + "; ".join(marks),
            file=sys.stderr,
        )
    return EXIT_OK


def _unknown_marks(data: Any) -> list[str]:
    """``service: fields`` and ``service.intent: fields`` for every ``unknown`` list that
    ``unphi`` wrote into an SGD schema."""
    marks: list[str] = []
    for service in data if isinstance(data, list) else []:
        if not isinstance(service, dict):
            continue
        name = str(service.get("service_name"))
        if service.get("unknown"):
            marks.append(f"{name}: {', '.join(map(str, service['unknown']))}")
        for intent in service.get("intents") or []:
            if isinstance(intent, dict) and intent.get("unknown"):
                fields = ", ".join(map(str, intent["unknown"]))
                marks.append(f"{name}.{intent.get('name')}: {fields}")
    return marks


@guarded(InteropError)
def export_mcp_command(args: argparse.Namespace) -> int:
    """``export mcp FILE [--out FILE] [--tool NAME]... [--revision R]``."""
    from sim.interop.revision import list_result, revision_entry
    from sim.interop.tools_list import scenario_tools_list

    scenario, ext = load_with_extension(args.file)
    try:
        export = scenario_tools_list(scenario, ext, args.tool)
    except InteropError as exc:
        raise BadInput(f"{args.file}: {exc}") from None
    notes = list(export.notes)
    tools = []
    for entry in export.data["tools"]:
        shaped, why = revision_entry(entry, args.revision)
        tools.append(shaped)
        notes.extend(why)
    data = list_result(tools, args.revision)
    write_output(json.dumps(data, indent=2, ensure_ascii=False) + "\n", args.out)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    unknown = sum(len(v) for v in export.unknown.values())
    print(
        f"export: {len(export.data['tools'])} tools"
        + (
            f"; {unknown} fields left unknown (still their import guesses) in "
            f"{len(export.unknown)} tools"
            if unknown
            else ""
        ),
        file=sys.stderr,
    )
    return EXIT_OK


def _page_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


@guarded(InteropError)
def serve_mcp_command(args: argparse.Namespace) -> int:
    """``serve mcp FILE [--speed instant|realtime|X] [--seed S] [--arg-errors result|protocol]
    [--http HOST:PORT] [--trace FILE] ...``."""
    import signal

    from sim.longlived import long_lived

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a server just ends on SIGTERM
    # the SDK's modules, the scenario and the server live to the end: no collection scans
    # them while they are made (a sixth of the start's CPU)
    with long_lived():
        from sim.interop.server import build_server

        speed = speed_of(args.speed)
        address = None
        if args.http is not None:
            from sim.interop.streamable import parse_address

            try:
                address = parse_address(args.http)
            except InteropError as exc:
                raise BadInput(str(exc)) from None
        scenario, ext = load_with_extension(args.file)
        seed = scenario.seed if args.seed is None else args.seed
        trace = None
        if args.trace is not None:
            from sim.interop.session_trace import LiveTrace

            try:
                trace = LiveTrace(args.trace, wall=True)
            except InteropError as exc:
                raise BadInput(str(exc)) from None
        try:
            server, sim = build_server(
                scenario,
                ext,
                speed=speed,
                seed=seed,
                arg_errors=args.arg_errors,
                tools=args.tool,
                page_size=args.page_size,
                trace=trace,
                log=lambda line: print(f"serve: {line}", file=sys.stderr, flush=True),
                elicitation_timeout=args.elicitation_timeout,
                stop=_stopper(args.http is None),
            )
        except InteropError as exc:
            raise BadInput(f"{args.file}: {exc}") from None
    try:
        code = _serve(server, sim, scenario, args, address, f"(speed {args.speed}, seed {seed})")
    finally:
        if trace is not None:
            trace.close()
    if trace is not None and trace.failed is not None:
        raise BadInput(f"serve stopped: {trace.failed}")
    return code


def _stopper(stdio: bool) -> Any:
    """How ``serve mcp`` ends once its trace refused a write (every call since is answered
    -32603 naming the refusal; the command then exits 2): over HTTP it stops itself
    (SIGTERM, uvicorn's graceful stop) a quarter of a second after that answer went out;
    over stdio the session ends when its client closes stdin, as it always does."""
    import os
    import signal
    import threading

    def stop() -> None:
        if not stdio:
            threading.Timer(0.25, os.kill, (os.getpid(), signal.SIGTERM)).start()

    return stop


def _serve(
    server: Any, sim: Any, scenario: Any, args: argparse.Namespace, address: Any, where: str
) -> int:
    """Run ``server`` on stdio or, with ``address``, over Streamable HTTP."""
    from sim.interop.server import run_stdio

    for note in sim.notes:
        print(f"note: {note}", file=sys.stderr)
    what = f"{len(sim.entries)} tools of {scenario.name!r}"
    if address is None:
        print(f"serve: {what} over MCP stdio {where}", file=sys.stderr)
        run_stdio(server, max_frame=args.max_frame)
        return EXIT_OK
    from sim.interop.streamable import is_loopback, serve_http

    host, port = address
    if not is_loopback(host):
        print(
            f"note: {host} is not a loopback address: anyone who reaches it can call the "
            "tools (no authorisation, no DNS-rebinding check)",
            file=sys.stderr,
        )

    def ready(url: str) -> None:
        print(f"serve: {what} over MCP Streamable HTTP at {url} {where}", file=sys.stderr)
        sys.stderr.flush()

    try:
        serve_http(server, host, port, ready=ready, max_body=args.max_frame)
    except InteropError as exc:
        raise BadInput(str(exc)) from None
    return EXIT_OK
