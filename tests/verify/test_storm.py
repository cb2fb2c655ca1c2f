"""``verify --engine storm`` (issue 35): the PRISM program of the untimed model decided by
Storm, exact probabilities against closed forms, the composed program against the flat
one and the explicit search, ``--export``, the JSON fields, and the extra named when
stormpy is missing.

The closed forms are scenarios built here, each with one random choice the formula
reads: an approval granted with probability p, a read failing with probability q and
retried n times (Pr[abort] = q^(n+1)), and two ExclusiveWith tools (the second skipped
iff the first succeeded, 1 - q). A timeout is the scheduler's (the untimed model
cannot weigh it): it can always avoid the violation by giving up first, so the minimum
is 0 and the closed form is the maximum.
"""

from __future__ import annotations

import builtins
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from benchmarks.fanout import fanout
from sim.cli import main
from sim.properties import Property
from sim.properties.parse import parse
from sim.scenario import load_scenario
from sim.scenario.model import Scenario
from sim.verify.engines import decide_storm
from sim.verify.prism import _flat, program
from sim.verify.search import explore
from sim.verify.storm import decide
from sim.verify.verdicts import _tracker, initiator_groups

pytest.importorskip("stormpy")

_HEAD = """name: closed-form
seed: 1
duration: 10
replications: 1
routers: [dijkstra]
protocols: ["MCP+"]
approval:
  latency: {{dist: constant, value: 0.5}}
  grant_probability: {p}
agents:
  - {{id: caller, type: LLM_AGENT, protocols: {{"MCP+": 1.0}}}}
  - {{id: server, type: TOOL_SERVER, protocols: {{"MCP+": 1.0}}, tools: [a, b]}}
links:
  - {{between: [caller, server], latency: {{"MCP+": 0.01}}}}
tools:
  - name: a
    description: The tool the formula reads.
    side_effects: {effect}
    requires_approval: {approval}
{dependency_a}    failure_modes:
      - {{error: Conflict, recovery: {recovery}}}
      - {{error: ServiceDown, recovery: {{prompt: "down?"}}}}
    errors: {{Conflict: {q}}}
    service_time: {{dist: constant, value: 0.1}}
  - name: b
    description: The second branch.
    side_effects: read
{dependency_b}    service_time: {{dist: constant, value: 0.1}}
workflows:
  - name: w
    initiator: caller
    protocol: "MCP+"
    arrivals: {{times: [0]}}
    tasks:
      - {{id: a, tool: a}}
{second}"""


_REQUIRES = "    dependencies: [{relation: Requires, tool: a}]\n"


def closed_form(
    tmp_path: Path,
    p: str = "0.7",
    q: str = "0",
    retries: int = 0,
    write: bool = False,
    exclusive: bool = False,
    requires: bool = False,
) -> Scenario:
    """A scenario whose one random choice is the one a closed form weighs (the module);
    ``requires``: b, concurrent with a, requires it (so it may wait for a)."""
    dep = "    dependencies: [{{relation: ExclusiveWith, tool: {}}}]\n"
    second = "      - {id: b, tool: b, after: [a]}\n" if exclusive else ""
    if requires:
        second = "      - {id: b, tool: b}\n"
    text = _HEAD.format(
        p=p,
        q=q,
        effect="write" if write else "read",
        approval="true" if write else "false",
        recovery=f"{{retry: {retries}}}" if retries else "{abort: true}",
        dependency_a=dep.format("b") if exclusive else "",
        dependency_b=dep.format("a") if exclusive else _REQUIRES if requires else "",
        second=second,
    )
    path = tmp_path / "closed_form.yaml"
    path.write_text(text, encoding="utf-8")
    return load_scenario(path)


def pr(scenario: Scenario, formula: str, scope: str = "invocation") -> tuple[Any, ...]:
    """Storm's (verdict, exact [min, max] text, min, max, note) of one formula."""
    prop = Property("p", scope, parse(formula), formula)
    [pv] = decide_storm(scenario, "w", "dijkstra", [("p", prop)], probability=True).properties
    assert pv.probability is not None
    return pv.verdict, pv.exact, *pv.probability, pv.note


@pytest.mark.parametrize(
    ("p", "formula", "closed"),
    [("0.7", "G !execute(a)", "7/10"), ("0.7", "G !deny", "3/10"), ("0.35", "G !approve", "7/20")],
)
def test_an_approval_granted_with_p_has_its_closed_form(
    tmp_path: Path, p: str, formula: str, closed: str
) -> None:
    verdict, text, lo, hi, note = pr(closed_form(tmp_path, p=p, write=True), formula)
    assert (verdict, text, lo) == ("violated", f"[0, {closed}]", 0.0)
    assert hi == pytest.approx(float(Fraction(closed)), abs=1e-9)
    assert "composed" in note


@pytest.mark.parametrize(("q", "n"), [("0.3", 2), ("0.5", 0), ("0.1", 4)])
def test_a_failure_retried_n_times_aborts_with_q_to_the_n_plus_1(
    tmp_path: Path, q: str, n: int
) -> None:
    scenario = closed_form(tmp_path, q=q, retries=n) if n else closed_form(tmp_path, q=q)
    for scope in ("invocation", "instance"):
        verdict, text, lo, hi, _ = pr(scenario, "G !abort", scope)
        assert (verdict, text, lo) == ("violated", f"[0, {Fraction(q) ** (n + 1)}]", 0.0)
        assert hi == pytest.approx(float(q) ** (n + 1), abs=1e-9)
    _, _, _, success, _ = pr(scenario, "G !result")
    assert success == pytest.approx(1 - float(q) ** (n + 1), abs=1e-9)


def test_exclusive_branches_skip_the_second_iff_the_first_succeeded(tmp_path: Path) -> None:
    scenario = closed_form(tmp_path, q="0.25", exclusive=True)
    verdict, text, lo, hi, note = pr(scenario, "G !skip", "instance")
    assert (verdict, text, lo) == ("violated", "[0, 3/4]", 0.0)
    assert hi == pytest.approx(0.75, abs=1e-9)
    # b's readiness reads a's code: b's choices guarded by it in the composed program
    assert "composed" in note


def test_a_task_that_requires_a_concurrent_one_runs_iff_it_succeeded(tmp_path: Path) -> None:
    """b waits for a (woken by its end) or finds it over: b executes iff a succeeded."""
    verdict, text, lo, hi, note = pr(
        closed_form(tmp_path, q="0.25", requires=True), "G !execute(b)"
    )
    assert (verdict, text, lo, note) == ("violated", "[0, 3/4]", 0.0, "storm sparse, composed")
    assert hi == pytest.approx(0.75, abs=1e-9)


def test_a_property_that_holds_has_probability_0_and_a_bound_stays_not_decidable(
    tmp_path: Path,
) -> None:
    scenario = closed_form(tmp_path, q="0.3", retries=1, write=True)
    verdict, text, lo, hi, _ = pr(scenario, "G (execute(a) -> O approve(a))")
    assert (verdict, text, lo, hi) == ("holds", "0", 0.0, 0.0)
    bounded = Property("b", "invocation", parse("F[<=5] result"), "F[<=5] result")
    [pv] = decide_storm(scenario, "w", "dijkstra", [("b", bounded)]).properties
    assert (pv.verdict, pv.note) == ("not-decidable", "a time bound (the model is untimed)")


FORMULAS = [
    ("invocation", "G !abort"),
    ("invocation", "G !deny"),
    ("invocation", "G (execute -> Y (!execute S approve))"),
    ("instance", "G !wf_end(detail.status=failed)"),
    ("instance", "G (result(last) -> O result(first))"),
]


@pytest.fixture(scope="module")
def fanout2(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    """The fan-out workflow with two concurrent tasks (benchmarks/fanout.py)."""
    path = tmp_path_factory.mktemp("fanout") / "fanout2.yaml"
    path.write_text(fanout(2), encoding="utf-8")
    return load_scenario(path)


@pytest.mark.parametrize(("scope", "formula"), FORMULAS)
def test_the_composed_program_is_the_flat_product_and_the_explicit_search(
    fanout2: Scenario, scope: str, formula: str
) -> None:
    tracker = _tracker("p", Property("p", scope, parse(formula), formula), fanout2)
    assert not isinstance(tracker, str)
    [(model, _)] = initiator_groups(fanout2, "w", "dijkstra")
    composed = program(model, tracker, 10**6)
    flat = _flat(model, tracker, 10**6, "for the comparison")
    assert (composed.construction, flat.construction) == ("composed", "flat")
    a = decide(composed.text, probability=True)
    b = decide(flat.text, probability=True)
    assert a.exact == b.exact and a.reachable == b.reachable
    expected = explore(model, tracker, 10**6).verdict
    assert ("violated" if a.reachable else "holds") == expected


@pytest.mark.parametrize(
    ("shape", "name", "formula"),
    [
        ("exclusive", "p", "G !skip"),
        ("requires", "p", "G !execute(b)"),
        ("requires", "p", "G !wf_end(detail.status=failed)"),
        ("requires", "recovery", ""),
        ("plain", "recovery", ""),
        ("plain", "lts", ""),
        pytest.param("fanout", "recovery", "", marks=pytest.mark.slow),
        pytest.param("fanout", "lts", "", marks=pytest.mark.slow),
    ],
)
def test_dependencies_and_checks_compose_as_the_flat_product(
    tmp_path: Path, fanout2: Scenario, shape: str, name: str, formula: str
) -> None:
    """Readiness guards, waiting and woken tasks, and a check run per task (violated
    over plain MCP, whose caller knows no failure modes: Pr up to 7/10): the composed
    program's exact probabilities are the flat product's."""
    scenario = fanout2
    if shape == "plain":
        closed_form(tmp_path, q="0.25", retries=1, requires=True)
        path = tmp_path / "closed_form.yaml"
        path.write_text(path.read_text().replace('"MCP+"', "MCP"), encoding="utf-8")
        scenario = load_scenario(path)
    elif shape != "fanout":
        scenario = closed_form(tmp_path, q="0.25", retries=1, **{shape: True})
    scope = "instance" if "wf_end" in formula else "invocation"
    prop = Property(name, scope, parse(formula), formula) if formula else None
    tracker = _tracker(name, prop, scenario)
    assert not isinstance(tracker, str)
    [(model, _)] = initiator_groups(scenario, "w", "dijkstra")
    composed = program(model, tracker, 10**6)
    flat = _flat(model, tracker, 10**6, "for the comparison")
    assert composed.construction == "composed", composed.why_flat
    a = decide(composed.text, probability=True)
    b = decide(flat.text, probability=True)
    assert a.exact == b.exact and a.reachable == b.reachable
    assert shape != "plain" or a.exact == "[0, 7/10]"
    expected = explore(model, tracker, 10**6).verdict
    assert ("violated" if a.reachable else "holds") == expected


def test_a_flat_program_reports_its_python_search_and_storms_model(tmp_path: Path) -> None:
    """An instance formula decided at the end (no online monitor) goes flat: the JSON
    says what each size counts, and over --max-states only the search's remains."""
    scenario = closed_form(tmp_path, q="0.3")
    prop = Property("p", "instance", parse("F result"), "F result")
    [pv] = decide_storm(scenario, "w", "dijkstra", [("p", prop)]).properties
    shown = pv.to_json()
    assert (shown["engine"], shown["model"], shown["verdict"]) == ("storm", "flat", "violated")
    assert (shown["states"], shown["model_states"]) == (shown["model_states"], pv.states)
    assert shown["searched_states"] > 0 and shown["searched_transitions"] > 0
    [cut] = decide_storm(scenario, "w", "dijkstra", [("p", prop)], max_states=3).properties
    shown = cut.to_json()
    assert (shown["verdict"], shown["searched_states"], shown["states"]) == ("undecided", 3, 3)
    assert "model_states" not in shown


def test_a_wrong_weight_is_refused(fanout2: Scenario, monkeypatch: pytest.MonkeyPatch) -> None:
    """The weighed choices must sum to 1: an execution that could not end with a result
    leaves its errors' weights alone (0.05 + 0.02 + 0.01), which the program refuses."""
    tracker = _tracker("p", Property("p", "invocation", parse("G !abort"), "G !abort"), fanout2)
    assert not isinstance(tracker, str)
    [(model, _)] = initiator_groups(fanout2, "w", "dijkstra")
    monkeypatch.setitem(model.result_possible, "first", False)
    with pytest.raises(AssertionError, match="the outcome choice's weights sum to 2/25, not 1"):
        program(model, tracker, 10**6)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_export_and_the_counterexample_check_confirms(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    closed_form(tmp_path, q="0.3", retries=1)
    scenario = str(tmp_path / "closed_form.yaml")
    (tmp_path / "props.yaml").write_text(
        '- {name: no-abort, scope: invocation, formula: "G !abort"}\n', encoding="utf-8"
    )
    code, out, err = cli(
        capsys,
        *("verify", scenario, "--probability", "--json", "--export", str(tmp_path / "m.prism")),
        *("--properties", str(tmp_path / "props.yaml"), "--property", "no-abort"),
        *("--property", "write_approval", "--counterexamples", str(tmp_path / "cx")),
    )
    assert code == 1, err
    found = {p["name"]: p for p in json.loads(out)["properties"]}
    abort = found["no-abort"]
    assert (abort["verdict"], abort["engine"]) == ("violated", "storm")
    assert (abort["probability_min"], abort["probability_max"]) == (0.0, pytest.approx(0.09))
    assert abort["states"] > 0 and abort["transitions"] >= abort["states"]
    # what Storm's sizes count: its model's, of the composed program (no Python search)
    assert (abort["model"], abort["model_states"]) == ("composed", abort["states"])
    assert abort["model_transitions"] == abort["transitions"] and "searched_states" not in abort
    assert found["write_approval"]["verdict"] == "holds"
    assert found["write_approval"]["probability_max"] == 0.0
    exported = tmp_path / "m-no-abort.prism"
    assert "m-no-abort.prism: composed" in err
    assert 'label "violation"' in exported.read_text()
    assert decide(exported.read_text()).reachable
    assert (tmp_path / "m-write_approval.prism").is_file()
    code, out, _ = cli(
        capsys,
        *("check", abort["counterexample"], "--scenario", scenario),
        *("--properties", str(tmp_path / "props.yaml"), "--property", "no-abort"),
    )
    assert code == 1 and "VIOLATED" in out


def test_storm_options_need_storm_and_a_missing_stormpy_names_the_extra(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    closed_form(tmp_path)
    scenario = str(tmp_path / "closed_form.yaml")
    code, _, err = cli(capsys, "verify", scenario, "--engine", "explicit", "--probability")
    assert (code, err.strip()) == (
        2,
        "--probability and --symbolic are Storm's: not with --engine explicit",
    )
    real_import = builtins.__import__

    def without_stormpy(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "stormpy" or name.startswith("stormpy."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_stormpy)
    code, out, err = cli(capsys, "verify", scenario, "--engine", "storm")
    assert code == 2 and out == ""
    assert "--engine storm needs stormpy, which is not installed" in err
    assert "pip install 'protomesh[storm]'" in err
    # the explicit engine does not need it
    code, _, err = cli(capsys, "verify", scenario, "--property", "write_approval")
    assert code == 0, err


def test_the_api_takes_the_engine_and_agrees_with_the_explicit_search(tmp_path: Path) -> None:
    import sim

    scenario = closed_form(tmp_path, q="0.3", retries=2, write=True)
    [explicit] = sim.verify(scenario)
    [storm] = sim.verify(scenario, engine="storm", probability=True)
    verdicts = {p["name"]: p["verdict"] for p in explicit["properties"]}
    assert {p["name"]: p["verdict"] for p in storm["properties"]} == verdicts
    assert {p["engine"] for p in explicit["properties"]} == {"explicit"}
    decided = [p for p in storm["properties"] if p["verdict"] in ("holds", "violated")]
    assert decided and all(p["engine"] == "storm" and "probability_max" in p for p in decided)
    with pytest.raises(ValueError, match="unknown engine 'prism'"):
        sim.verify(scenario, engine="prism")
    with pytest.raises(ValueError, match="need engine='storm'"):
        sim.verify(scenario, probability=True)
