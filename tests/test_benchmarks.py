"""The benchmark harness: the mesh generator, the runner, and a quick smoke run.

The generator and runner tests are fast and run by default; the smoke test runs every
benchmark in quick mode (``-m bench``, selected by ``make bench``).
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from benchmarks import run as bench
from benchmarks.generate import PROTOCOLS, random_mesh


def test_random_mesh_is_connected_with_degree_four() -> None:
    graph = random_mesh(500, seed=3)
    assert len(graph) == 500
    assert len(graph.links) == 1000  # average degree 4
    shape = nx.Graph((link.a, link.b) for link in graph.links)
    assert shape.number_of_nodes() == 500 and nx.is_connected(shape)
    gateways = [a for a in graph.agents if a.type == "GATEWAY"]
    assert all(set(a.protocols) == set(PROTOCOLS) for a in gateways)
    assert 20 <= len(gateways) <= 90  # ~10%
    for link in graph.links:
        assert link.latency, "every link carries a protocol"
        shared = graph.agent(link.a).speaks & graph.agent(link.b).speaks
        assert set(link.latency) <= shared
        assert all(0.001 <= w <= 0.020 for w in link.latency.values())


def test_random_mesh_is_seeded() -> None:
    def shape(seed: int) -> list[tuple[str, str, dict[str, float]]]:
        return [(link.a, link.b, dict(link.latency)) for link in random_mesh(200, seed=seed).links]

    assert shape(1) == shape(1)
    assert shape(1) != shape(2)


def test_runner_discovers_routing() -> None:
    assert "routing" in bench.discover()


def test_a_failing_benchmark_is_reported_not_fatal(tmp_path: Path) -> None:
    section = bench.run_one("does_not_exist", quick=True)
    assert section.error is not None and "ModuleNotFoundError" in section.error
    text = bench.render([section], "python -m benchmarks.run")
    assert "**ERROR**" in text and "ModuleNotFoundError" in text
    assert "# protomesh benchmarks" in text and "Machine:" in text


def test_section_renders_its_table_and_notes() -> None:
    section = bench.Section(
        title="Demo",
        command="python -m benchmarks.run --only demo",
        table=bench.table(["n", "ms"], [[1, 2.5]]),
        notes=["a note"],
        passed=False,
    )
    text = section.render()
    assert text.startswith("## Demo")
    assert "| n | ms |" in text and "| 1 | 2.5 |" in text
    assert "**FAIL**" in text and "- a note" in text


@pytest.mark.bench
@pytest.mark.parametrize("name", bench.discover())
def test_benchmark_quick_smoke(name: str, tmp_path: Path) -> None:
    """Each benchmark runs in quick mode through the runner and renders a section."""
    out = tmp_path / "BENCHMARKS.md"
    assert bench.main(["--quick", "--only", name, "--out", str(out)]) == 0
    text = out.read_text()
    assert "**ERROR**" not in text, text
    assert text.startswith("# protomesh benchmarks")
    assert "\n## " in text and "| ---" in text  # a section with a markdown table
    assert f"--only {name}" in text
