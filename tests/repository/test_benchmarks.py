"""The benchmark harness: the mesh generator, the runner, and a quick smoke run.

The generator and runner tests are fast and run by default; the smoke test runs every
benchmark in quick mode (``-m bench``, selected by ``make bench``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import run as bench
from benchmarks.generate import PROTOCOLS, random_mesh


def test_random_mesh_is_connected_with_degree_four() -> None:
    graph = random_mesh(500, seed=3)
    assert len(graph) == 500
    assert len(graph.links) == 1000  # average degree 4
    import networkx as nx  # not at collection

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


def test_a_section_names_the_processor_it_was_measured_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bench, "_cpu_model", lambda: "Test CPU 9000")
    monkeypatch.setattr(bench, "_commit", lambda: "abc1234")
    section = bench.run_one("no_such_benchmark", quick=True)
    assert ", commit abc1234, Test CPU 9000, load average at start " in section.measured
    assert "Measured: " + section.measured in section.render()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_a_child_reports_its_own_peak_rss_not_its_parents() -> None:
    import subprocess
    import sys

    parent = b"\x01" * (300 << 20)  # 300 MiB resident in this process when it forks
    code = (
        "import resource; from benchmarks.memory import own_peak_rss; "
        "print(own_peak_rss(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=bench.ROOT, capture_output=True, text=True, check=True
    )
    own, inherited = map(int, done.stdout.split())
    assert len(parent) == 300 << 20
    assert inherited >= 300 << 20  # what the benchmarks reported before: the parent's
    assert own < 150 << 20  # an interpreter with nothing imported


def test_only_replaces_its_section_and_keeps_the_others() -> None:
    old_a = bench.Section(title="Alpha", command="a", table="| x |\n| ---: |\n| 1 |", passed=True)
    old_b = bench.Section(title="Beta", command="b", table="| y |\n| ---: |\n| 2 |", passed=False)
    old_b.seconds = 3.5
    old = bench.render([old_a, old_b], "python -m benchmarks.run")
    new_a = bench.Section(title="Alpha", command="a", table="| x |\n| ---: |\n| 9 |", passed=True)
    text = bench.render(bench.splice(old, [new_a]), "python -m benchmarks.run --only alpha")
    assert "| 9 |" in text and "| 1 |" not in text  # Alpha measured again
    assert "| 2 |" in text and "**FAIL** (ran in 3.5 s)" in text  # Beta kept as it was
    assert text.count("## Alpha") == 1 and text.count("## Beta") == 1
    assert "| [Beta](#beta) | FAIL | 3.5 |" in text  # the summary keeps its verdict and time


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


def test_conformance_replay_is_a_valid_longer_trace(tmp_path: Path) -> None:
    """The memory benchmark's generator: N fresh copies, ``seq`` strictly increasing,
    identifiers offset, and all seven checks hold on the concatenation."""
    import itertools
    import json

    from benchmarks.bench_conformance import SCENARIO, Replay
    from sim.conformance.checks import check_trace
    from sim.engine import run_replication
    from sim.scenario import load_scenario

    # every kind of line of the benchmark's replication: until both outages have ended
    # (gw1 600-900 s, the gw1-tickets link 1800-1860 s), about half of its 3,600 s
    scenario = load_scenario(SCENARIO).model_copy(update={"duration": 1900.0})
    run_replication(scenario, "dijkstra", 0, tmp_path / "rep", "full")
    data = (tmp_path / "rep" / "trace.jsonl").read_bytes()
    assert b'"label":"link_up"' in data and b'"label":"node_up"' in data
    replay = Replay.from_trace(data)
    assert list(replay.lines(1)) == data.splitlines()  # copy 0 is the trace itself
    lines = list(replay.lines(2))
    assert len(lines) == 2 * len(replay.rows)
    seqs = [int(line[line.index(b'"seq":') + 6 : line.index(b',"rep"')]) for line in lines]
    assert all(a < b for a, b in itertools.pairwise(seqs))
    first, second = json.loads(lines[1]), json.loads(lines[len(replay.rows) + 1])
    assert second["inst"] == first["inst"] + replay.insts
    assert second["inv"] == first["inv"] + replay.invs
    assert second["detail"]["msg"] == first["detail"]["msg"] + replay.msgs
    assert second["t"] == pytest.approx(first["t"] + replay.span)
    report = check_trace(iter(lines), scenario)
    assert report.events == len(lines)
    assert {v.name: v.violations for v in report.verdicts} == dict.fromkeys(
        (v.name for v in report.verdicts), 0
    )


@pytest.mark.slow  # the A/A runs of two engines: make bench, beside the benchmark it serves
def test_ab_pairs_the_rounds_and_reports_their_ratios() -> None:
    from benchmarks import ab

    assert ab.summary([110.0, 90.0, 100.0], [100.0, 100.0, 80.0]) == (
        "this: 100 hops/CPU-s, other: 100; ratio (this/other) median 1.100, "
        "rounds 0.900-1.250 (3 rounds)"
    )
    ours, theirs = ab.compare(ab.ROOT, 1, 40, 20, "protocol")  # A/A, one round
    assert len(ours) == len(theirs) == 1 and min(ours + theirs) > 0


def test_ab_names_the_engine_each_checkout_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sim.engine  # noqa: F401  (its modules loaded, compiled or not)
    from benchmarks import ab
    from sim import native

    assert ab.engine(ab.ROOT) == native.status()  # a fresh process runs what this one does
    old = tmp_path / "sim" / "engine"  # a checkout from before the compiled engine
    old.mkdir(parents=True)
    (tmp_path / "sim" / "__init__.py").write_text("")
    (old / "__init__.py").write_text("")
    assert ab.engine(tmp_path) == "pure (no compiled engine)"
    assert ab.engine(tmp_path / "nowhere").startswith("unknown")


def test_ab_refuses_what_is_not_a_checkout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks import ab

    with pytest.raises(SystemExit) as stop:
        ab.main([str(tmp_path)])
    assert stop.value.code == 2
    assert "is not a checkout of the project" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        ab.main([str(ab.ROOT), "--rounds", "0"])
    assert stop.value.code == 2
    assert "--rounds must be at least 1, not 0" in capsys.readouterr().err


def test_ab_names_the_checkout_whose_run_failed(tmp_path: Path) -> None:
    from benchmarks import ab

    (tmp_path / "benchmarks").mkdir()  # a checkout whose engine cannot be imported
    (tmp_path / "benchmarks" / "__init__.py").write_text("")
    with pytest.raises(SystemExit) as stop:
        ab.rate(tmp_path, 40, 20, "protocol")
    assert str(stop.value).startswith(f"{tmp_path}: the engine's run failed (exit 1): ")
    assert "bench_engine" in str(stop.value)


@pytest.mark.slow  # generates the benchmark's meshes (seconds): make bench
def test_the_scale_mesh_hosts_every_tool_at_every_size() -> None:
    from benchmarks.engine_mesh import scale_mesh, scale_scenario

    quick = scale_mesh(2_000, 1_000)  # the size of make bench's quick run
    hosted = {t for a in quick.agents for t in a.tools}
    assert hosted == {t.name for t in quick.tools} and len(hosted) == 500
    assert len(quick.workflows) == 200
    full, default = scale_mesh(10_000, 1_000), scale_scenario(10_000, instances=1_000)
    assert full.model_dump() == default.model_dump()  # the measured mesh is unchanged
