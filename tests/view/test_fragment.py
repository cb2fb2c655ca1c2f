"""Page fragments built by the worker in the run's check pass: the page from them is the
page from the traces, byte for byte, and never reads a trace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli import main
from sim.scenario import Scenario, load_scenario
from sim.view import ViewError, build_index, write_page
from sim.view.data import Ahead, Encoded
from sim.view.fragment import EVENTS_FILE, VIEW_FILE, encode_events, encode_json, scenario_digest
from sim.view.mesh import mesh_from_scenario
from sim.view.page import encode_index

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """train_booking, 150 s with an outage, 2 replications, with an instance and a run
    property (both violated in resilient/rep-0, beside the lts and recovery checks)."""
    data = yaml.safe_load((REPO / "scenarios" / "train_booking.yaml").read_text())
    data.update(duration=150, replications=2)
    data["failures"][0]["at"] = 50  # drops and failed instances within the 150 s
    failed = "G !wf_end(detail.status=failed)"
    data["properties"] = [
        {"name": "no-failed-instance", "scope": "instance", "formula": failed},
        {"name": "never-drop", "scope": "run", "formula": "G !drop"},
    ]
    path = tmp_path_factory.mktemp("scenario") / "train.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def results(scenario_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cmp") / "r"
    assert main(["compare", str(scenario_file), "--out", str(out), "--quiet", "--no-plots"]) == 0
    return out


def _copy_without_fragments(results: Path, to: Path) -> Path:
    shutil.copytree(results, to)
    for name in (VIEW_FILE, EVENTS_FILE):
        for path in to.glob(f"*/rep-*/{name}"):
            path.unlink()
    return to


def _page(target: Path, scenario: Scenario, out: Path) -> bytes:
    write_page(target, out, scenario)
    return out.read_bytes()


def test_the_worker_stores_a_fragment_per_run_with_its_digests(results: Path) -> None:
    runs = sorted(results.glob("*/rep-*"))
    assert len(runs) == 4
    for run in runs:
        record = json.loads((run / "run.json").read_text())
        assert {VIEW_FILE, EVENTS_FILE} <= set(record["files"])
    violated = json.loads((results / "resilient" / "rep-0" / VIEW_FILE).read_text())["violated"]
    kinds = {(g["kind"], g["name"]) for g in violated}
    assert ("property", "no-failed-instance") in kinds and ("property", "never-drop") in kinds
    scoped = [ex for g in violated if g.get("scope") == "instance" for ex in g["examples"]]
    assert scoped and all(ex["instances"] for ex in scoped)
    assert any(g["kind"] == "check" for g in violated)


def test_the_page_from_fragments_is_the_page_from_the_traces(
    results: Path, scenario_file: Path, tmp_path: Path
) -> None:
    scenario = load_scenario(scenario_file)
    page = (results / "report.html").read_bytes()
    bare = _copy_without_fragments(results, tmp_path / "bare")
    assert _page(bare, scenario, tmp_path / "bare.html") == page
    assert b"no-failed-instance" in page and b"never-drop" in page


def test_the_page_from_fragments_reads_no_trace(
    results: Path, scenario_file: Path, tmp_path: Path
) -> None:
    blind = tmp_path / "blind"
    shutil.copytree(results, blind)
    for trace in blind.glob("*/rep-*/trace.jsonl"):
        trace.write_text("not a trace\n")
    scenario = load_scenario(scenario_file)
    assert _page(blind, scenario, tmp_path / "p.html") == (results / "report.html").read_bytes()
    shutil.rmtree(blind / "dijkstra")  # fragments of an unreadable trace: rebuilt, and fail
    (blind / "resilient" / "rep-0" / VIEW_FILE).unlink()
    with pytest.raises(ViewError, match=r"resilient/rep-0/trace.jsonl:1: not a trace event"):
        write_page(blind, tmp_path / "q.html", scenario)


def test_a_fragment_checked_with_another_scenario_is_built_again(
    results: Path, scenario_file: Path, tmp_path: Path
) -> None:
    other = load_scenario(scenario_file).model_copy(update={"properties": []})
    bare = _copy_without_fragments(results, tmp_path / "bare")
    page = _page(results, other, tmp_path / "p.html")
    assert page == _page(bare, other, tmp_path / "bare.html")
    index = build_index(results, other)
    assert not any(g["kind"] == "property" for r in index["runs"] for g in r["violated"])
    longer = load_scenario(scenario_file).model_copy(update={"duration": 900.0, "seed": 1})
    assert scenario_digest(longer) == scenario_digest(load_scenario(scenario_file))


def test_the_page_from_fragments_read_ahead_is_the_same_and_reads_none_again(
    results: Path, scenario_file: Path, tmp_path: Path
) -> None:
    # compare reads each run's fragment as the run finishes: the page built at the end
    # takes those, neither they nor the traces read again (here unreadable), and is the
    # same bytes
    scenario = load_scenario(scenario_file)
    copy = tmp_path / "copy"
    shutil.copytree(results, copy)
    ahead = Ahead(mesh_from_scenario(scenario), scenario_digest(scenario))
    for run in sorted(copy.glob("*/rep-*")):
        ahead.read(run)
        (run / VIEW_FILE).write_text("not a fragment")
        (run / "trace.jsonl").write_text("not a trace\n")
    assert len(ahead.fragments) == 4
    write_page(copy, tmp_path / "p.html", scenario, ahead=ahead)
    assert (tmp_path / "p.html").read_bytes() == (results / "report.html").read_bytes()
    other = Ahead(ahead.mesh, "another scenario")  # fragments checked with another: none
    other.read(results / "dijkstra" / "rep-0")
    assert other.fragments == {}


def test_a_reused_run_gives_the_same_page(
    results: Path, scenario_file: Path, tmp_path: Path
) -> None:
    again = tmp_path / "again"
    shutil.copytree(results, again)
    old = again / "dijkstra" / "rep-1"  # as an older version left it: no fragment
    record = json.loads((old / "run.json").read_text())
    for name in (VIEW_FILE, EVENTS_FILE):
        (old / name).unlink()
        del record["files"][name]
    (old / "run.json").write_text(json.dumps(record))
    assert main(["compare", str(scenario_file), "--out", str(again), "--quiet", "--no-plots"]) == 0
    assert not (old / VIEW_FILE).exists()  # reused, not run again
    assert (again / "report.html").read_bytes() == (results / "report.html").read_bytes()


def test_the_page_of_a_compare_shows_its_own_runs_only(
    results: Path, scenario_file: Path, tmp_path: Path
) -> None:
    # runs another command left in the folder (a third replication, a router this compare
    # does not run) are neither shown nor checked again: the page is the summary's runs
    shared = tmp_path / "shared"
    shutil.copytree(results, shared)
    shutil.copytree(shared / "dijkstra" / "rep-1", shared / "dijkstra" / "rep-2")
    shutil.copytree(shared / "resilient", shared / "detour")
    assert main(["compare", str(scenario_file), "--out", str(shared), "--quiet", "--no-plots"]) == 0
    assert (shared / "report.html").read_bytes() == (results / "report.html").read_bytes()
    index = build_index(shared, load_scenario(scenario_file))  # the folder as `view` sees it
    assert len(index["runs"]) == 7  # dijkstra 0-2, resilient 0-1, detour 0-1


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(), st.lists(_json, max_size=4), max_size=4), _json)
def test_encoded_values_are_spliced_as_the_plain_lists_encode(
    events: dict[str, list[Any]], other: Any
) -> None:
    plain = {"runs": [{"events": events, "other": other}], "mark": "\x00ab:0"}
    encoded = {
        "runs": [
            {
                "events": {k: Encoded(encode_json(v), len(v)) for k, v in events.items()},
                "other": other,
            }
        ],
        "mark": "\x00ab:0",
    }
    want = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert encode_index(encoded) == want
    for k, v in events.items():
        assert list(encoded["runs"][0]["events"][k]) == json.loads(json.dumps(v))


_scalar = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-5, 1.5e-7, 1e15, 1e16, 2.0**60, 0.0001, -0.0, 5e-324, 1e300])
    | st.text()
    | st.sampled_from(["é", "\x7f", "\x01", "\\u0041", "2e-3", "</script>"])
)
_value = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=16,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_value, max_size=6))
def test_events_encode_as_the_page_encodes_them(events: list[Any]) -> None:
    assert encode_events(events) == encode_json(events).encode("ascii")


def test_a_trace_s_events_take_the_fast_encoding(results: Path) -> None:
    from sim.view.fragment import _fast, _may_differ

    lines = (results / "resilient" / "rep-0" / "trace.jsonl").read_bytes().splitlines()
    events = [json.loads(line) for line in lines]
    fast = sum(1 for e in events if not _may_differ(_fast([e])))
    assert fast >= 0.9 * len(events)
