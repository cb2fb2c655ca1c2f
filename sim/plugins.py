"""The one registry of routers and approval policies: built-in names, installed plug-ins.

A router or approval policy is named by the built-in list below, by an installed
package's entry point (groups :data:`ROUTER_GROUP` and :data:`APPROVAL_GROUP`), or by
a scenario entry ``{name, plugin: "package.module:Class", options}`` (SPEC §12).
This module imports nothing heavy: the scenario layer asks it for the known names,
the mesh layer for the classes; a plug-in module is imported only when it is named.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.approval import ApprovalPolicy
    from sim.mesh.routing import Router

#: Entry-point group of router plug-ins.
ROUTER_GROUP = "protomesh.routers"
#: Entry-point group of approval-policy plug-ins.
APPROVAL_GROUP = "protomesh.approval"

#: The built-in routers of SPEC §3, name → ``module:Class`` (the one list of them).
BUILTIN_ROUTERS: dict[str, str] = {
    "dijkstra": "sim.mesh.routing:DijkstraRouter",
    "bfs": "sim.mesh.bfs:BfsRouter",
    "resilient": "sim.mesh.routing:ResilientRouter",
    "semantic": "sim.mesh.semantic:SemanticRouter",
}


class PluginError(Exception):
    """A plug-in that cannot be used; the message names it and says why."""


@cache
def installed(group: str) -> dict[str, str]:
    """Names registered by installed packages under entry-point ``group`` → ``module:attr``."""
    return {ep.name: ep.value for ep in entry_points(group=group)}


def router_names() -> tuple[str, ...]:
    """Every router known without a scenario: the built-in ones, then installed plug-ins."""
    extra = sorted(n for n in installed(ROUTER_GROUP) if n not in BUILTIN_ROUTERS)
    return (*BUILTIN_ROUTERS, *extra)


def router_reference(name: str) -> str | None:
    """The ``module:Class`` of the built-in or installed router ``name``, or None."""
    return BUILTIN_ROUTERS.get(name) or installed(ROUTER_GROUP).get(name)


def approval_names() -> tuple[str, ...]:
    """The approval policies installed packages register, by name."""
    return tuple(sorted(installed(APPROVAL_GROUP)))


def approval_reference(name: str) -> str | None:
    """The ``module:Class`` of the installed approval policy ``name``, or None."""
    return installed(APPROVAL_GROUP).get(name)


def policy_reference(plugin: str) -> str | None:
    """An ``approval.policy`` plug-in as ``module:Class``: itself when it has a colon,
    else the installed policy of that name, else None."""
    return plugin if ":" in plugin else approval_reference(plugin)


def load_object(reference: str) -> Any:
    """The object ``package.module:Attr`` names; :class:`PluginError` saying why not."""
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise PluginError(f"'{reference}' is not of the form package.module:Class")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PluginError(f"cannot import '{module_name}': {exc}") from None
    except Exception as exc:  # the plug-in's own module raised while importing
        raise PluginError(f"importing '{module_name}' raised {type(exc).__name__}: {exc}") from None
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise PluginError(f"module '{module_name}' has no attribute '{attr}'") from None
    return value


def _signature_fits(cls: type, options: Mapping[str, Any], *positional: str) -> str | None:
    """Why ``cls(*positional, **options)`` cannot be called, or None when it can."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # no signature to read (a C class): try at run time
        return None
    try:
        signature.bind(*positional, **options)
    except TypeError as exc:
        shown = ", ".join(f"{k}=" for k in options)
        call = ", ".join([*positional, shown] if shown else positional)
        return f"options do not fit {cls.__name__}({call}): {exc}"
    return None


def plugin_class(
    reference: str, base: type, kind: str, options: Mapping[str, Any], *positional: str
) -> type:
    """The class ``module:Class`` names, checked: importable, a subclass of ``base``
    (``kind`` says what that is, for the message), taking ``options`` as keywords after
    the ``positional`` arguments."""
    cls = load_object(reference)
    if not isinstance(cls, type) or not issubclass(cls, base):
        raise PluginError(f"'{reference}' is not {kind}")
    reason = _signature_fits(cls, options, *positional)
    if reason is not None:
        raise PluginError(reason)
    return cls


def router_class(reference: str, options: Mapping[str, Any] = {}) -> type[Router]:
    """The router class ``module:Class`` names, checked: importable, a subclass of
    :class:`sim.mesh.routing.Router`, and taking ``options`` as keywords."""
    from sim.mesh.routing import Router

    kind = "a router (a subclass of sim.DijkstraRouter or sim.mesh.Router)"
    cls: type[Router] = plugin_class(reference, Router, kind, options, "graph")
    return cls


def approval_policy_class(reference: str, options: Mapping[str, Any] = {}) -> type[ApprovalPolicy]:
    """The approval policy class ``module:Class`` names, checked: importable, a subclass
    of :class:`sim.ApprovalPolicy` that defines ``ask``, and taking ``options``."""
    from sim.approval import ApprovalPolicy

    kind = "an approval policy (a subclass of sim.ApprovalPolicy)"
    cls: type[ApprovalPolicy] = plugin_class(reference, ApprovalPolicy, kind, options)
    if cls.ask is ApprovalPolicy.ask:
        raise PluginError(f"'{reference}' does not define ask(view, arguments)")
    return cls
