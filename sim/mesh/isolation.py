"""A plug-in router's code, isolated: what escapes its hooks, or a wrong answer, is a
:class:`RouterError` naming the router, the plug-in and the call (issue 38, item 11).

:func:`isolate` puts a checked version of ``route``, ``serve`` and ``suspects`` on the
router instance (the class is untouched, so :meth:`Router._exact` and ``_hooked`` still
see the plug-in's own overrides and the exact fast paths stay). Each check runs where the
engine calls the router (a route is asked once per (caller, need, suspects) and cached,
never per hop): an ``isinstance`` on the answer, and its path walked once against the
graph (it starts at the caller, ends at the target asked, each hop a link in its
protocol). The cost hooks are checked where the state space is priced
(:func:`sim.mesh.statespace._priced`). ``static`` is read once, when the router is
built (:func:`checked_static`).

Let through unchanged: :class:`~sim.mesh.errors.MeshError` (``NoRoute`` is the contract's
"none", an unknown agent the caller's mistake, a ``RouterError`` already said) and a stop
by a signal (:func:`sim.plugins.plugin_fault`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from sim.mesh.errors import MeshError, RouterError
from sim.mesh.graph import ProtocolGraph
from sim.mesh.route import Route
from sim.mesh.routing import Router
from sim.plugins import plugin_fault, raised

__all__ = ["checked_static", "isolate"]


def _call(hook: str, *args: object, **keywords: object) -> str:
    """``hook('a', 'b', source_protocol='MCP')``: the call as written (None keywords left out)."""
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in keywords.items() if v]
    return f"{hook}({', '.join(shown)})"


def _error(router: Router, reference: str, call: str, what: str) -> RouterError:
    return RouterError(router.name, f"plug-in '{reference}': {call} {what}")


def _routed(
    router: Router, reference: str, hook: str, method: Callable[..., Any]
) -> Callable[..., Route]:
    """``method`` (the plug-in's ``route`` or ``serve``), checked: what escapes it is the
    plug-in's error, and so is an answer that is not a :class:`Route`."""

    def checked(*args: Any, **how: Any) -> Route:
        try:
            answer = method(*args, **how)
        except MeshError:
            raise
        except BaseException as exc:
            if not plugin_fault(exc):
                raise
            call = _call(hook, *args, source_protocol=how.get("source_protocol"))
            raise _error(router, reference, call, raised(exc)) from exc
        why = (
            _not_a_route(answer)
            if not isinstance(answer, Route)
            else _off_the_graph(router.graph, answer, args[0], args[1] if hook == "route" else None)
        )
        if why is not None:
            call = _call(hook, *args, source_protocol=how.get("source_protocol"))
            raise _error(router, reference, call, why)
        route: Route = answer
        return route

    return checked


def _off_the_graph(
    graph: ProtocolGraph, route: Route, source: str, target: str | None
) -> str | None:
    """Why ``route`` cannot be taken from ``source`` (to ``target``): it starts or ends
    elsewhere, or a hop is not a link of the graph in its protocol (None: it can)."""
    path, protocols = route.path, route.protocols
    if not path or path[0] != source or (target is not None and path[-1] != target):
        return f"returned a route along {path!r:.120}, not from '{source}'" + (
            f" to '{target}'" if target is not None else ""
        )
    if len(protocols) != len(path) - 1:
        return (
            f"returned {len(protocols)} protocol(s) for the {len(path) - 1} hop(s) of {path!r:.120}"
        )
    for u, v, protocol in zip(path[:-1], path[1:], protocols, strict=True):
        link = graph.link(u, v)
        if link is None or protocol not in link.latency:
            return f"returned a route with a hop {u} -{protocol}-> {v} the mesh has no link for"
    return None


def _suspects(
    router: Router, reference: str, suspects: Callable[..., Any]
) -> Callable[[Sequence[str]], tuple[list[str], list[frozenset[str]]]]:
    def checked(path: Sequence[str]) -> tuple[list[str], list[frozenset[str]]]:
        try:
            answer = suspects(path)
        except MeshError:
            raise
        except BaseException as exc:
            if not plugin_fault(exc):
                raise
            raise _error(router, reference, _call("suspects", tuple(path)), raised(exc)) from exc
        why = _not_suspects(answer)
        if why is not None:
            raise _error(router, reference, _call("suspects", tuple(path)), why)
        nodes, links = answer
        return list(nodes), [frozenset(link) for link in links]

    return checked


def _not_a_route(answer: object) -> str:
    hint = " (raise sim.NoRoute(reason) when there is none)" if answer is None else ""
    return f"returned {answer!r:.80}, not a sim.mesh.Route{hint}"


def _not_suspects(answer: object) -> str | None:
    """Why ``answer`` is not ``(nodes, links)``: agent ids and 2-sets of them (None: it is)."""
    shape = "not (nodes, links): a list of agent ids and a list of frozensets of two"
    if not isinstance(answer, tuple | list) or len(answer) != 2:
        return f"returned {answer!r:.80}, {shape}"
    nodes, links = answer
    if not isinstance(nodes, list | tuple) or not all(isinstance(n, str) for n in nodes):
        return f"returned nodes {nodes!r:.80}, {shape}"
    if not isinstance(links, list | tuple) or not all(
        isinstance(link, frozenset | set | tuple | list)
        and len(link) == 2
        and all(isinstance(end, str) for end in link)
        for link in links
    ):
        return f"returned links {links!r:.80}, {shape}"
    return None


def checked_static(router: Router, reference: str) -> bool:
    """The router's ``static``, read once: True or False, else a :class:`RouterError`."""
    try:
        static: object = router.static
    except BaseException as exc:
        if not plugin_fault(exc):
            raise
        raise _error(router, reference, "static", raised(exc)) from exc
    if not isinstance(static, bool):
        raise _error(router, reference, "static", f"is {static!r:.80}, not True or False")
    return static


def isolate(router: Router, reference: str) -> Router:
    """``router`` (a plug-in's, built from ``reference``) with its ``route``, ``serve`` and
    ``suspects`` checked (module docstring) and its ``static`` read once; returns it."""
    router.plugin = reference
    static = checked_static(router, reference)
    with contextlib.suppress(AttributeError):  # a property without a setter: read again
        router.static = static
    # instance attributes: calls through the router (and cheapest_service's) are checked,
    # the class's methods (what super() and the exact-path checks see) are untouched
    vars(router).update(
        route=_routed(router, reference, "route", router.route),
        serve=_routed(router, reference, "serve", router.serve),
        suspects=_suspects(router, reference, router.suspects),
    )
    return router
