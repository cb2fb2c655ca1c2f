"""The page's mesh (sim.view.mesh) is laid out at the first reading of its nodes: mapping
a run's events onto it (the page data a run stores) never lays it out, and the layout,
when made, is the one made at once (seeded)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from sim.engine import run_replication
from sim.scenario import load_scenario
from sim.view import mesh as mesh_module
from sim.view.fragment import PagePass
from sim.view.mesh import Mesh, mesh_from_scenario

ROOT = Path(__file__).resolve().parents[2]
SMALL_MESH = ROOT / "tests" / "fixtures" / "scenarios" / "small_mesh.yaml"


def _agents(n: int) -> tuple[list[tuple[str, str, list[str]]], list[tuple[str, str, list[str]]]]:
    """``n`` agents on a line, alternately gateways and tool servers."""
    agents = [(f"a{i}", "GATEWAY" if i % 2 else "TOOL_SERVER", ["MCP"]) for i in range(n)]
    links = [(f"a{i}", f"a{i + 1}", ["MCP"]) for i in range(n - 1)]
    return agents, links


@pytest.mark.parametrize("n", [3, 60, 400], ids=["layered", "spring", "aggregated"])
def test_the_layout_is_made_at_the_first_reading_of_the_nodes_and_is_the_same(n: int) -> None:
    agents, links = _agents(n)
    mesh = Mesh(agents, links)
    assert not mesh.laid_out
    assert mesh.link_of("a0", "a1") == 0 and mesh.node_of("a1") is not None
    assert not mesh.laid_out
    nodes = mesh.to_json()["nodes"]
    assert mesh.laid_out and all({"x", "y"} <= set(node) for node in nodes)
    assert Mesh(agents, links).to_json() == mesh.to_json()


def test_the_page_data_of_a_run_never_lay_out_the_mesh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's events mapped onto the mesh, its fragment made: no layout (networkx is
    imported for it alone); shown failing when the fragment reads the nodes."""
    scenario = load_scenario(SMALL_MESH).model_copy(update={"duration": 20.0})
    run_replication(scenario, "dijkstra", 0, tmp_path, "full")

    def no_layout(*_: object) -> None:
        raise AssertionError("the mesh was laid out")

    monkeypatch.setattr(mesh_module, "_lay_out", no_layout)
    mesh = mesh_from_scenario(scenario)
    page = PagePass(mesh, float(scenario.duration), io.BytesIO())
    from sim.conformance.checks.stream import Checker

    checker = Checker("t", scenario, consumers=[page])
    checker.lines((tmp_path / "trace.jsonl").read_bytes())
    checker.report()
    fragment = page.fragment([], "digest")
    assert fragment["replay"]["hops"] and not mesh.laid_out
    with pytest.raises(AssertionError, match="laid out"):
        mesh.to_json()
