"""Commands on the protocol graph: route, plan."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from sim.cli.console import print_table
from sim.plugins import BUILTIN_ROUTERS

if TYPE_CHECKING:
    from sim.mesh import DownSet, Route


def register(sub: Any) -> None:
    """Add this group's commands to ``sub`` (an argparse subparsers action)."""
    p = sub.add_parser(
        "route",
        help="one route between two agents",
        description="Print the route a router picks from one agent to another "
        "(docs/reference/routing.md). "
        "Exit 0 with a route, 1 when there is none, 2 on bad input.",
    )
    p.add_argument("file", metavar="FILE", help="scenario YAML")
    p.add_argument("--from", dest="source", required=True, metavar="A", help="source agent id")
    p.add_argument(
        "--to",
        dest="target",
        required=True,
        metavar="B",
        help="target agent id, or a tool or capability (the router picks the agent)",
    )
    p.add_argument(
        "--router",
        default=None,
        metavar="NAME",
        help=f"{', '.join(BUILTIN_ROUTERS)}, an installed plug-in or one of the scenario's "
        "routers (default: its first)",
    )
    p.add_argument("--protocol", metavar="P", help="source protocol ρ (bfs: the one protocol)")
    p.add_argument("--to-protocol", metavar="P", help="protocol the target must receive")
    p.add_argument(
        "--down",
        default="",
        metavar="X,Y",
        help="down agents, and links as a~b (resilient and semantic avoid them)",
    )
    p.add_argument("--json", action="store_true", help="print the route as JSON")
    p.set_defaults(handler=route_command)

    p = sub.add_parser(
        "plan",
        help="the route of every workflow task, per router",
        description="For each router of the scenario and each workflow task, print where "
        "the call goes (initiator → the tool's host), by which path and protocols, and at "
        "what cost. Exit 0, 1 if some task has no route, 2 on bad input.",
    )
    p.add_argument("file", metavar="FILE", help="scenario YAML")
    p.add_argument("--routers", default=None, metavar="a,b", help="default: the scenario's")
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"routers": [{"router", "tasks": [{"workflow", "task", "calls", '
        '"initiator", "protocol", "route" (as route --json prints it, or null), "reason"}]}]}',
    )
    p.set_defaults(handler=plan_command)


def _parse_down(text: str) -> DownSet:
    from sim.mesh import DownSet

    nodes: list[str] = []
    links: list[tuple[str, str]] = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        if "~" in item:
            a, _, b = item.partition("~")
            links.append((a, b))
        else:
            nodes.append(item)
    return DownSet.of(nodes, links)


def _render(route: Route) -> str:
    return (
        f"{route.router}: {route.describe()}\n"
        f"cost {route.cost:.6g} s, {route.hops} hop(s), {len(route.translations)} translation(s)"
    )


def route_command(args: argparse.Namespace) -> int:
    """``route FILE --from A --to B``: 0 route found, 1 no route, 2 bad input."""
    from sim.admission import load_scenario
    from sim.mesh import MeshError, NoRoute, ProtocolGraph, make_router
    from sim.mesh.registry import unknown_router
    from sim.scenario import ScenarioError

    try:
        scenario = load_scenario(args.file)
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return 2
    graph = ProtocolGraph.from_scenario(scenario)
    name = args.router or scenario.router_names[0]
    problem = unknown_router(name, scenario)
    if problem is not None:
        print(f"--router: {problem}", file=sys.stderr)
        return 2
    try:
        router = make_router(name, graph, scenario)
    except MeshError as exc:
        print(f"{args.file}: {exc}", file=sys.stderr)
        return 2
    down = _parse_down(args.down)
    for node in sorted(down.nodes | {end for link in down.links for end in link}):
        if node not in graph:
            print(f"--down: unknown agent '{node}'", file=sys.stderr)
            return 2
    if down and router.static:
        print(
            f"note: {name} is static and ignores --down; use --router resilient",
            file=sys.stderr,
        )
    try:
        if args.target not in graph:
            route = router.serve(args.source, args.target, source_protocol=args.protocol, down=down)
        else:
            route = router.route(
                args.source,
                args.target,
                source_protocol=args.protocol,
                target_protocol=args.to_protocol,
                down=down,
            )
    except NoRoute as exc:
        print(f"no route from '{args.source}' to '{args.target}': {exc.reason}", file=sys.stderr)
        if args.json:  # the same keys, null, and why
            none = dict.fromkeys(("path", "protocols", "translations", "cost", "hops"))
            ends = {"router": name, "from": args.source, "to": args.target}
            print(json.dumps({**ends, **none, "reason": exc.reason}))
        return 1
    except MeshError as exc:
        print(f"{args.file}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(route.to_json()) if args.json else _render(route))
    return 0


def plan_command(args: argparse.Namespace) -> int:
    """``plan FILE``: each task's route under each router."""
    from sim.admission import load_scenario
    from sim.mesh import MeshError, ProtocolGraph, make_router
    from sim.mesh.plan import task_routes
    from sim.mesh.registry import unknown_router
    from sim.scenario import ScenarioError

    try:
        scenario = load_scenario(args.file)
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return 2
    graph = ProtocolGraph.from_scenario(scenario)
    names = args.routers.split(",") if args.routers else scenario.router_names
    for name in names:
        problem = unknown_router(name, scenario)
        if problem is not None:
            print(f"--routers: {problem}", file=sys.stderr)
            return 2
    missing = 0
    header = ("workflow", "task", "calls", "route", "cost (s)")
    told = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON only
    planned_json: list[dict[str, Any]] = []
    for name in names:
        try:
            router = make_router(name, graph, scenario)
        except MeshError as exc:
            print(f"{args.file}: {exc}", file=sys.stderr)
            return 2
        rows: list[tuple[str, ...]] = []
        for wf in scenario.workflows:
            starts = scenario.initiators_of(wf)
            if len(starts) > 1 and name == names[0]:
                print(
                    f"{wf.name}: routes from {starts[0]}, the first of {len(starts)} initiators",
                    file=told,
                )
        tasks: list[dict[str, Any]] = []
        planned_json.append({"router": name, "tasks": tasks})
        try:
            for planned in task_routes(router, scenario):
                tasks.append(
                    {
                        "workflow": planned.workflow,
                        "task": planned.task,
                        "calls": planned.need,
                        "initiator": planned.initiator,
                        "protocol": planned.protocol,
                        "route": None if planned.route is None else planned.route.to_json(),
                        "reason": planned.reason,
                    }
                )
                row = (planned.workflow, planned.task, planned.need)
                if planned.route is None:
                    missing += 1
                    rows.append((*row, f"no route: {planned.reason}", "-"))
                else:
                    route = planned.route
                    rows.append((*row, route.describe(), f"{route.cost:.4f}"))
        except MeshError as exc:
            print(f"{args.file}: {exc}", file=sys.stderr)
            return 2
        if not args.json:
            print(f"router {name}")
            print_table(header, rows, indent="  ", align="llll")
            print()
    if args.json:
        print(json.dumps({"routers": planned_json}))
    return 1 if missing else 0
