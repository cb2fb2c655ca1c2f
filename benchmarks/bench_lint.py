"""The linter (``python -m sim lint``, paper §6 P1–P4) on large tool lists: linear time.

The lists are copies of the 235 real tools of ``data/mcp_tools/`` (16 servers): copy ``k``
renames every tool ``c<k>_<name>`` and rewrites the mentions of its own list's tools in
every text the same way, so each copy keeps the real findings (the stated and the data-flow
dependencies, the P3 note per plain list...); ``items`` counts findings and notes. ``lint``
is timed on 375 to 6,000 tools; the time per tool at 6,000 over that at 750 shows the growth
(1 is linear, 8 would be quadratic). The quadratic P4 of before (every tool against every
other of its namespace) took 44 s on the 3,000-tool list.
"""

from __future__ import annotations

import gc
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.run import ROOT, Section, table
from sim.calculus.mcp import Tool, ToolPlus, tools_from_list
from sim.calculus.principles import lint

TOOLS = ROOT / "data" / "mcp_tools"
SIZES = (375, 750, 1_500, 3_000, 6_000)
TARGET_SIZE = 3_000
TARGET_SECONDS = 2.0  # 3,000 tools
COMMAND = "python -m benchmarks.run --only lint"


def _real_lists(root: Path = TOOLS) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = []
    for path in sorted(root.glob("*.json")):
        if path.name != "MANIFEST.json":
            out.append(json.loads(path.read_text(encoding="utf-8"))["tools"])
    return out


def _rename(entry: dict[str, Any], prefix: str, pattern: re.Pattern[str]) -> dict[str, Any]:
    """``entry`` with its name and every mention of its list's tools prefixed."""
    out: dict[str, Any] = json.loads(pattern.sub(lambda m: prefix + m.group(1), json.dumps(entry)))
    return out


def tool_list(n: int, root: Path = TOOLS) -> tuple[Tool | ToolPlus, ...]:
    """``n`` tools: copies of the real lists, renamed per copy (see the module docstring)."""
    lists = _real_lists(root)
    patterns = []
    for tools in lists:
        names = sorted((t["name"] for t in tools), key=len, reverse=True)
        alt = "|".join(map(re.escape, names))
        patterns.append(re.compile(rf"(?<![\w-])({alt})(?![\w-])"))
    entries: list[dict[str, Any]] = []
    copy = 0
    while len(entries) < n:
        for tools, pattern in zip(lists, patterns, strict=True):
            entries.extend(_rename(t, f"c{copy}_", pattern) for t in tools)
            copy += 1
    return tools_from_list({"tools": entries[:n]})


def _median(tools: tuple[Tool | ToolPlus, ...], repeats: int) -> tuple[float, int]:
    times: list[float] = []
    found = 0
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            found = len(lint(tools))
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return statistics.median(times), found


def measure(quick: bool = False) -> list[tuple[int, float, int]]:
    """``(tools, seconds, items)`` per size (items: findings and notes)."""
    rows: list[tuple[int, float, int]] = []
    for n in SIZES[:3] if quick else SIZES:
        seconds, found = _median(tool_list(n), 1 if quick else 3)
        rows.append((n, seconds, found))
    return rows


def run(quick: bool = False) -> Section:
    """The benchmark section for ``BENCHMARKS.md`` (``benchmarks.run`` protocol)."""
    rows = measure(quick)
    per_tool = {n: sec / n for n, sec, _ in rows}
    target = next((sec for n, sec, _ in rows if n == TARGET_SIZE), None)
    passed = None if quick or target is None else target <= TARGET_SECONDS
    largest = rows[-1][0]
    growth = per_tool[largest] / per_tool[750]
    notes = [
        f"Target: {TARGET_SIZE:,} tools ≤ {TARGET_SECONDS:g} s (the quadratic P4 of before: "
        "44 s on the same list).",
        f"Time per tool at {largest:,} tools / at 750 tools: {growth:.2f} (1 = linear; "
        f"quadratic would be {largest / 750:g}).",
        "Copies of the 235 real tools of data/mcp_tools/ (16 servers); items are findings "
        "and notes; medians of 3 runs, garbage "
        "collection disabled while timing.",
    ]
    if quick:
        notes.append("Quick mode: up to 1,500 tools, one run each; target not checked.")
    return Section(
        title="Lint: P1–P4 on large tool lists",
        command=COMMAND,
        table=table(
            ["tools", "lint", "per tool", "items"],
            [
                [f"{n:,}", f"{sec * 1000:.0f} ms", f"{sec / n * 1e6:.0f} µs", f"{found:,}"]
                for n, sec, found in rows
            ],
            "rrrr",
        ),
        notes=notes,
        passed=passed,
    )


if __name__ == "__main__":  # pragma: no cover
    for n, seconds, found in measure():
        print(f"{n} tools: {seconds * 1000:.0f} ms, {found} findings")
