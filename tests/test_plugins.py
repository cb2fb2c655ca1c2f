"""Router plug-ins (SPEC §12): the example package on the path, its routes in every
command, and the located errors of a plug-in that cannot be used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sim.admission import load_scenario, parse_scenario
from sim.cli import main
from sim.mesh import ProtocolGraph, RouterError, make_router
from sim.mesh.routing import DijkstraRouter
from sim.scenario import ScenarioError
from tests.harness.plugin_commands import EXAMPLE, REPO, assert_one_error, sim

SCENARIO = EXAMPLE / "scenario.yaml"
AVOIDED = "gw1"


# --- the example package on the path: in this process (its pool forks), and in `python -m sim`


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example package importable in this process (and the pool workers it forks), as
    PYTHONPATH makes it for ``python -m sim`` (the tests below that start one)."""
    monkeypatch.syspath_prepend(str(EXAMPLE))


def _route(capsys: pytest.CaptureFixture[str], target: str, router: str) -> dict[str, Any]:
    capsys.readouterr()
    code = main(
        ["route", str(SCENARIO), "--from", "planner", "--to", target, "--router", router, "--json"]
    )
    done = capsys.readouterr()
    assert code == 0, done.err
    route: dict[str, Any] = json.loads(done.out)
    return route


@pytest.mark.usefixtures("on_path")
def test_route_avoids_the_agent_its_edge_cost_hides(capsys: pytest.CaptureFixture[str]) -> None:
    for target in ("tickets", "accounts", "book_train"):
        route = _route(capsys, target, "detour")
        assert route["router"] == "detour"
        assert AVOIDED not in route["path"] and route["path"][0] == "planner"
    # dijkstra on the same mesh goes through gw1: the plug-in changed the route
    assert AVOIDED in _route(capsys, "tickets", "dijkstra")["path"]


def test_plan_lists_the_plugin_beside_the_built_in_routers() -> None:
    done = sim("plan", str(SCENARIO))
    assert done.returncode == 0, done.stderr
    sections = done.stdout.split("router ")
    names = [s.split("\n", 1)[0] for s in sections[1:]]
    assert names == ["dijkstra", "resilient", "detour"]
    detour = sections[3]
    assert "planner -" in detour and AVOIDED not in detour


@pytest.mark.usefixtures("on_path")
def test_run_and_compare_with_the_plugin(tmp_path: Path) -> None:
    argv = ["run", str(SCENARIO), "--router", "detour", "--replications", "1", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 0
    metrics = json.loads((tmp_path / "run" / "detour" / "rep-0" / "metrics.json").read_text())
    assert metrics["router"] == "detour" and metrics["hops_by_link"]
    assert not [link for link in metrics["hops_by_link"] if AVOIDED in link.split("|")]
    out = tmp_path / "compare"
    argv = ["compare", str(SCENARIO), "--replications", "1", "--jobs", "2", "--quiet"]
    assert main([*argv, "--no-plots", "--out", str(out)]) == 0  # the workers run detour too
    summary = json.loads((out / "summary.json").read_text())
    assert summary["routers"] == ["dijkstra", "resilient", "detour"]
    used: dict[str, set[str]] = {}
    for router in summary["routers"]:
        hops = json.loads((out / router / "rep-0" / "metrics.json").read_text())["hops_by_link"]
        used[router] = {end for link in hops for end in link.split("|")}
    assert AVOIDED in used["dijkstra"] and AVOIDED not in used["detour"]

    # the traces record every send (its path) and hop (its ends): detour's never name gw1
    def mentions(router: str) -> int:
        count = 0
        for line in (out / router / "rep-0" / "trace.jsonl").read_text().splitlines():
            event = json.loads(line)
            if event["label"] in ("send", "hop"):
                detail = event["detail"]
                ends = {event["agent"], detail.get("from"), detail["to"], *detail.get("path", ())}
                count += AVOIDED in ends
        return count

    assert mentions("dijkstra") > 0 and mentions("detour") == 0


def test_an_unknown_router_name_on_the_command_line_is_exit_2() -> None:
    done = sim("route", str(SCENARIO), "--from", "planner", "--to", "tickets", "--router", "detuor")
    assert done.returncode == 2
    assert "unknown router 'detuor' (did you mean 'detour'?)" in done.stderr


# --- plug-ins that cannot be used ----------------------------------------------------------


class NegativeRouter(DijkstraRouter):
    """A broken plug-in: every hop costs -1."""

    def edge_cost(self, u: str, v: str, protocol: str, latency: float) -> float | None:
        return -1.0


class RaisingRouter(DijkstraRouter):
    """A broken plug-in: its translation hook raises."""

    def translation_cost(self, node: str, f: str, t: str, tau: float) -> float | None:
        raise ZeroDivisionError("oops")


def _with_routers(entries: str) -> str:
    text = SCENARIO.read_text(encoding="utf-8")
    start = text.index("routers:\n")
    end = text.index("protocols:")
    return text[:start] + f"routers:\n{entries}" + text[end:]


@pytest.mark.parametrize(
    ("entry", "where", "words"),
    [
        (
            '  - {name: mine, plugin: "no_such_module:Router"}\n',
            "routers[0].plugin",
            ["cannot import 'no_such_module'"],
        ),
        (
            '  - {name: mine, plugin: "sim.mesh.route:Route"}\n',
            "routers[0].plugin",
            ["is not a router"],
        ),
        (
            '  - {name: mine, plugin: "sim.mesh.routing:NoSuchRouter"}\n',
            "routers[0].plugin",
            ["has no attribute 'NoSuchRouter'"],
        ),
        (
            '  - {name: mine, plugin: "sim.mesh.routing"}\n',
            "routers[0].plugin",
            ["package.module:Class"],
        ),
        (
            '  - {name: mine, plugin: "protomesh_detour:Detour", options: {avod: [gw1]}}\n',
            "routers[0].plugin",
            ["options do not fit Detour", "avod"],
        ),
        (
            '  - {name: dijkstra, plugin: "protomesh_detour:Detour"}\n',
            "routers[0].name",
            ["built-in router"],
        ),
        ("  - dijkstra\n  - resilent\n", "routers[1]", ["did you mean 'resilient'?"]),
        ("  - {name: bfs, options: {x: 1}}\n", "routers[0].options", ["options do not fit"]),
    ],
)
def test_a_plugin_that_cannot_be_used_is_a_located_error(
    entry: str, where: str, words: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    with pytest.raises(ScenarioError) as info:
        parse_scenario(_with_routers(entry), "plug.yaml")
    assert_one_error(info, where, words)


def test_validate_exits_2_on_a_plugin_that_cannot_be_imported(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(_with_routers('  - {name: mine, plugin: "nowhere:X"}\n'), encoding="utf-8")
    done = sim("validate", str(path))
    assert done.returncode == 2
    assert f"{path}:" in done.stderr and "routers[0].plugin" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("cls", "words"),
    [
        ("NegativeRouter", ["router 'broken'", "edge_cost(", "returned -1.0", "≥ 0"]),
        ("RaisingRouter", ["router 'broken'", "translation_cost(", "ZeroDivisionError: oops"]),
    ],
)
def test_a_bad_cost_is_an_error_naming_the_plugin(cls: str, words: list[str]) -> None:
    scenario, _ = parse_scenario(
        _with_routers(f'  - {{name: broken, plugin: "tests.test_plugins:{cls}"}}\n'), "plug.yaml"
    )
    router = make_router("broken", ProtocolGraph.from_scenario(scenario), scenario)
    assert router.name == "broken"
    with pytest.raises(RouterError) as info:
        router.route("planner", "tickets")
    for word in words:
        assert word in str(info.value), str(info.value)


def test_a_bad_cost_in_a_run_is_a_recorded_failed_replication(tmp_path: Path) -> None:
    scenario = tmp_path / "neg.yaml"
    scenario.write_text(
        _with_routers('  - {name: broken, plugin: "tests.test_plugins:NegativeRouter"}\n'),
        encoding="utf-8",
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sim",
            "run",
            str(scenario),
            "--replications",
            "1",
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    error = json.loads((tmp_path / "out" / "broken" / "rep-0" / "error.json").read_text())
    assert error["router"] == "broken"
    assert "router 'broken'" in error["error"] and "returned -1.0" in error["error"]


def test_the_registry_builds_plugins_with_their_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    scenario = load_scenario(SCENARIO)
    graph = ProtocolGraph.from_scenario(scenario)
    router = make_router("detour", graph, scenario)
    assert type(router).__name__ == "Detour" and router.static is False
    assert router.avoid == frozenset({AVOIDED})  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="unknown router 'detuor' \\(did you mean 'detour'"):
        make_router("detuor", graph, scenario)
