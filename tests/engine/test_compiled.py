"""The compiled engine: when a build may run, how it is found, and that it gives the
pure-Python engine's bytes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sim.engine
from sim.engine import compiled, run_replication
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def build(tmp_path: Path) -> Path:
    """A current build's manifest and files (empty files: nothing loads them here)."""
    native = tmp_path / "_native"
    native.mkdir()
    sources = {m: compiled.digest(m) for m in compiled.MODULES}
    manifest = {"suffix": compiled._SUFFIX, "mypy": "x", "sources": sources}
    (native / "manifest.json").write_text(json.dumps(manifest))
    for file in compiled._files().values():
        (native / file).write_bytes(b"")
    return native


def test_a_current_build_may_run(build: Path) -> None:
    assert compiled.check(build) is None


def test_no_build_is_named(tmp_path: Path) -> None:
    assert compiled.check(tmp_path / "nothing") == "not built (make native)"


def test_a_build_older_than_a_source_names_the_module(build: Path) -> None:
    manifest = json.loads((build / "manifest.json").read_text())
    manifest["sources"]["transport"] = hashlib.sha256(b"an older transport").hexdigest()
    (build / "manifest.json").write_text(json.dumps(manifest))
    assert compiled.check(build) == "older than the source of transport (make native)"


def test_a_build_of_another_interpreter_is_refused(build: Path) -> None:
    manifest = json.loads((build / "manifest.json").read_text())
    manifest["suffix"] = ".cpython-39-x86_64-linux-gnu.so"
    (build / "manifest.json").write_text(json.dumps(manifest))
    assert (
        compiled.check(build) == "built for another interpreter (.cpython-39-x86_64-linux-gnu.so)"
    )


def test_a_missing_extension_is_named(build: Path) -> None:
    (build / f"loop{compiled._SUFFIX}").unlink()
    assert compiled.check(build) == f"incomplete: loop{compiled._SUFFIX} missing (make native)"


def test_a_stale_build_leaves_the_source_running(
    build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compiled, "state", compiled.state)
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    (build / "manifest.json").write_text("{not json")
    finders = list(sys.meta_path)
    assert compiled.activate(build) == "pure (the compiled engine is not built (make native))"
    assert sys.meta_path == finders


def test_protomesh_pure_wins_over_a_current_build(
    build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compiled, "state", compiled.state)
    monkeypatch.setenv(compiled.PURE_ENV, "1")
    assert compiled.activate(build) == f"pure ({compiled.PURE_ENV} is set)"


def test_the_finder_finds_the_build_s_modules_and_nothing_else(build: Path) -> None:
    finder = compiled._Finder(build)
    spec = finder.find_spec("sim.engine.transport")
    assert spec is not None and spec.origin == str(build / f"transport{compiled._SUFFIX}")
    group = finder.find_spec(f"{compiled.GROUP}__mypyc")
    assert group is not None and group.origin == str(
        build / f"{compiled.GROUP}__mypyc{compiled._SUFFIX}"
    )
    assert finder.find_spec("sim.engine.paths") is None  # not compiled
    assert finder.find_spec("json") is None


def test_the_running_engine_is_the_build_or_says_why_not() -> None:
    """Whatever is built: the compiled modules run when the build matches; else every
    module runs from its source and ``state`` names why."""
    for module in compiled.MODULES:
        path = getattr(sim.engine, module).__file__
        if compiled.state == "compiled":
            assert path.endswith(compiled._SUFFIX), module
        else:
            assert path.endswith(".py"), module
    assert compiled.state == "compiled" or compiled.state.startswith("pure (")


#: A run in a fresh interpreter: its trace's and metrics' SHA-256, and which engine ran.
_CHILD = """
import hashlib, sys
from pathlib import Path
from sim.engine import compiled, run_replication
from sim.scenario import load_scenario
out = Path(sys.argv[3])
run_replication(load_scenario(sys.argv[1]), sys.argv[2], 1, out, "full")
print(compiled.state.split()[0])
for name in ("trace.jsonl", "metrics.json"):
    print(hashlib.sha256((out / name).read_bytes()).hexdigest())
"""


@pytest.mark.parametrize(
    ("scenario", "router"),
    [
        ("train_booking", "dijkstra"),
        ("gateway_failover", "resilient"),
        ("travel_mesh", "semantic"),
        ("mcp_vs_mcp_plus", "bfs"),
    ],
)
def test_the_compiled_and_the_pure_engine_write_the_same_bytes(
    scenario: str, router: str, tmp_path: Path
) -> None:
    """The engine this suite runs (compiled when built, else the source) and the pure
    engine in a fresh interpreter write the same bytes."""
    file = ROOT / "scenarios" / f"{scenario}.yaml"
    run_replication(load_scenario(file), router, 1, tmp_path / "compiled", "full")
    ours = [
        hashlib.sha256((tmp_path / "compiled" / name).read_bytes()).hexdigest()
        for name in ("trace.jsonl", "metrics.json")
    ]
    env = {**os.environ, compiled.PURE_ENV: "1"}
    args = [sys.executable, "-c", _CHILD, str(file), router, str(tmp_path / "pure")]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    state, *theirs = done.stdout.split()
    assert state == "pure" and theirs == ours


def test_a_failed_build_names_the_compiler_s_last_lines_and_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        compiled, "_SETUP", "import sys\nprint('cc: no such compiler')\nsys.exit(3)\n"
    )
    with pytest.raises(compiled.BuildError) as failed:
        compiled.build(tmp_path / "_native")
    assert str(failed.value) == "mypyc failed (exit 3):\ncc: no such compiler"
    assert not (tmp_path / "_native").exists()


def test_native_build_exits_1_with_a_message_when_the_build_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim.cli import main

    def fail(native: Path = compiled.NATIVE) -> Path:
        raise compiled.BuildError("mypy, which carries mypyc, is not installed (pip install mypy)")

    monkeypatch.setattr(compiled, "build", fail)
    assert main(["native", "build"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "the compiled engine was not built: mypy, which carries mypyc, is not installed "
        "(pip install mypy)",
        "the pure-Python engine runs (the same results, slower)",
    ]


def test_native_status_says_which_engine_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    assert main(["native", "status"]) == 0
    why = compiled.check()
    assert capsys.readouterr().out.splitlines() == [
        f"running: {compiled.state}",
        "build: current" if why is None else f"build: {why}",
    ]


@pytest.mark.slow
def test_a_build_compiles_every_module_and_records_their_sources(tmp_path: Path) -> None:
    native = compiled.build(tmp_path / "_native")  # about 30 s: mypyc and the C compiler
    assert compiled.check(native) is None
    manifest = json.loads((native / "manifest.json").read_text())
    assert manifest["sources"] == {m: compiled.digest(m) for m in compiled.MODULES}
    assert sorted(p.name for p in native.iterdir()) == sorted(
        [*compiled._files().values(), "manifest.json"]
    )
