"""Benchmark: ``compare --executor dask`` on a local cluster against ``--jobs 2``.

A ``distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` is
started once (its start-up is not timed: a cluster outlives the commands it serves);
then, alternating, ``python -m sim compare scenarios/<name>.yaml --force`` with
``--jobs 2`` and with ``--executor dask --scheduler <address>``, each in a fresh process.
Wall seconds, median of the rounds; the ratio is the median of each round's own
(dask / jobs 2), the target issue 36's: ≤ 1.2. The Dask workers hold a scenario across
commands, so from the second round on the same scenario is not sent again; each round
also runs both sides once more with ``--set seed=<1000 + round>``, a scenario new to the
workers (sent, unpickled and built by them), whose ratio is shown beside (not a target).
The summaries of the two sides must be byte-identical (checked every round). The
``--jobs 2`` over ``--jobs 1`` rows are in the engine section (:mod:`benchmarks.bench_engine`).

``python -m benchmarks.bench_parallel [--quick] [--rounds N] [SCENARIO ...]`` prints
the table alone.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.bench_engine import _child, _median
from benchmarks.run import Section, table

#: The scenarios measured, and the most the Dask side may take (× ``--jobs 2``'s wall).
CASES: tuple[tuple[str, float], ...] = (("large_mesh", 1.2), ("train_booking", 1.2))

HEADER = [
    "scenario",
    "--jobs 2: wall s",
    "dask, 2 workers: wall s",
    "dask / jobs 2",
    "target",
    "new to the workers: jobs 2 / dask wall s",
    "new: dask / jobs 2",
]


def _side(name: str, extra: list[str], tmp: Path, tag: str) -> tuple[float, bytes]:
    """(wall s, summary.json bytes) of one ``compare`` run into ``tmp/tag``."""
    out = tmp / tag
    args = ["-m", "sim", "compare", f"scenarios/{name}.yaml", "--out", str(out)]
    _, wall, _ = _child([*args, "--quiet", "--force", *extra])
    return wall, (out / "summary.json").read_bytes()


def rows(
    quick: bool, rounds: int | None = None, names: tuple[str, ...] = ()
) -> tuple[list[list[str]], bool]:
    """The table's rows and whether every target is met (see the module)."""
    from distributed import LocalCluster

    cases = [(n, t) for n, t in CASES if not names or n in names]
    shorter = ["--replications", "2", "--set", "duration=300"] if quick else []
    out, passed = [], True
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        tempfile.TemporaryDirectory() as folder,
    ):
        tmp = Path(folder)
        dask = ["--executor", "dask", "--scheduler", str(cluster.scheduler_address)]
        for name, target in cases:
            walls: dict[str, list[float]] = {"jobs": [], "dask": [], "jobs-new": [], "dask-new": []}
            for k in range(rounds or (1 if quick else 3)):
                new = ["--set", f"seed={1000 + k}"]  # a fingerprint no worker holds
                pairs = [
                    [("jobs", ["--jobs", "2"]), ("dask", dask)],
                    [("jobs-new", ["--jobs", "2", *new]), ("dask-new", [*dask, *new])],
                ]
                for pair in pairs:
                    summaries: dict[str, bytes] = {}
                    for tag, extra in pair if k % 2 == 0 else pair[::-1]:
                        wall, summaries[tag] = _side(name, [*extra, *shorter], tmp, tag)
                        walls[tag].append(wall)
                    if len(set(summaries.values())) != 1:
                        raise AssertionError(f"{name}: dask's summary.json differs from --jobs 2's")
            ratio, fresh = (
                _median([d / j for d, j in zip(walls[d], walls[j], strict=True)])
                for j, d in (("jobs", "dask"), ("jobs-new", "dask-new"))
            )
            ok = ratio <= target
            passed &= ok
            out.append(
                [
                    name,
                    f"{_median(walls['jobs']):.1f}",
                    f"{_median(walls['dask']):.1f}",
                    f"**{ratio:.2f}×**",
                    f"≤ {target}×: {'yes' if ok else 'no'}",
                    f"{_median(walls['jobs-new']):.1f} / {_median(walls['dask-new']):.1f}",
                    f"{fresh:.2f}×",
                ]
            )
    return out, passed


def run(quick: bool) -> Any:
    """The BENCHMARKS.md section."""
    before = os.getloadavg()
    found, passed = rows(quick)
    after = os.getloadavg()
    return Section(
        title="Dask: a local cluster against --jobs 2",
        command="python -m benchmarks.run --only parallel" + (" --quick" if quick else ""),
        table=table(HEADER, found),
        notes=[
            "A LocalCluster(n_workers=2, threads_per_worker=1, processes=True) started once "
            "(not timed); `compare --force` with `--jobs 2` and with `--executor dask "
            "--scheduler ADDRESS` alternating in fresh processes, the scenario's "
            "replications; wall seconds, medians of "
            f"{1 if quick else 3} round(s); the ratio is the median of each round's own; "
            "the two summary.json byte-identical every round. 'New to the workers': the "
            "same pair with `--set seed=<1000 + round>` in each round, a scenario the "
            "workers do not hold yet (not a target: the workers receive, unpickle and "
            "build it, which a forked pool inherits from its parent).",
            "The Dask workers hold each scenario by fingerprint across commands (sent "
            "only to the workers lacking it) and each run is submitted under an explicit "
            "key, pure=False: nothing is tokenized by pickling.",
            f"Load average (1, 5, 15 min) {before[0]:.2f}, {before[1]:.2f}, {before[2]:.2f} "
            f"before, {after[0]:.2f} after, on {os.cpu_count()} cores.",
        ],
        passed=passed,
    )


if __name__ == "__main__":
    argv = sys.argv[1:]
    count = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else None
    skip = {i + 1 for i, a in enumerate(argv) if a == "--rounds"}
    picked = tuple(a for i, a in enumerate(argv) if not a.startswith("--") and i not in skip)
    load = os.getloadavg()[0]
    found, ok = rows("--quick" in argv, count, picked)
    print(table(HEADER, found))
    print(f"load average (1 min) {load:.1f} before, {os.getloadavg()[0]:.1f} after; ok={ok}")
