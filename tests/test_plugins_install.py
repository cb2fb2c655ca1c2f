"""The example plug-in package installed, not put on the path (issue 11, item 2): pip installs
examples/plugins offline into a fresh virtual environment, whose entry points register
``detour``; ``compare`` there runs it by that name beside dijkstra and resilient, and its
routes never enter the agent it avoids."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.harness.plugin_commands import EXAMPLE

AVOIDED = "gw1"
#: about a minute (a venv, a pip build, a compare of three routers): make bench and .ci/run
pytestmark = pytest.mark.slow


def _python(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / "python"


def _run(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INDEX"] = "1"  # offline: nothing is fetched
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with protomesh (this one's, through a ``.pth`` that adds this
    environment's site-packages) and the example package installed by pip."""
    pytest.importorskip("wheel", reason="building the example needs `wheel` (the test extra)")
    work = tmp_path_factory.mktemp("plugin-install")
    source = work / "protomesh-detour"  # a copy: the build writes build/ and *.egg-info
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    venv = work / "venv"
    done = _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=work)
    assert done.returncode == 0, done.stderr
    py = _python(venv)
    done = _run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=work)
    host = sysconfig.get_paths()["purelib"]
    Path(done.stdout.strip(), "protomesh-host.pth").write_text(
        f"import site; site.addsitedir({host!r})\n", encoding="utf-8"
    )
    done = _run(
        sys.executable,
        *("-m", "pip", "--python", py, "install", "--quiet", "--no-deps"),
        *("--no-build-isolation", "--no-index", source),
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    return venv


def test_the_package_registers_its_router_in_its_environment_only(installed: Path) -> None:
    probe = (
        "import importlib.metadata as m; "
        "print(sorted(e.name for e in m.entry_points(group='protomesh.routers')))"
    )
    done = _run(_python(installed), "-c", probe, cwd=installed)
    assert done.returncode == 0, done.stderr
    assert "detour" in json.loads(done.stdout.replace("'", '"'))
    here = _run(sys.executable, "-c", probe, cwd=installed)  # this environment: not installed
    assert "detour" not in json.loads(here.stdout.replace("'", '"'))


def test_compare_runs_the_installed_router_by_name(installed: Path, tmp_path: Path) -> None:
    text = (EXAMPLE / "scenario.yaml").read_text(encoding="utf-8")
    entry = '{name: detour, plugin: "protomesh_detour:Detour", options: {avoid: [gw1]}}'
    assert entry in text
    scenario = tmp_path / "installed.yaml"  # by its entry-point name, no module path
    scenario.write_text(text.replace(entry, "{name: detour, options: {avoid: [gw1]}}"))
    out = tmp_path / "out"
    done = _run(
        _python(installed),
        *("-m", "sim", "compare", scenario, "--replications", "1", "--jobs", "1"),
        *("--set", "duration=300", "--out", out, "--quiet"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["routers"] == ["dijkstra", "resilient", "detour"] and not summary["errors"]
    used = {}
    for router in summary["routers"]:
        metrics = json.loads((out / router / "rep-0" / "metrics.json").read_text())
        assert metrics["router"] == router and metrics["workflows"]["started"] > 0
        used[router] = {end for link in metrics["hops_by_link"] for end in link.split("|")}
    assert AVOIDED in used["dijkstra"] and AVOIDED in used["resilient"]
    assert AVOIDED not in used["detour"] and used["detour"]
    for line in (out / "detour" / "rep-0" / "trace.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["label"] in ("send", "hop"):
            detail = event["detail"]
            assert AVOIDED not in {detail.get("from"), detail["to"], *detail.get("path", ())}
