"""The Dask executor: each scenario scattered once, each task submitted under an explicit
key, so that Dask never names a task by tokenizing (pickling) its arguments; the results
the bytes a process pool writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sim.experiments.compare import build_tasks, run_compare
from sim.experiments.runner import Task, execute_task, make_executor
from sim.experiments.sweep import expand, load_points
from sim.scenario import load_scenario
from sim.scenario.model import Scenario
from tests.harness.small_mesh import SMALL_FILE as SMALL


def _heavy(args: tuple[Any, ...]) -> list[str]:
    """The names of the types in ``args`` (one level into tuples) that carry a scenario."""
    found = []
    for arg in args:
        for item in arg if isinstance(arg, tuple) else (arg,):
            if isinstance(item, Task | Scenario):
                found.append(type(item).__name__)
    return found


def test_dask_scatters_the_scenario_and_names_every_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("distributed")
    client_module = pytest.importorskip("distributed.client")
    tokenized: list[str] = []
    real = client_module.tokenize

    def spy(*args: Any, **kwargs: Any) -> str:
        tokenized.extend(_heavy(args))
        return str(real(*args, **kwargs))

    monkeypatch.setattr(client_module, "tokenize", spy)
    scenario = load_scenario(SMALL)
    points = load_points(SMALL, scenario, expand(scenario, []))[0]
    routers = scenario.router_names[:1]
    local = make_executor("local", 1)
    run_compare(scenario, points, routers, 2, tmp_path / "local", local, plots=False)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        handle = make_executor("dask", 2, cluster.scheduler_address)
        try:
            run_compare(scenario, points, routers, 2, tmp_path / "dask", handle, plots=False)
            assert tokenized == []  # neither a task nor a scenario was hashed
            # the spy sees what a plain submit hashes: the task, its scenario inside
            task = build_tasks(tmp_path / "plain", points, routers, 1)[0]
            handle.executor.submit(execute_task, task).result()
            assert tokenized == ["Task"]
        finally:
            handle.close()
    for name in ("summary.json", "summary.csv"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes()
    for rep in range(2):
        run = Path(routers[0], f"rep-{rep}", "trace.jsonl")
        assert (tmp_path / "local" / run).read_bytes() == (tmp_path / "dask" / run).read_bytes()
