"""Where ``run`` and ``compare`` write without ``--out`` (issue 37, item 5): one folder per
``--set`` option list, named from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli import main
from sim.experiments.rundir import results_base

ROOT = Path(__file__).resolve().parents[2]


def test_no_set_is_the_scenarios_folder() -> None:
    assert results_base("train-booking", []) == Path("results/train-booking")


def test_the_folder_is_named_from_the_overrides() -> None:
    assert results_base("mcp-vs-mcp-plus", ["approval.mcp_policy=hints"]) == Path(
        "results/mcp-vs-mcp-plus+approval.mcp_policy=hints"
    )
    assert results_base("s", ["duration=300", "routing.loss_penalty=0.5,1"]) == Path(
        "results/s+duration=300+routing.loss_penalty=0.5,1"
    )


def test_other_characters_are_replaced_and_the_name_given_a_digest() -> None:
    name = results_base("s", ["links.0.latency.MCP+=[1, 2]"]).name
    assert name.startswith("s+links.0.latency.MCP+=_1,_2_~") and len(name) == 30 + 12


@settings(max_examples=30)
@given(
    st.lists(st.text(min_size=1, max_size=150), min_size=1, max_size=3),
    st.lists(st.text(min_size=1, max_size=150), min_size=1, max_size=3),
)
def test_different_options_never_share_a_folder_and_each_is_one_name(
    one: list[str], other: list[str]
) -> None:
    a, b = results_base("s", one), results_base("s", other)
    assert a.parent == Path("results") and len(a.name) <= 120 and "/" not in a.name
    assert (a == b) == (one == other)


def test_a_long_option_list_is_cut_and_told_apart_by_a_digest() -> None:
    long = ["routing.loss_penalty=" + "1," * 100 + "2"]
    longer = ["routing.loss_penalty=" + "1," * 100 + "3"]
    assert len(results_base("s", long).name) == 120
    assert results_base("s", long) != results_base("s", longer)


def test_runs_with_different_values_keep_both_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(ROOT / "scenarios" / "mcp_vs_mcp_plus.yaml", tmp_path / "s.yaml")
    monkeypatch.chdir(tmp_path)
    short = ["run", "s.yaml", "--replications", "1", "--set", "duration=20", "--quiet"]
    assert main([*short, "--set", "approval.mcp_policy=never"]) == 0
    assert main([*short, "--set", "approval.mcp_policy=hints"]) == 0
    out = capsys.readouterr().out
    never = "results/mcp-vs-mcp-plus+duration=20+approval.mcp_policy=never/dijkstra"
    hints = "results/mcp-vs-mcp-plus+duration=20+approval.mcp_policy=hints/dijkstra"
    assert f"results in {never}" in out and f"results in {hints}" in out
    assert (tmp_path / never / "rep-0" / "metrics.json").is_file()
    assert (tmp_path / hints / "rep-0" / "metrics.json").is_file()
