"""The compiled engine (issue 34, item 5): built at build time, refused when stale, said by
``native status``, and giving the pure-Python engine's bytes."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import sim.engine
from sim import native
from sim.engine import run_replication
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def engine(tmp_path: Path) -> Path:
    """A copy of the engine's sources with a current build beside them (empty files:
    nothing loads them here)."""
    folder = tmp_path / "engine"
    folder.mkdir()
    for module in native.MODULES:
        shutil.copy2(native.SOURCE / f"{module}.py", folder)
        (folder / f"{module}{native.SUFFIX}").write_bytes(b"")
    record = {
        "suffix": native.SUFFIX,
        "mypy": "x",
        "sources": {m: native.digest(m, folder) for m in native.MODULES},
    }
    (folder / native.MANIFEST).write_text(json.dumps(record))
    return folder


FIX = "rebuild it (make native) or remove it (python -m sim native clean)"


def test_a_current_build_may_run(engine: Path) -> None:
    assert native.problem(engine) is None
    native.verify(engine)


def test_no_build_is_no_problem(engine: Path) -> None:
    native.clean(engine)
    assert native.built(engine) == [] and native.problem(engine) is None


def test_a_build_older_than_a_source_is_refused_naming_the_module(engine: Path) -> None:
    with (engine / "transport.py").open("a") as source:
        source.write("# edited\n")
    with pytest.raises(native.StaleBuild) as stale:
        native.verify(engine)
    assert str(stale.value) == f"the compiled engine is older than transport.py in {engine}: {FIX}"


def test_a_build_of_another_interpreter_is_refused(engine: Path) -> None:
    record = json.loads((engine / native.MANIFEST).read_text())
    record["suffix"] = ".cpython-39-x86_64-linux-gnu.so"
    (engine / native.MANIFEST).write_text(json.dumps(record))
    assert native.problem(engine) == (
        f"the compiled engine was built for .cpython-39-x86_64-linux-gnu.so, not "
        f"{native.SUFFIX}: {FIX}"
    )


def test_a_partial_build_or_one_without_its_manifest_is_refused(engine: Path) -> None:
    (engine / f"loop{native.SUFFIX}").unlink()
    assert native.problem(engine) == f"the compiled engine lacks loop: {FIX}"
    (engine / native.MANIFEST).unlink()
    assert native.problem(engine) == (
        f"the compiled engine in {engine} has no readable {native.MANIFEST}: {FIX}"
    )


def test_clean_removes_the_build_and_nothing_else(engine: Path) -> None:
    gone = native.clean(engine)
    assert len(gone) == len(native.MODULES) + 1
    assert sorted(p.name for p in engine.iterdir()) == sorted(f"{m}.py" for m in native.MODULES)


def test_the_running_engine_is_what_status_says() -> None:
    files = [getattr(sim.engine, m).__file__ for m in native.MODULES]
    said = native.status()
    if said.startswith("compiled"):
        assert all(f.endswith(native.SUFFIX) for f in files)
    else:
        assert said.startswith("pure (") and all(f.endswith(".py") for f in files)


def test_a_pure_copy_has_the_sources_and_no_build(tmp_path: Path) -> None:
    dest = native.pure_copy(tmp_path)
    engine = dest / "sim" / "engine"
    assert native.built(engine) == [] and not (engine / native.MANIFEST).exists()
    assert {m: native.digest(m, engine) for m in native.MODULES} == {
        m: native.digest(m) for m in native.MODULES
    }


#: A run in a fresh interpreter: which engine ran, its trace's and metrics' SHA-256.
CHILD = """
import hashlib, sys
from pathlib import Path
from sim import native
from sim.engine import run_replication
from sim.scenario import load_scenario
out = Path(sys.argv[3])
run_replication(load_scenario(sys.argv[1]), sys.argv[2], 1, out, "full")
print(native.status().split()[0])
for name in ("trace.jsonl", "metrics.json"):
    print(hashlib.sha256((out / name).read_bytes()).hexdigest())
"""


@pytest.mark.parametrize(
    ("scenario", "router"),
    [
        ("train_booking", "dijkstra"),
        ("gateway_failover", "resilient"),
        # SGD and translations (travel_mesh), plain MCP (mcp_vs_mcp_plus): in make bench
        # (the golden traces hold both engines to the same bytes there too)
        pytest.param("travel_mesh", "semantic", marks=pytest.mark.slow),
        pytest.param("mcp_vs_mcp_plus", "bfs", marks=pytest.mark.slow),
    ],
)
def test_the_running_and_the_pure_engine_write_the_same_bytes(
    scenario: str, router: str, tmp_path: Path
) -> None:
    """The engine this suite runs (compiled when built) and the pure engine (a copy of the
    sources without the build, in a fresh interpreter) write the same bytes."""
    file = ROOT / "scenarios" / f"{scenario}.yaml"
    run_replication(load_scenario(file), router, 1, tmp_path / "ours", "full")
    ours = [
        hashlib.sha256((tmp_path / "ours" / name).read_bytes()).hexdigest()
        for name in ("trace.jsonl", "metrics.json")
    ]
    args = ["-c", CHILD, str(file), router, str(tmp_path / "pure")]
    command, env = native.pure_command(tmp_path / "tree", *args)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    state, *theirs = done.stdout.split()
    assert state == "pure" and theirs == ours


def test_native_status_says_which_engine_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    assert main(["native", "status"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"running: {native.status()}"]


def test_native_build_without_a_checkout_names_the_wheel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim.native.build import BuildError, build_in_place

    with pytest.raises(BuildError) as failed:
        build_in_place(tmp_path)
    assert str(failed.value).startswith(f"no setup.py in {tmp_path}: an installed package")


def test_a_failed_build_leaves_no_build_behind(tmp_path: Path) -> None:
    from sim.native.build import BuildError, build_in_place

    engine = tmp_path / "sim" / "engine"
    engine.mkdir(parents=True)
    (engine / f"caller{native.SUFFIX}").write_bytes(b"old")
    (tmp_path / "setup.py").write_text("import sys\nprint('cc: no such compiler')\nsys.exit(3)\n")
    with pytest.raises(BuildError) as failed:
        build_in_place(tmp_path)
    assert str(failed.value) == "mypyc failed (exit 3):\ncc: no such compiler"
    assert list(engine.iterdir()) == []


@pytest.mark.parametrize("version", ["4.2.0", "5.0", "4.0.2", "4"])
def test_an_unknown_simpy_is_refused_loudly(version: str) -> None:
    from sim.engine.clock import check_simpy

    with pytest.raises(ImportError) as refused:
        check_simpy(version)
    assert str(refused.value) == (
        f"SimPy {version} is installed; protomesh's engine reads the private clock of "
        "SimPy 4.1 (install simpy>=4.1,<4.2)"
    )


def test_the_installed_simpy_is_known() -> None:
    import simpy

    from sim.engine.clock import check_simpy

    check_simpy(simpy.__version__)
    check_simpy("4.1.9")
