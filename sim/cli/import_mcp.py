"""``import mcp``: a scenario fragment from a live MCP server, over Streamable HTTP (``URL``)
or stdio (``-- COMMAND ARGS``). See docs/interop.md."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from sim.cli.console import EXIT_OK, BadInput, guarded
from sim.interop.errors import InteropError

__all__ = ["add_import_mcp", "import_mcp_command"]


def add_import_mcp(kinds: Any) -> None:
    """Add ``import mcp`` to ``kinds`` (the subparsers of ``import``)."""
    k = kinds.add_parser(
        "mcp",
        help="from a live MCP server (Streamable HTTP URL, or a stdio command)",
        description="Reach a live MCP server through the official SDK's client: `import mcp URL` "
        "over Streamable HTTP, `import mcp -- COMMAND ARGS...` over stdio (the server is started "
        "and stopped). Agree on a protocol revision (--revision), page through tools/list, keep "
        "every entry as sent. A stdio server gets only the SDK's default environment (HOME, "
        "LOGNAME, PATH, SHELL, TERM, USER) unless --inherit-env, plus each --env. Options go "
        "before the -- (before or after a URL).",
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
    k.set_defaults(handler=import_mcp_command, import_mcp_parser=k)


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

    rest = _options_after_url(args)
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


def _options_after_url(args: argparse.Namespace) -> list[str]:
    """``args.server``, with the options that follow a URL read into ``args`` (the
    remainder of ``import mcp URL --out F`` holds ``--out F``; a command's arguments after
    ``--`` stay its own)."""
    rest = list(args.server)
    if len(rest) < 2 or rest[0] == "--" or not re.match(r"(?i)https?://", rest[0]):
        return rest
    url, after = rest[0], rest[1:]
    parser: argparse.ArgumentParser = args.import_mcp_parser
    parser.parse_args(after, namespace=args)  # a bad option: the subcommand's usage, exit 2
    if args.server:
        raise BadInput(f"import mcp {url}: unexpected {args.server[0]!r} after the URL")
    return [url]


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
    from sim.cli.artifacts import report_fragment, write_output

    write_output(fragment.text, args.out)
    report_fragment(fragment, args.out)
    return EXIT_OK
