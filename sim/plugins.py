"""The one registry of routers, approval policies and invocation dialects: built-in names,
installed plug-ins.

A router or approval policy is named by the built-in list below, by an installed
package's entry point (groups :data:`ROUTER_GROUP` and :data:`APPROVAL_GROUP`), or by
a scenario entry ``{name, plugin: "package.module:Class", options}`` (SPEC §12). A
protocol's dialect likewise: a built-in name, an installed one (:data:`DIALECT_GROUP`), or
``dialect: "package.module:Class"`` (:func:`sim.scenario.model.dialects.dialect_named`).
This module is a leaf (it imports nothing of ours but :mod:`sim.processes`): the scenario
layer asks it for the known names; the layer that owns a base class checks a plug-in
against it (:func:`sim.mesh.registry.router_class`, :func:`sim.approval.approval_policy_class`)
with :func:`plugin_class`. A plug-in module is imported only when it is named.

Plug-in code is isolated (issue 38): whatever escapes it, at import or from a hook, is
the plug-in's error, ``SystemExit`` and ``KeyboardInterrupt`` included
(:func:`plugin_fault`), except a stop by a signal. ``os._exit`` cannot be caught: no
Python code runs after it; the process ends with the plug-in's code (docs/reference/
routing.md#router-plug-ins).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from functools import cache
from importlib.metadata import entry_points
from typing import Any

#: Entry-point group of router plug-ins.
ROUTER_GROUP = "protomesh.routers"
#: Entry-point group of approval-policy plug-ins.
APPROVAL_GROUP = "protomesh.approval"
#: Entry-point group of invocation-dialect plug-ins.
DIALECT_GROUP = "protomesh.dialects"

#: The built-in routers of SPEC §3, name → ``module:Class`` (the one list of them).
BUILTIN_ROUTERS: dict[str, str] = {
    "dijkstra": "sim.mesh.routing:DijkstraRouter",
    "bfs": "sim.mesh.bfs:BfsRouter",
    "resilient": "sim.mesh.routing:ResilientRouter",
    "semantic": "sim.mesh.semantic:SemanticRouter",
}


#: The built-in invocation dialects, name → ``module:Class`` (the one list of them).
BUILTIN_DIALECTS: dict[str, str] = {
    "mcp": "sim.calculus.mcp.dialects:McpDialect",
    "sgd": "sim.calculus.mcp.dialects:SgdDialect",
    "a2a": "sim.calculus.mcp.dialects:A2aDialect",
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


def dialect_names() -> tuple[str, ...]:
    """Every dialect known by name: the built-in ones, then installed plug-ins."""
    extra = sorted(n for n in installed(DIALECT_GROUP) if n not in BUILTIN_DIALECTS)
    return (*BUILTIN_DIALECTS, *extra)


def dialect_reference(name: str) -> str | None:
    """A protocol's ``dialect`` as ``module:Class``: itself when it has a colon, else the
    built-in or installed dialect of that name, else None."""
    if ":" in name:
        return name
    return BUILTIN_DIALECTS.get(name) or installed(DIALECT_GROUP).get(name)


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


def plugin_fault(exc: BaseException) -> bool:
    """Whether ``exc``, escaping a plug-in's code, is the plug-in's doing, to be reported
    as its error (any exception, ``SystemExit`` and ``KeyboardInterrupt`` included), rather
    than a stop to let through: a signal's :class:`~sim.processes.Stopped`, or a
    ``KeyboardInterrupt`` while Python's own SIGINT handler is installed (a real Ctrl-C)."""
    from sim.processes import Stopped

    if isinstance(exc, Stopped):
        return False
    if isinstance(exc, KeyboardInterrupt):
        import signal

        return signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    return True


def raised(exc: BaseException) -> str:
    """``raised TYPE: message``, the message cut at 300 characters (``sys.exit(5)``:
    ``raised SystemExit: 5``)."""
    text = str(exc)
    if len(text) > 300:
        text = text[:300] + "..."
    return f"raised {type(exc).__name__}: {text}" if text else f"raised {type(exc).__name__}"


def load_object(reference: str) -> Any:
    """The object ``package.module:Attr`` names; :class:`PluginError` saying why not."""
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise PluginError(f"'{reference}' is not of the form package.module:Class")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PluginError(f"cannot import '{module_name}': {exc}") from None
    except BaseException as exc:  # the plug-in's own module raised (or exited) importing
        if not plugin_fault(exc):
            raise
        raise PluginError(f"importing '{module_name}' {raised(exc)}") from None
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise PluginError(f"module '{module_name}' has no attribute '{attr}'") from None
        except BaseException as exc:  # a module __getattr__ of the plug-in's
            if not plugin_fault(exc):
                raise
            raise PluginError(f"reading '{reference}' {raised(exc)}") from None
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
