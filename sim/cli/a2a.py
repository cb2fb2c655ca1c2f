"""``import a2a`` and ``export a2a``: A2A agent cards in and out through the official
``a2a-sdk`` (SPEC §14). See docs/a2a.md."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from sim.cli.console import EXIT_OK, BadInput, guarded, positive_number, read_json
from sim.interop.errors import InteropError

__all__ = ["add_export_a2a", "add_import_a2a", "add_serve_a2a"]


def add_import_a2a(kinds: Any) -> None:
    """Add ``import a2a`` to ``kinds`` (the subparsers of ``import``)."""
    k = kinds.add_parser(
        "a2a",
        help="from an A2A agent card (a live agent's URL, or a saved CARD.json)",
        description="A fragment from an A2A agent card: `import a2a URL` fetches the card of "
        "the live agent at URL (its /.well-known/agent-card.json, or URL itself when it ends "
        "in .json) through the SDK's A2ACardResolver; `import a2a CARD.json` reads a saved "
        "card. One agent speaking A2A, its skills as capabilities and tools, the card's other "
        "fields under x-a2a (so that `export a2a` gives the card back). Exit 0, or 2.",
    )
    k.add_argument("card", metavar="URL|CARD.json")
    k.add_argument("--out", metavar="FILE", help="write the fragment here (default: stdout)")
    k.add_argument("--name", metavar="NAME", help="scenario name (default: the card's name)")
    k.add_argument(
        "--type",
        choices=("LLM_AGENT", "COORDINATOR"),
        default="LLM_AGENT",
        help="the imported agent's type (default LLM_AGENT)",
    )
    k.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="HTTP header on the card's request (repeatable; URL only; values never printed)",
    )
    k.add_argument(
        "--timeout",
        type=positive_number,
        default=30.0,
        metavar="S",
        help="seconds to wait for the card (default 30)",
    )
    k.set_defaults(handler=import_a2a_command)


def add_export_a2a(kinds: Any) -> None:
    """Add ``export a2a`` to ``kinds`` (the subparsers of ``export``)."""
    k = kinds.add_parser(
        "a2a",
        help="a scenario's agents as A2A agent cards",
        description="The agent cards of the scenario's agents (default: every agent speaking "
        "A2A), valid by the SDK's models, as protobuf JSON: one card for one agent, else a "
        "JSON array in the scenario's order. An imported agent gets its kept card back. "
        "Exit 0, or 2.",
    )
    k.add_argument("file", metavar="FILE", help="scenario YAML")
    k.add_argument(
        "--agent", action="append", default=[], metavar="ID", help="only this agent (repeatable)"
    )
    k.add_argument(
        "--url",
        metavar="BASE",
        default=None,
        help="base URL of a built card (default http://127.0.0.1:<live.port, else 8000>; a "
        "kept card keeps its interfaces)",
    )
    k.add_argument("--out", metavar="FILE", help="write the JSON here (default: stdout)")
    k.set_defaults(handler=export_a2a_command)


@guarded(InteropError)
def import_a2a_command(args: argparse.Namespace) -> int:
    """``import a2a URL|CARD.json [--header K=V] [--out FILE] [--type T] [--name N]``."""
    from sim.cli.artifacts import report_fragment, write_output
    from sim.cli.import_mcp import _pairs
    from sim.interop.a2a_card import card_from_json, fetch_card, unknown_fields
    from sim.interop.a2a_fragment import fragment_from_card

    headers = _pairs(args.header, "--header")
    if re.match(r"(?i)https?://", args.card):
        card = fetch_card(args.card, headers, args.timeout)
        source = f"the live agent at {args.card}"
    elif re.match(r"(?i)[a-z][a-z0-9+.-]*://", args.card):
        raise BadInput(f"{args.card}: only http:// and https:// URLs can be fetched")
    else:
        if headers:
            raise BadInput("--header is for a live agent (import a2a URL)")
        data = read_json(args.card)
        card = card_from_json(data, args.card)
        source = f"the saved card {Path(args.card).name}"
        dropped = unknown_fields(data)
        if dropped:
            print(
                f"note: {args.card}: fields the A2A model does not hold, not kept: "
                + ", ".join(dropped),
                file=sys.stderr,
            )
    fragment = fragment_from_card(
        card, source=source, agent_type=args.type, name=args.name, out=args.out, where=args.card
    )
    write_output(fragment.text, args.out)
    report_fragment(fragment, args.out)
    return EXIT_OK


@guarded(InteropError)
def export_a2a_command(args: argparse.Namespace) -> int:
    """``export a2a FILE [--agent ID]... [--url BASE] [--out FILE]``."""
    from sim.cli.artifacts import load_with_extension, write_output
    from sim.interop.a2a_card import card_dict
    from sim.interop.a2a_fragment import read_a2a_extension, scenario_cards

    if args.url is not None and not re.match(r"(?i)https?://[^/\s]+", args.url):
        raise BadInput(f"--url {args.url!r}: expected an http:// or https:// base URL")
    scenario, _ = load_with_extension(args.file)
    cards = scenario_cards(scenario, read_a2a_extension(args.file), args.agent, args.url, args.file)
    docs = [card_dict(card) for _, card in cards]
    data: Any = docs[0] if len(docs) == 1 else docs
    write_output(json.dumps(data, indent=2, ensure_ascii=False) + "\n", args.out)
    for aid, card in cards:
        shown = f"export: agent {aid!r}: card {card.name!r}, {len(card.skills)} skills"
        print(shown, file=sys.stderr)
    return EXIT_OK


def add_serve_a2a(kinds: Any) -> None:
    """Add ``serve a2a`` to ``kinds`` (the subparsers of ``serve``)."""
    k = kinds.add_parser(
        "a2a",
        help="one agent of a scenario as a real A2A server (tasks; approval as input-required)",
        description="Serve one agent of the scenario as a real A2A server through the official "
        "a2a-sdk: its card at /.well-known/agent-card.json, JSON-RPC at /a2a (SendMessage, "
        'SendStreamingMessage). A message with a DataPart {"skill": NAME, "arguments": {...}} '
        "creates a task whose work is the tool's simulated behaviour; a tool that needs approval "
        'puts the task in input-required until the client answers {"approval": "accept"} '
        '(runs) or {"approval": "decline"} (rejected, nothing runs). Runs until SIGINT or '
        "SIGTERM. Exit 0, or 2 on bad input.",
    )
    k.add_argument("file", metavar="FILE", help="scenario YAML")
    k.add_argument("--agent", required=True, metavar="ID", help="the agent to serve")
    k.add_argument(
        "--http",
        metavar="HOST:PORT",
        default="127.0.0.1:0",
        help="where to listen (default 127.0.0.1:0: any free port; the URL is printed on stderr)",
    )
    from sim.cli.artifacts import add_simulation_options

    add_simulation_options(k)
    k.add_argument(
        "--trace",
        metavar="FILE",
        default=None,
        help="record the session as a protomesh trace (docs/reference/trace.md) with "
        "detail.wall (check FILE --scenario "
        "SCENARIO; export otel FILE --scenario SCENARIO)",
    )
    k.set_defaults(handler=serve_a2a_command)


@guarded(InteropError)
def serve_a2a_command(args: argparse.Namespace) -> int:
    """``serve a2a FILE --agent ID [--http HOST:PORT] [--speed X] [--seed S] [--trace FILE]``."""
    import signal

    from sim.cli.artifacts import load_with_extension, speed_of
    from sim.interop.a2a_fragment import read_a2a_extension
    from sim.interop.a2a_server import served_tools
    from sim.interop.session_trace import LiveTrace
    from sim.interop.streamable import parse_address
    from sim.longlived import long_lived

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with long_lived():
        speed = speed_of(args.speed)
        host, port = parse_address(args.http)
        scenario, mcp_ext = load_with_extension(args.file)
        ext = read_a2a_extension(args.file)
        seed = scenario.seed if args.seed is None else args.seed
        served_tools(scenario, ext, args.agent)  # an agent that serves nothing: before binding
        trace = LiveTrace(args.trace, wall=True) if args.trace is not None else None
    try:
        return _serve(args, scenario, ext, mcp_ext, host, port, speed, seed, trace)
    finally:
        if trace is not None:
            trace.close()


def _serve(
    args: argparse.Namespace,
    scenario: Any,
    ext: Any,
    mcp_ext: Any,
    host: str,
    port: int,
    speed: float | None,
    seed: int,
    trace: Any,
) -> int:
    """Bind, build the app for the bound URL, run it until SIGINT or SIGTERM (as
    ``serve mcp --http`` does: a stopped server exits 0)."""
    from sim.interop.a2a_server import a2a_app
    from sim.interop.streamable import is_loopback, listen, run_app

    if not is_loopback(host):
        print(
            f"note: {host} is not a loopback address: anyone who reaches it can use the agent "
            "(no authorisation)",
            file=sys.stderr,
        )
    sock = listen(host, port)
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{sock.getsockname()[1]}"
    app, _, skills = a2a_app(
        scenario,
        ext,
        mcp_ext,
        agent=args.agent,
        base_url=base,
        speed=speed,
        seed=seed,
        trace=trace,
        log=lambda line: print(f"serve: {line}", file=sys.stderr, flush=True),
    )
    announcement = (
        f"serve: agent {args.agent!r} of {scenario.name!r} ({len(skills)} skills) over A2A at "
        f"{base} (card {base}/.well-known/agent-card.json; speed {args.speed}, seed {seed})"
    )

    def announce() -> None:
        print(announcement, file=sys.stderr, flush=True)

    run_app(app, sock, ready=announce, lifespan="off")
    return EXIT_OK
