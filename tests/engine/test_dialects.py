"""Protocols declare how a call is invoked (issue 34, item 3): a user-defined protocol with
``dialect: sgd`` is invoked as SGD is, in the engine, the checks and ``verify``; without it,
as MCP is; no code compares a protocol's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.conformance.checks.stream import check_trace
from sim.engine import run_replication
from sim.scenario import parse_scenario

MESH = (Path(__file__).parents[1] / "fixtures" / "scenarios" / "sgd_reserve.yaml").read_text()
SGD_FIELDS = "[name, description, input_schema, side_effects, requires_approval, summary]"


def mesh(protocols: str, rho: str) -> str:
    """The SGD reserve mesh with ``protocols`` as P and every ``SGD`` use as ``rho``."""
    text = MESH.replace("protocols: [SGD]", "protocols: [PROTOCOLS]")
    text = text.replace("arrivals: {times: [0]}", "arrivals: {times: [0, 10]}")
    return text.replace("SGD", rho).replace("PROTOCOLS", protocols)


def labels(text: str, tmp_path: Path) -> list[str]:
    scenario, _ = parse_scenario(text)
    run_replication(scenario, "dijkstra", 0, tmp_path, "protocol")
    assert check_trace(tmp_path / "trace.jsonl", scenario).ok
    lines = (tmp_path / "trace.jsonl").read_text().splitlines()
    return [line.split('"label":"')[1].split('"')[0] for line in lines]


def test_a_protocol_declaring_the_sgd_dialect_is_invoked_as_sgd(tmp_path: Path) -> None:
    sgd = labels(mesh("SGD", "SGD"), tmp_path / "sgd")
    own = f"{{name: DIALOG, fields: {SGD_FIELDS}, dialect: sgd}}"
    dialog = labels(mesh(own, "DIALOG"), tmp_path / "dialog")
    assert "invoke" in sgd and "collect" in sgd and "validate" not in sgd
    assert dialog == sgd  # the same dialect, the same steps


def test_a_user_protocol_is_invoked_as_mcp_unless_it_says_otherwise(tmp_path: Path) -> None:
    plain = labels(mesh(f"{{name: DIALOG, fields: {SGD_FIELDS}}}", "DIALOG"), tmp_path / "a")
    assert "call" in plain and "validate" not in plain  # the args lack required slots
    assert "invoke" not in plain and "collect" not in plain
    scenario, _ = parse_scenario(mesh("{name: SGD, dialect: mcp}", "SGD"))
    assert {p: d.name for p, d in scenario.dialects().items()} == {"SGD": "mcp"}  # overridden


def test_a_dialect_that_does_not_exist_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim.cli import main

    path = tmp_path / "bad.yaml"
    text = mesh("{name: DIALOG, fields: [name], dialect: a2a-tasks}", "DIALOG")
    path.write_text(text)
    line = 1 + text.splitlines().index(
        "protocols: [{name: DIALOG, fields: [name], dialect: a2a-tasks}]"
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}:" in err and "protocols[0].dialect" in err and "Traceback" not in err


@pytest.mark.parametrize("rho", ["SGD", "DIALOG"])
def test_verify_takes_the_declared_dialect(rho: str) -> None:
    from sim.verify.model import Model

    own = f"{{name: DIALOG, fields: {SGD_FIELDS}, dialect: sgd}}" if rho == "DIALOG" else rho
    scenario, _ = parse_scenario(mesh(own, rho))
    model = Model(scenario, "w", "dijkstra")
    assert [t.dialect.collects for t in model.tasks] == [True]


def test_the_a2a_dialect_runs_task_states_on_the_trace_vocabulary(tmp_path: Path) -> None:
    """A2A's task states: submitted (``call``), input-required (``collect``), working
    (``execute``), completed (``result``); no client-side validation. A trace that
    validates instead of asking fails the lts check, naming the step."""
    from sim.calculus.mcp.dialects import A2aDialect

    own = f"{{name: TASKS, fields: {SGD_FIELDS}, dialect: a2a}}"
    scenario, _ = parse_scenario(mesh(own, "TASKS"))
    assert isinstance(scenario.dialects()["TASKS"], A2aDialect)
    assert A2aDialect.states["input-required"] == "collect"
    steps = labels(mesh(own, "TASKS"), tmp_path / "a2a")
    first = steps[steps.index("call") :]
    want = ["call", "collect", "collect", "collect", "approve", "execute", "result"]
    assert [s for s in first if s in want][:7] == want and "validate" not in steps
    lines = (tmp_path / "a2a" / "trace.jsonl").read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if '"label":"collect"' in line)
    lines[k] = lines[k].replace('"label":"collect"', '"label":"validate"')
    (lts,) = check_trace(lines, scenario, ["lts"]).verdicts
    assert lts.violations == 1
    assert "validate (seq 3) is not enabled in state collect_0" in lts.message


@pytest.mark.parametrize(
    ("dialect", "said"),
    [
        ("tests.nowhere:Dialect", "cannot import 'tests.nowhere'"),
        ("sim.calculus.lts:LTS", "'sim.calculus.lts:LTS' is not an invocation dialect"),
        ("sdg", "unknown dialect 'sdg' (known: mcp, sgd, a2a"),
    ],
)
def test_a_dialect_plugin_that_cannot_be_used_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dialect: str, said: str
) -> None:
    from sim.cli import main

    path = tmp_path / "bad.yaml"
    entry = f"{{name: DIALOG, fields: [name], dialect: '{dialect}'}}"
    text = mesh(entry, "DIALOG")
    path.write_text(text)
    line = 1 + text.splitlines().index(f"protocols: [{entry}]")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}:" in err and "protocols[0].dialect" in err and said in err
    assert "Traceback" not in err
