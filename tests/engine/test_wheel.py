"""The compiled engine travels in the wheel (issue 34, item 5): ``PROTOMESH_COMPILE=1``
builds a platform wheel that carries it, installed into a fresh virtual environment it
runs compiled and writes the golden bytes; a stale build is refused in one line."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from sim import native

ROOT = Path(__file__).resolve().parents[2]
SKIP = shutil.ignore_patterns(
    ".git",
    ".venv",
    "results",
    "build",
    "dist",
    "__pycache__",
    "*.so",
    native.MANIFEST,
    "*.egg-info",
)


def test_a_stale_build_is_refused_in_one_line_with_exit_2(tmp_path: Path) -> None:
    command, env = native.pure_command(tmp_path, "-m", "sim", "run", "scenarios/x.yaml")
    engine = tmp_path / "sim" / "engine"
    for module in native.MODULES:  # a "build" of other sources: never loaded
        (engine / f"{module}{native.SUFFIX}").write_bytes(b"")
    record = {
        "suffix": native.SUFFIX,
        "mypy": "x",
        "sources": {m: "0" * 64 for m in native.MODULES},
    }
    (engine / native.MANIFEST).write_text(json.dumps(record))
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.startswith("error: the compiled engine is older than caller.py, clock.py")
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.slow
def test_the_wheel_carries_the_compiled_engine_and_runs_it(tmp_path: Path) -> None:
    """About 2 minutes: mypyc and the C compiler, then a fresh environment."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=SKIP)
    env = {**os.environ, "PROTOMESH_COMPILE": "1"}
    pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run([*pip, "-w", str(tmp_path / "dist"), "."], cwd=tree, env=env, check=True)
    (wheel,) = (tmp_path / "dist").glob("protomesh-*.whl")
    assert wheel.name.endswith(f"-cp311-cp311-{sysconfig.get_platform().replace('-', '_')}.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for module in native.MODULES:
        assert f"sim/engine/{module}{native.SUFFIX}" in names
    assert f"sim/engine/{native.MANIFEST}" in names
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python3.*/site-packages"))
    deps = sysconfig.get_paths()["purelib"]  # this environment's dependencies, not protomesh
    (site / "deps.pth").write_text(deps + "\n")
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    subprocess.run([*install, "--no-deps", str(wheel)], check=True)
    run = [str(python), "-P", "-c"]
    status = subprocess.run(
        [*run, "import sim.engine; from sim import native; print(native.status())"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout.startswith("compiled (mypyc"), status.stdout + status.stderr
    golden = json.loads((ROOT / "tests" / "fixtures" / "golden_hashes.json").read_text())
    code = (
        "import sys; from pathlib import Path; from sim.engine import run_replication; "
        "from sim.scenario import load_scenario; "
        "run_replication(load_scenario(sys.argv[1]), 'dijkstra', 0, Path(sys.argv[2]), 'full')"
    )
    scenario = ROOT / "scenarios" / "train_booking.yaml"
    subprocess.run([*run, code, str(scenario), str(tmp_path / "out")], cwd=tmp_path, check=True)
    for name in ("trace.jsonl", "metrics.json"):
        ours = hashlib.sha256((tmp_path / "out" / name).read_bytes()).hexdigest()
        assert ours == golden["train_booking/dijkstra/full/rep-0"][name]
