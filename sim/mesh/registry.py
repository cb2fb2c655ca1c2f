"""Routers by name: the built-in ones, installed plug-ins and a scenario's plug-ins.

The names and their classes are :mod:`sim.plugins`'s one registry; a scenario entry
``{name, plugin: "package.module:Class", options}`` adds a router of its own. Every
failure (unknown name, a plug-in that cannot be imported, is not a router, or raises
while being built) is a :class:`RouterError` naming the router and the plug-in; a
plug-in's router is built isolated (:mod:`sim.mesh.isolation`).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from sim.mesh.errors import RouterError
from sim.mesh.graph import ProtocolGraph
from sim.mesh.isolation import isolate
from sim.mesh.routing import Router
from sim.plugins import (
    BUILTIN_ROUTERS,
    PluginError,
    plugin_class,
    plugin_fault,
    raised,
    router_names,
    router_reference,
)
from sim.scenario.model import Scenario
from sim.spelling import did_you_mean

#: The built-in routers' classes: trusted, built without the plug-in checks.
BUILTIN_REFERENCES = frozenset(BUILTIN_ROUTERS.values())


def router_class(reference: str, options: Mapping[str, Any] = {}) -> type[Router]:
    """The router class ``module:Class`` names, checked: importable, a subclass of
    :class:`sim.mesh.routing.Router`, and taking ``options`` as keywords."""
    kind = "a router (a subclass of sim.DijkstraRouter or sim.mesh.Router)"
    cls: type[Router] = plugin_class(reference, Router, kind, options, "graph")
    static = inspect.getattr_static(cls, "static")
    if not isinstance(static, bool) and not hasattr(static, "__get__"):  # a property: built
        raise PluginError(f"'{reference}': static is {static!r:.80}, not True or False")
    return cls


def known_routers(scenario: Scenario | None = None) -> list[str]:
    """The names ``make_router`` accepts: the registry's, then the scenario's plug-ins."""
    names = list(router_names())
    if scenario is not None:
        names += [r.name for r in scenario.routers if r.name not in names]
    return names


def unknown_router(name: str, scenario: Scenario | None = None) -> str | None:
    """Why ``name`` names no router (with a close match), or None when it does (a
    built-in or the scenario's own is known without listing the installed packages'
    entry points)."""
    if name in BUILTIN_ROUTERS or (scenario is not None and scenario.router(name) is not None):
        return None
    known = known_routers(scenario)
    if name in known:
        return None
    return f"unknown router '{name}'{did_you_mean(name, known)} (known: {', '.join(known)})"


def chosen_routers(scenario: Scenario, routers: Sequence[str] | None) -> list[str]:
    """``routers`` (default: the scenario's), each once, in order; a ``ValueError`` naming
    the first that names no router."""
    names = list(dict.fromkeys(routers or scenario.router_names))
    for name in names:
        problem = unknown_router(name, scenario)
        if problem is not None:
            raise ValueError(problem)
    return names


def make_router(name: str, graph: ProtocolGraph, scenario: Scenario | None = None) -> Router:
    """The router called ``name`` on ``graph``: a ``routers:`` entry of ``scenario``
    (its plug-in and options), else a built-in or installed one."""
    entry = scenario.router(name) if scenario is not None else None
    reference = entry.plugin if entry is not None and entry.plugin else router_reference(name)
    if reference is None:
        raise ValueError(unknown_router(name, scenario))
    options = dict(entry.options) if entry is not None else {}
    try:
        cls = router_class(reference, options)
    except PluginError as exc:
        raise RouterError(name, f"plug-in '{reference}': {exc}") from None
    try:
        router = cls(graph, **options)
    except BaseException as exc:
        if not plugin_fault(exc):
            raise
        raise RouterError(name, f"plug-in '{reference}': building it {raised(exc)}") from exc
    router.name = name
    if reference in BUILTIN_REFERENCES:
        return router
    return isolate(router, reference)


def kept_router(
    kept: dict[str, Router], name: str, graph: ProtocolGraph, scenario: Scenario
) -> Router | None:
    """The built-in router ``name`` built once on ``graph`` and kept in ``kept`` (its
    caches of state spaces, trees and routes depend on the graph only, which no run
    changes), or None for a plug-in, which is built per replication as ``run`` does."""
    entry = scenario.router(name)
    if name not in BUILTIN_ROUTERS or (entry is not None and entry.plugin):
        return None
    hit = kept.get(name)
    if hit is None:
        hit = kept[name] = make_router(name, graph, scenario)
    return hit


def router_field(scenario: Scenario, name: str) -> tuple[str | int, ...]:
    """Where the router ``name`` is in the scenario: ``routers[i].plugin`` for a plug-in,
    ``routers[i]`` otherwise (``routers`` when it is not listed)."""
    for i, entry in enumerate(scenario.routers):
        if entry.name == name:
            return ("routers", i, "plugin") if entry.plugin else ("routers", i)
    return ("routers",)
