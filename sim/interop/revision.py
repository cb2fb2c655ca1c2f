"""The two MCP revisions ``serve mcp`` and ``export mcp`` speak, and the ``tools/list`` result
each one requires.

- 2025-11-25 (legacy: an ``initialize`` handshake, then a session): ``{"tools": [...]}`` plus
  ``nextCursor`` when paged.
- 2026-07-28 (modern: stateless, every request carries its version and capabilities in
  ``_meta``): the same plus ``resultType: "complete"`` and the ``CacheableResult`` fields
  ``ttlMs`` and ``cacheScope``. A served scenario's tools do not change while it runs and
  hold nothing user-specific: ``ttlMs`` :data:`TOOLS_TTL_MS`, ``cacheScope: "public"``.
  Tasks moved out of the core into an extension in this revision, so ``execution`` is not
  written.

Tool order is the scenario's, in every revision (deterministic, as 2026-07-28 asks).
A leaf module: no SDK import (``export`` does not need it).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "LEGACY",
    "MODERN",
    "REVISIONS",
    "TOOLS_CACHE_SCOPE",
    "TOOLS_TTL_MS",
    "is_modern",
    "list_result",
    "revision_entry",
    "served_entry",
]

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
REVISIONS: tuple[str, ...] = (LEGACY, MODERN)
TOOLS_TTL_MS = 60_000
"""Milliseconds a client may keep a served ``tools/list`` (2026-07-28 ``ttlMs``)."""
TOOLS_CACHE_SCOPE = "public"


def is_modern(version: str) -> bool:
    """Whether ``version`` is a stateless (per-request ``_meta``) revision."""
    return version == MODERN


def revision_entry(entry: Mapping[str, Any], revision: str) -> tuple[dict[str, Any], list[str]]:
    """A ``tools/list`` entry in ``revision``'s shape (a deep copy) and what changed."""
    out = copy.deepcopy(dict(entry))
    notes: list[str] = []
    if is_modern(revision) and "execution" in out:
        del out["execution"]
        notes.append(
            f"{out['name']}: execution not written: 2026-07-28 moved tasks to the "
            "io.modelcontextprotocol/tasks extension"
        )
    return out, notes


def served_entry(entry: Mapping[str, Any], revision: str) -> tuple[dict[str, Any], list[str]]:
    """The entry ``serve`` lists in ``revision``: :func:`revision_entry`, and no
    ``execution.taskSupport`` (serve does not implement tasks, so it declares none: absent
    means "forbidden"), never the source's value copied."""
    out, notes = revision_entry(entry, revision)
    execution = out.get("execution")
    if isinstance(execution, dict) and "taskSupport" in execution:
        value = execution.pop("taskSupport")
        if not execution:
            del out["execution"]
        notes.append(
            f"{out['name']}: execution.taskSupport {value!r} not served: serve does not "
            "implement tasks (absent = forbidden)"
        )
    return out, notes


def list_result(
    tools: Sequence[Mapping[str, Any]], revision: str, next_cursor: str | None = None
) -> dict[str, Any]:
    """The ``tools/list`` result carrying ``tools`` in ``revision``'s shape."""
    out: dict[str, Any] = {"tools": list(tools)}
    if next_cursor is not None:
        out["nextCursor"] = next_cursor
    if is_modern(revision):
        out["ttlMs"] = TOOLS_TTL_MS
        out["cacheScope"] = TOOLS_CACHE_SCOPE
        out["resultType"] = "complete"
    return out
