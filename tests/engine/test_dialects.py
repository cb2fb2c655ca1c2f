"""Protocols declare how a call is invoked (issue 34, item 3): a user-defined protocol with
``dialect: sgd`` is invoked as SGD is, in the engine, the checks and ``verify``; without it,
as MCP is; no code compares a protocol's name."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sim.conformance.checks.stream import check_trace
from sim.engine import run_replication
from sim.scenario import parse_scenario

MESH = """
name: dialects
seed: 5
duration: 100
protocols: [PROTOCOLS]
approval: {latency: {dist: constant, value: 1.0}, grant_probability: 1.0}
agents:
  - {id: agent, type: LLM_AGENT, protocols: {RHO: 1.0}}
  - {id: srv, type: TOOL_SERVER, protocols: {RHO: 1.0}, tools: [reserve]}
links:
  - {between: [agent, srv], latency: {RHO: 0.01}}
tools:
  - name: reserve
    description: Reserves a table at a restaurant.
    input_schema:
      type: object
      required: [city, restaurant, date, party]
      properties: {city: {}, restaurant: {}, date: {}, party: {}, note: {}}
    side_effects: write
    requires_approval: true
    service_time: {dist: constant, value: 0.1}
workflows:
  - name: w
    initiator: agent
    protocol: RHO
    arrivals: {times: [0, 10]}
    timeout: 5
    tasks:
      - {id: r, tool: reserve, args: {restaurant: Nopa, note: window}}
"""
SGD_FIELDS = "[name, description, input_schema, side_effects, requires_approval, summary]"


def mesh(protocols: str, rho: str) -> str:
    return textwrap.dedent(MESH).replace("PROTOCOLS", protocols).replace("RHO", rho)


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
    assert scenario.dialects() == {"SGD": "mcp"}  # a built-in's dialect may be overridden


def test_a_dialect_that_does_not_exist_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim.cli import main

    path = tmp_path / "bad.yaml"
    path.write_text(mesh("{name: DIALOG, fields: [name], dialect: a2a-tasks}", "DIALOG"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:5:" in err and "protocols[0].dialect" in err and "Traceback" not in err


@pytest.mark.parametrize("rho", ["SGD", "DIALOG"])
def test_verify_takes_the_declared_dialect(rho: str) -> None:
    from sim.verify.model import Model

    own = f"{{name: DIALOG, fields: {SGD_FIELDS}, dialect: sgd}}" if rho == "DIALOG" else rho
    scenario, _ = parse_scenario(mesh(own, rho))
    model = Model(scenario, "w", "dijkstra")
    assert [t.sgd for t in model.tasks] == [True]
