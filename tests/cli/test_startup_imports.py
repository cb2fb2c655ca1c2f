"""The command line imports only what the command needs (issue 10).

Each command runs in a fresh interpreter that writes ``sorted(sys.modules)`` at exit;
the test compares the heavy modules among them with the set the command is allowed.
Deterministic (module names, not times): the CPU figures are in ``make bench``
(benchmarks/bench_startup.py). docs/architecture.md says which command imports what.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "scenarios/train_booking.yaml"

#: Modules that cost start-up time, and the protomesh packages that pull them in.
HEAVY: tuple[str, ...] = (
    "a2a",
    "anyio",
    "dask",
    "distributed",
    "jsonschema",
    "matplotlib",
    "mcp",
    "msgspec",
    "networkx",
    "numpy",
    "opentelemetry",
    "google.protobuf",
    "pydantic",
    "rich",
    "scipy",
    "scipy.stats",
    "simpy",
    "yaml",
    "sim.conformance",
    "sim.engine",
    "sim.experiments",
    "sim.mesh",
    "sim.scenario",
)

LOADER = {"yaml", "pydantic", "sim.scenario"}

#: What each command may import: the scenario loader, plus the routers (numpy and
#: scipy.sparse, never scipy.stats) for ``validate`` and ``route``, plus the trace reader
#: (msgspec) for ``check``. Nothing imports the engine, the plots, the MCP SDK or Dask.
ALLOWED: dict[str, set[str]] = {
    "--help": set(),
    "validate": LOADER | {"sim.mesh", "numpy", "scipy"},  # it routes every task (issue 37)
    "route": LOADER | {"sim.mesh", "numpy", "scipy"},
    "check": LOADER | {"sim.conformance", "msgspec"},
}

_PROBE = """
import atexit, json, runpy, sys
def _dump(path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(sorted(sys.modules), f)
atexit.register(_dump, sys.argv[1])
sys.argv = ["sim", *sys.argv[2:]]
runpy.run_module("sim", run_name="__main__", alter_sys=True)
"""


#: The modules a command imported, and how it ended.
Imported = tuple[set[str], subprocess.CompletedProcess[str]]


def _imported(args: list[str], tmp_path: Path) -> Imported:
    """The modules ``python -m sim ARGS`` has imported when it exits."""
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(out), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=False,
    )
    assert out.exists(), f"`{' '.join(args)}` did not exit normally:\n{done.stderr}"
    return set(json.loads(out.read_text(encoding="utf-8"))), done


def _heavy(modules: set[str]) -> set[str]:
    return {name for name in HEAVY if name in modules}


def _assert_imports(command: str, args: list[str], tmp_path: Path, exit_code: int) -> None:
    _assert_allowed(command, _imported(args, tmp_path), exit_code)


def _assert_allowed(command: str, imported: Imported, exit_code: int) -> None:
    modules, done = imported
    assert done.returncode == exit_code, f"`{command}`: {done.stderr}"
    heavy = _heavy(modules)
    extra = sorted(heavy - ALLOWED[command])
    assert not extra, f"`{command}` imports {', '.join(extra)}, which it does not need"
    missing = sorted(ALLOWED[command] - heavy)
    assert not missing, (
        f"`{command}` no longer imports {', '.join(missing)}: tighten ALLOWED (and the docs)"
    )


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short run's trace of the default scenario (made in this process: only the
    commands whose imports are counted run in a fresh interpreter)."""
    from sim.engine import run_replication
    from sim.scenario import load_scenario

    out = tmp_path_factory.mktemp("run")
    scenario = load_scenario(ROOT / SCENARIO).model_copy(update={"duration": 60.0})
    run_replication(scenario, "dijkstra", 0, out)
    return out / "trace.jsonl"


@pytest.fixture(scope="module")
def validated(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """What ``validate SCENARIO`` imports (one interpreter for the two tests reading it)."""
    return _imported(["validate", SCENARIO], tmp_path_factory.mktemp("validate"))


def test_help_imports_nothing_heavy(tmp_path: Path) -> None:
    _assert_imports("--help", ["--help"], tmp_path, 0)


def test_validate_imports_the_loader_and_the_routers(validated: Imported) -> None:
    _assert_allowed("validate", validated, 0)


def test_route_imports_the_loader_and_the_routers(tmp_path: Path) -> None:
    args = ["route", SCENARIO, "--from", "planner", "--to", "tickets"]
    _assert_imports("route", args, tmp_path, 0)


def test_check_imports_the_loader_and_the_trace_reader(tmp_path: Path, trace: Path) -> None:
    _assert_imports("check", ["check", str(trace), "--scenario", SCENARIO], tmp_path, 0)


#: What a simulation never needs: the protocol SDKs and OpenTelemetry (import/export/serve).
ECOSYSTEM = {"a2a", "mcp", "opentelemetry", "google.protobuf"}


#: What ``run`` never needs: it draws no page (the page's layout, by networkx).
NOT_IN_RUN = {"networkx"}


def test_run_imports_no_protocol_sdk(tmp_path: Path) -> None:
    """A simulation needs no SDK (the probe's sight: test_the_probe_sees_...), nor what
    lays out a page."""
    tiny = "tests/fixtures/scenarios/live_tiny.yaml"
    args = ["run", tiny, "--replications", "1", "--trace", "off", "--out", str(tmp_path / "r")]
    modules, done = _imported(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert not ECOSYSTEM & _heavy(modules), sorted(ECOSYSTEM & _heavy(modules))
    assert not NOT_IN_RUN & modules, sorted(NOT_IN_RUN & modules)


def test_the_probe_sees_what_a_command_imports(tmp_path: Path) -> None:
    """The instrumentation is real: ``schema`` builds the models, so it shows them."""
    modules, done = _imported(["schema"], tmp_path)
    assert done.returncode == 0
    assert {"pydantic", "sim.scenario"} <= _heavy(modules)
    assert "pydantic" not in _heavy(_imported(["--version"], tmp_path)[0])


@pytest.mark.parametrize("package", ["sim", "sim.calculus", "sim.view"])
def test_a_lazy_package_resolves_every_public_name(package: str) -> None:
    """Names are imported on first use: each one in ``__all__`` must be found."""
    import importlib

    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert not missing, f"{package} does not resolve {', '.join(missing)}"
    with pytest.raises(AttributeError):
        module.__getattr__("no_such_name")


def test_validate_loads_only_the_calculus_it_needs(validated: Imported) -> None:
    modules, _ = validated
    unused = sorted(
        m for m in ("sim.calculus.bisim", "sim.calculus.phi", "sim.properties") if m in modules
    )
    assert not unused, f"`validate` imports {', '.join(unused)}, which it does not need"


def test_validate_of_a_barabasi_albert_mesh_imports_no_networkx(tmp_path: Path) -> None:
    """The large meshes' generator is grown without networkx (sim/scenario/structure.py)."""
    text = (ROOT / "scenarios/large_mesh.yaml").read_text(encoding="utf-8")
    assert "agents: 10000" in text and "generator: barabasi_albert" in text
    small = tmp_path / "small_mesh.yaml"
    small.write_text(text.replace("agents: 10000", "agents: 200"), encoding="utf-8")
    modules, done = _imported(["validate", str(small)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "networkx" not in modules
