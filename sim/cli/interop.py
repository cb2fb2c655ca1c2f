"""Commands for real protocol artifacts (SPEC §7, issue 7): ``import mcp|tools|sgd``,
``export mcp``, ``serve mcp``. See docs/interop.md."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from sim.cli.console import EXIT_OK, BadInput, guarded, read_json
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

    k = kinds.add_parser(
        "mcp",
        help="from a live MCP server (Streamable HTTP URL, or a stdio command)",
        description="Reach a live MCP server through the official SDK's client: `import mcp URL` "
        "over Streamable HTTP, `import mcp -- COMMAND ARGS...` over stdio (the server is started "
        "and stopped). Agree on a protocol revision (--revision), page through tools/list, keep "
        "every entry as sent. A stdio server gets only the SDK's default environment (HOME, "
        "LOGNAME, PATH, SHELL, TERM, USER) unless --inherit-env, plus each --env. Options go "
        "before the URL or the --.",
    )
    k.add_argument("--out", metavar="FILE", help="write the fragment here (default: stdout)")
    k.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds for start, handshake and listing together (default 30)",
    )
    k.add_argument("--name", metavar="NAME", help="scenario name (default: the server's name)")
    k.add_argument(
        "--revision",
        choices=("auto", "2025-11-25", "2026-07-28"),
        default="auto",
        help="protocol revision: auto probes server/discover (2026-07-28) and falls back to the "
        "2025-11-25 initialize handshake (default); a date speaks only that revision",
    )
    k.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="HTTP header on every request, e.g. Authorization='Bearer ...' (repeatable; URL "
        "only; values are never printed)",
    )
    k.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment variable for the stdio server (repeatable)",
    )
    k.add_argument(
        "--inherit-env",
        action="store_true",
        help="give the stdio server all of protomesh's environment, not only the SDK's default",
    )
    k.add_argument(
        "server",
        nargs=argparse.REMAINDER,
        metavar="URL | -- COMMAND ARGS",
        help="the server's MCP endpoint (http:// or https://), or its command after --",
    )
    k.set_defaults(handler=import_mcp_command)

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
        help="a scenario's tools as a real MCP tools/list result",
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
    k.set_defaults(handler=export_mcp_command)

    p = sub.add_parser(
        "serve",
        help="a real MCP server (stdio) exposing a scenario's tools with simulated behaviour",
        description="Serve a scenario as a real protocol endpoint.",
    )
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    k = kinds.add_parser(
        "mcp",
        help="an MCP server over stdio",
        description="Serve the scenario's tools over MCP (stdio, official SDK) with their MCP+ "
        "metadata; service times scaled to wall-clock (--speed), errors drawn from each tool's "
        "`errors` (--seed) and returned as isError results; a bad argument is a JSON-RPC error "
        "-32602. Runs until the client closes stdin. Exit 0, or 2 on bad input.",
    )
    k.add_argument("file", metavar="FILE", help="scenario YAML")
    k.add_argument(
        "--speed",
        default="instant",
        metavar="instant|realtime|X",
        help="wall-clock sleep = service time / X (realtime = 1; default instant: no sleep)",
    )
    k.add_argument("--seed", type=int, default=None, metavar="S", help="default: the scenario's")
    k.add_argument(
        "--arg-errors",
        choices=("error", "result"),
        default="error",
        help="a bad argument as a JSON-RPC error -32602 (default) or an isError result",
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
        "error -32600 and skipped (default 4 MiB)",
    )
    k.set_defaults(handler=serve_mcp_command)


def _write(text: str, out: str | None) -> None:
    if out is None:
        sys.stdout.write(text)
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{out}: cannot write: {exc}") from None


def _report(fragment: Any, out: str | None) -> None:
    where = out if out is not None else "stdout"
    guessed = ", ".join(f"{k} for {v}" for k, v in fragment.guessed.items() if v)
    print(
        f"import: scenario {fragment.name!r}, {fragment.tools} tools → {where}"
        + (f"; unknown (labelled guesses): {guessed}" if guessed else "; every field known"),
        file=sys.stderr,
    )
    for note in fragment.notes:
        print(f"note: {note}", file=sys.stderr)
    print(fragment.lint.line(), file=sys.stderr)


def _pairs(values: list[str], option: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a mapping; :class:`BadInput` naming the bad one (its value
    is not shown: it may be a secret)."""
    out: dict[str, str] = {}
    for text in values:
        name, sep, value = text.partition("=")
        name = name.strip()
        if not sep or not name:
            shown = name or text.partition("=")[0]
            raise BadInput(f"{option} {shown!r}: expected NAME=VALUE")
        if option == "--header" and not _HEADER_NAME.fullmatch(name):
            raise BadInput(f"--header {name!r}: not an HTTP header name")
        if any(c in name + value for c in "\r\n\0"):
            raise BadInput(f"{option} {name!r}: holds a line break or a NUL byte")
        out[name] = value
    return out


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _endpoint(args: argparse.Namespace) -> Any:
    """The server the options name: a URL (HTTP) or a command line (stdio)."""
    from sim.interop.client import HttpServer, StdioServer

    rest = list(args.server)
    dashed = bool(rest) and rest[0] == "--"
    if dashed:
        rest = rest[1:]
    if not rest:
        raise BadInput(
            "import mcp: no server (usage: import mcp URL, or import mcp -- COMMAND ARGS...)"
        )
    headers = _pairs(args.header, "--header")
    env = _pairs(args.env, "--env")
    if len(rest) == 1 and re.match(r"(?i)https?://", rest[0]):
        if env or args.inherit_env:
            raise BadInput("--env and --inherit-env are for a stdio server (-- COMMAND ARGS)")
        return HttpServer(rest[0], headers)
    if not dashed and re.match(r"(?i)[a-z][a-z0-9+.-]*://", rest[0]):
        raise BadInput(f"{rest[0]}: only http:// and https:// URLs are served over HTTP")
    if headers:
        raise BadInput("--header is for a Streamable HTTP server (import mcp URL)")
    return StdioServer(tuple(rest), env, args.inherit_env)


@guarded(InteropError)
def import_mcp_command(args: argparse.Namespace) -> int:
    """``import mcp [options] URL`` or ``import mcp [options] -- COMMAND ARGS...``."""
    from sim.interop.client import HttpServer, fetch_tools
    from sim.interop.fragments import fragment_from_tools_list

    if args.timeout <= 0:
        raise BadInput(f"--timeout must be positive, got {args.timeout:g}")
    server = _endpoint(args)
    listing = fetch_tools(server, timeout=args.timeout, revision=args.revision)
    shown = server.shown
    source = (
        f"the live MCP server {listing.server_name!r} {listing.server_version}".rstrip()
        + f" (`{shown}`, {listing.transport}, protocol {listing.protocol_version}, "
        f"{listing.pages} tools/list pages)"
    )
    default = (
        server.url.rstrip("/").rsplit("/", 1)[-1]
        if isinstance(server, HttpServer)
        else Path(server.command[0]).stem
    )
    name = args.name or listing.server_name or default
    try:
        fragment = fragment_from_tools_list(
            listing.tools, name=name, agent=name, source=source, out=args.out
        )
    except InteropError as exc:
        raise BadInput(f"{shown}: tools/list result: {exc}") from None
    _write(fragment.text, args.out)
    _report(fragment, args.out)
    return EXIT_OK


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
    _write(fragment.text, args.out)
    _report(fragment, args.out)
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
    _write(fragment.text, args.out)
    _report(fragment, args.out)
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


def _load(path: str) -> tuple[Any, Any]:
    from sim.interop.tools_list import read_extension
    from sim.scenario import ScenarioError, load_scenario

    if not Path(path).is_file():
        raise BadInput(f"{path}: no such file")
    try:
        scenario = load_scenario(path)
    except ScenarioError as exc:
        raise BadInput(str(exc).strip().replace("\n", "; ")) from None
    return scenario, read_extension(path)


@guarded(InteropError)
def export_mcp_command(args: argparse.Namespace) -> int:
    """``export mcp FILE [--out FILE] [--tool NAME]...``."""
    from sim.interop.tools_list import scenario_tools_list

    scenario, ext = _load(args.file)
    try:
        export = scenario_tools_list(scenario, ext, args.tool)
    except InteropError as exc:
        raise BadInput(f"{args.file}: {exc}") from None
    _write(json.dumps(export.data, indent=2, ensure_ascii=False) + "\n", args.out)
    for note in export.notes:
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


def _speed(text: str) -> float | None:
    if text == "instant":
        return None
    if text == "realtime":
        return 1.0
    try:
        value = float(text)
    except ValueError:
        raise BadInput(f"--speed must be instant, realtime or a number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise BadInput(f"--speed must be a positive number, got {text!r}")
    return value


@guarded(InteropError)
def serve_mcp_command(args: argparse.Namespace) -> int:
    """``serve mcp FILE [--speed instant|realtime|X] [--seed S] [--arg-errors error|result]``."""
    import signal

    from sim.interop.server import build_server, run_stdio

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a server just ends on SIGTERM
    speed = _speed(args.speed)
    scenario, ext = _load(args.file)
    seed = scenario.seed if args.seed is None else args.seed
    try:
        server, sim = build_server(
            scenario,
            ext,
            speed=speed,
            seed=seed,
            arg_errors=args.arg_errors,
            tools=args.tool,
            page_size=args.page_size,
        )
    except InteropError as exc:
        raise BadInput(f"{args.file}: {exc}") from None
    for note in sim.notes:
        print(f"note: {note}", file=sys.stderr)
    print(
        f"serve: {len(sim.entries)} tools of {scenario.name!r} over MCP stdio "
        f"(speed {args.speed}, seed {seed})",
        file=sys.stderr,
    )
    run_stdio(server, max_frame=args.max_frame)
    return EXIT_OK
