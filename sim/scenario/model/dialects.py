"""A protocol's ``dialect:`` resolved to its :class:`~sim.calculus.mcp.dialects.Dialect`: a
built-in name, an installed plug-in's name, or a ``package.module:Class`` reference
(:mod:`sim.plugins`); one instance per class for the process."""

from __future__ import annotations

from functools import cache

from sim.calculus.mcp.dialects import BUILTIN, Dialect, builtin_dialect
from sim.plugins import PluginError, dialect_names, dialect_reference, plugin_class

__all__ = ["dialect_named", "dialect_of", "dialect_problem"]

_KIND = "an invocation dialect (a subclass of sim.calculus.mcp.dialects.Dialect)"


@cache
def dialect_named(text: str) -> Dialect:
    """The dialect ``text`` names; :class:`PluginError` saying why there is none."""
    reference = dialect_reference(text)
    if reference is None:
        raise PluginError(f"unknown dialect '{text}' (known: {', '.join(dialect_names())})")
    cls = plugin_class(reference, Dialect, _KIND, {})
    # a built-in class is its one instance
    dialect = next((d for d in BUILTIN.values() if type(d) is cls), None) or cls()
    if not dialect.name:
        raise PluginError(f"'{reference}' declares no `name`")
    return dialect


def dialect_problem(text: str) -> str | None:
    """Why ``text`` names no dialect (for a located finding), or None."""
    try:
        dialect_named(text)
    except PluginError as exc:
        return str(exc)
    return None


def dialect_of(protocol: str, declared: str | None = None) -> Dialect:
    """The dialect of ``protocol``: the one its scenario entry ``declared``, else the
    built-in protocol's, else MCP's (SPEC §4)."""
    return builtin_dialect(protocol) if declared is None else dialect_named(declared)
