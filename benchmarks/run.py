"""Run the benchmarks and write ``BENCHMARKS.md``.

``python -m benchmarks.run [--quick] [--only NAME ...] [--out BENCHMARKS.md] [--strict]``

Every module ``benchmarks/bench_<name>.py`` contributes one section: it exposes
``run(quick: bool) -> Section``. Modules are discovered by name and run in name order;
``--only routing`` keeps ``bench_routing`` (repeatable, or comma-separated). A module
that fails to import, has no ``run``, or raises is reported in the file with its
traceback; the others still run. The file is written either way; the exit status is 1
when a benchmark errored (or, with ``--strict``, missed a target), else 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import os
import pkgutil
import platform
import re
import shlex
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "benchmarks"
PREFIX = "bench_"


@dataclass
class Section:
    """One benchmark's part of ``BENCHMARKS.md``.

    ``table`` is markdown (one or more tables); ``passed`` is True / False when the
    benchmark has targets (None: no targets); ``error`` is a traceback when it failed.
    """

    title: str
    command: str
    table: str = ""
    notes: list[str] = field(default_factory=list)
    passed: bool | None = None
    error: str | None = None
    seconds: float = 0.0
    measured: str = ""

    @property
    def verdict(self) -> str:
        """``PASS`` / ``FAIL`` / ``ERROR`` / ``no targets``."""
        if self.error is not None:
            return "ERROR"
        if self.passed is None:
            return "no targets"
        return "PASS" if self.passed else "FAIL"

    def render(self) -> str:
        """The section as markdown, starting with a ``##`` heading."""
        out = [f"## {self.title}", ""]
        out += [f"Command: `{self.command}`", ""]
        out += [f"Verdict: **{self.verdict}** (ran in {self.seconds:.1f} s)", ""]
        if self.measured:
            out += [f"Measured: {self.measured}", ""]
        if self.error is not None:
            out += ["The benchmark failed:", "", "```", self.error.rstrip(), "```", ""]
        if self.table:
            out += [self.table.rstrip(), ""]
        if self.notes:
            out += [f"- {note}" for note in self.notes]
            out.append("")
        return "\n".join(out)


def table(header: Sequence[str], rows: Sequence[Sequence[object]], align: str = "") -> str:
    """A markdown table; ``align`` is one of ``l``/``r`` per column (default: right but
    the first column left)."""
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(str(h) for h in header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def load_note(before: Sequence[float], after: Sequence[float]) -> str:
    """A section's note of the load averages (1, 5, 15 min) before and after it ran."""
    return (
        "Load average (1, 5, 15 min) "
        + ", ".join(f"{x:.2f}" for x in before)
        + " before, "
        + ", ".join(f"{x:.2f}" for x in after)
        + f" after, on {os.cpu_count()} cores."
    )


# --- discovery and running -------------------------------------------------------------


def discover() -> list[str]:
    """Short names (``routing`` for ``bench_routing``) of the benchmark modules, sorted."""
    path = [str(Path(__file__).resolve().parent)]
    return sorted(
        m.name[len(PREFIX) :] for m in pkgutil.iter_modules(path) if m.name.startswith(PREFIX)
    )


def run_one(name: str, quick: bool) -> Section:
    """Import ``bench_<name>`` and run it; failures become an error section."""
    module_name = f"{PACKAGE}.{PREFIX}{name}"
    command = f"python -m benchmarks.run{' --quick' if quick else ''} --only {name}"
    load_at_start = _load()
    start = time.perf_counter()
    try:
        module = importlib.import_module(module_name)
        runner = getattr(module, "run", None)
        if runner is None:
            raise AttributeError(f"{module_name} has no run(quick: bool) -> Section")
        section = runner(quick)
        if not hasattr(section, "render"):
            raise TypeError(f"{module_name}.run returned {type(section).__name__}, not a Section")
    except Exception:  # reported in the file, not fatal
        section = Section(title=name, command=command, error=traceback.format_exc())
    section.seconds = time.perf_counter() - start
    section.measured = _stamp(load_at_start)
    return section  # type: ignore[no-any-return]


def _stamp(load: str) -> str:
    """When, at which commit, on which processor and under which load a section was
    measured (the machine behind the project changes between sessions)."""
    now = dt.datetime.now(dt.UTC).astimezone()
    return (
        f"{now:%Y-%m-%d %H:%M %Z}, commit {_commit()}, {_cpu_model()}, load average at start {load}"
    )


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"


@dataclass
class Kept:
    """A section of an existing ``BENCHMARKS.md`` that this run did not measure again."""

    title: str
    text: str
    verdict: str
    seconds: float

    def render(self) -> str:
        """The section's markdown, unchanged."""
        return self.text


_VERDICT = re.compile(r"^Verdict: \*\*(?P<verdict>[^*]+)\*\* \(ran in (?P<s>[0-9.]+) s\)", re.M)


def kept_sections(text: str) -> list[Kept]:
    """The ``##`` sections of an existing file, each with its verdict and time."""
    parts = re.split(r"(?m)^(?=## )", text)
    out: list[Kept] = []
    for part in parts[1:]:
        title = part.splitlines()[0][3:].strip()
        match = _VERDICT.search(part)
        verdict = match["verdict"] if match else "?"
        seconds = float(match["s"]) if match else 0.0
        out.append(Kept(title, part.rstrip() + "\n", verdict, seconds))
    return out


def splice(old: str, new: Sequence[Section]) -> list[Section | Kept]:
    """The old file's sections with those measured now replaced (or added), title order."""
    fresh: dict[str, Section | Kept] = {s.title: s for s in new}
    merged: dict[str, Section | Kept] = {k.title: k for k in kept_sections(old)}
    merged.update(fresh)
    return [merged[t] for t in sorted(merged)]


# --- the header ---------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024**2:.1f} GiB"
    except (OSError, ValueError):
        pass
    return "unknown"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def header(command: str) -> str:
    """Date, machine, versions, the command, and how to read the figures."""
    cores = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    load = _load()
    versions = ", ".join(f"{p} {_version(p)}" for p in ("numpy", "scipy", "networkx", "simpy"))
    now = dt.datetime.now(dt.UTC).astimezone()
    lines = [
        "# protomesh benchmarks",
        "",
        f"Generated by `{command}` (`make bench` runs it after the `slow`/`bench` tests). "
        "`--only NAME` measures one section again and keeps the others; each section says "
        "when, at which commit, on which processor and under which load it was measured.",
        "",
        f"- Date: {now:%Y-%m-%d %H:%M %Z}; commit {_commit()} (the working tree may hold "
        "uncommitted changes)",
        f"- Machine: {_cpu_model()}, {cores} cores ({usable} usable), {_memory()} RAM, "
        f"{platform.system()} {platform.release()}; load average at start {load}",
        f"- Python {platform.python_version()} ({platform.python_implementation()}); {versions}",
        "",
        "Figures are medians (with p90 where shown) measured side by side in one run, "
        "interleaved query by query, on a shared and noisy machine: absolute times move "
        "from run to run, so quote the ratios between the two sides of a row rather than "
        "the times themselves.",
        "",
    ]
    return "\n".join(lines)


def render(sections: Sequence[Section | Kept], command: str) -> str:
    """The whole file: header, a summary table, then each section."""
    summary = table(
        ["Benchmark", "Verdict", "Time (s)"],
        [[f"[{s.title}](#{_anchor(s.title)})", s.verdict, f"{s.seconds:.1f}"] for s in sections],
        "llr",
    )
    parts = [header(command), summary, ""] + [s.render() for s in sections]
    return "\n".join(parts).rstrip() + "\n"


def _anchor(title: str) -> str:
    keep = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return keep.replace(" ", "-")


# --- command line -------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run the selected benchmarks, write the file; the exit status."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, few queries")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this benchmark (repeatable or comma-separated); known: "
        + ", ".join(discover()),
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "BENCHMARKS.md", help="default: BENCHMARKS.md"
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when a benchmark misses a target"
    )
    args = parser.parse_args(argv)
    known = discover()
    wanted = [n.strip().removeprefix(PREFIX) for item in args.only for n in item.split(",")]
    wanted = [n for n in wanted if n]
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)} (known: {', '.join(known)})")
    names = [n for n in known if not wanted or n in wanted]
    shown = list(sys.argv[1:] if argv is None else argv)
    command = shlex.join(["python", "-m", "benchmarks.run", *shown])
    sections: list[Section] = []
    for name in names:
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        section = run_one(name, args.quick)
        print(f"[bench] {name}: {section.verdict} in {section.seconds:.1f} s", file=sys.stderr)
        if section.error:
            print(section.error, file=sys.stderr)
        sections.append(section)
    written: Sequence[Section | Kept] = sections
    if wanted and args.out.exists():
        written = splice(args.out.read_text(encoding="utf-8"), sections)
    args.out.write_text(render(written, command))
    print(f"[bench] wrote {args.out}", file=sys.stderr)
    if any(s.error is not None for s in sections):
        return 1
    return 1 if args.strict and any(s.passed is False for s in sections) else 0


if __name__ == "__main__":
    # Run the package's copy so bench modules and this script share one Section class.
    from benchmarks import run as _self

    sys.exit(_self.main())
