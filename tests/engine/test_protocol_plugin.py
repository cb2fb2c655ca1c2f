"""A protocol with its own invocation dialect, defined here alone (issue 34, item 3): its
spec (a scenario entry naming the dialect ``module:Class``) and its dialect class, nothing
in ``sim/``; run end to end: the engine invokes in it, every check holds, a damaged trace
of it fails the ``lts`` check naming the step, and ``verify``'s model replays its runs."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from sim.calculus.mcp.dialects import Dialect
from sim.conformance.checks.stream import check_trace
from sim.engine import run_replication
from sim.scenario import parse_scenario
from sim.scenario.model import Scenario
from sim.verify.model import Model
from tests.harness.paths import FIXTURES
from tests.harness.verify_replays import KEPT, replays, trace_key


class TicketDialect(Dialect):
    """A ticketing protocol: a ticket is opened (``invoke``), triaged against the schema
    (the τ ``validate``, which may fail), signed off (``approve``), worked, closed. Its
    wire carries the descriptor without annotations or dependencies."""

    name = "ticket"
    opening = "invoke"
    intake = "validate"
    carries = frozenset(
        {"name", "description", "input_schema", "side_effects", "requires_approval"}
    )
    states = MappingProxyType(
        {
            "opened": "invoke",
            "triaged": "validate",
            "signed-off": "approve",
            "in-progress": "execute",
            "closed": "result",
        }
    )


#: the protocol's spec: a scenario entry naming its dialect (no ``fields``: its wire's)
TICKET = f"{{name: TICKET, dialect: '{__name__}:TicketDialect'}}"
#: a task with every required input (validation passes) and one lacking two of them
FULL = "{restaurant: Nopa, city: SF, date: fri, party: 2}"
SHORT = "{restaurant: Nopa, city: SF}"


def ticket_mesh(args: str = FULL) -> Scenario:
    """The SGD reserve mesh spoken in TICKET, two instances, the task's ``args``."""
    text = (FIXTURES / "scenarios" / "sgd_reserve.yaml").read_text()
    text = text.replace("protocols: [SGD]", "protocols: [PROTOCOLS]")
    text = text.replace("arrivals: {times: [0]}", "arrivals: {times: [0, 10]}")
    text = text.replace("{restaurant: Nopa, note: window}", args)
    text = text.replace("SGD", "TICKET").replace("PROTOCOLS", TICKET)
    scenario, _ = parse_scenario(text, "ticket.yaml")
    return scenario


def run(tmp_path: Path, args: str = FULL) -> tuple[Scenario, list[dict[str, Any]]]:
    scenario = ticket_mesh(args)
    run_replication(scenario, "dijkstra", 0, tmp_path, "protocol")
    lines = (tmp_path / "trace.jsonl").read_text().splitlines()
    return scenario, [json.loads(line) for line in lines]


def steps(events: list[dict[str, Any]], inv: int) -> list[str]:
    return [e["label"] for e in events if e.get("inv") == inv and e["label"] in KEPT]


def test_the_protocol_takes_its_declared_dialect_and_wire() -> None:
    scenario = ticket_mesh()
    dialect = scenario.dialects()["TICKET"]
    assert isinstance(dialect, TicketDialect)
    assert scenario.protocols[0].carries() == TicketDialect.carries
    assert dialect.steps() == ("invoke", "validate", "approve", "execute", "result")
    assert dialect.failing() == ("validate", "execute")


def test_an_invocation_runs_the_dialects_steps_and_every_check_holds(tmp_path: Path) -> None:
    scenario, events = run(tmp_path)
    invs = sorted({e["inv"] for e in events if e["label"] == "invoke"})
    assert len(invs) == 2
    for inv in invs:
        assert steps(events, inv) == list(TicketDialect().steps())
    report = check_trace(tmp_path / "trace.jsonl", scenario)
    assert report.ok, [v.message for v in report.verdicts if not v.ok]


def test_a_missing_input_fails_the_triage_and_the_checks_still_hold(tmp_path: Path) -> None:
    scenario, events = run(tmp_path, SHORT)
    inv = next(e["inv"] for e in events if e["label"] == "invoke")
    assert steps(events, inv) == ["invoke", "error", "abort"]
    error = next(e for e in events if e["label"] == "error" and e["inv"] == inv)
    assert error["detail"]["error"] == "ValidationError"
    assert error["detail"]["missing"] == ["date", "party"]
    assert check_trace(tmp_path / "trace.jsonl", scenario).ok


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        ("validate", "approve(reserve) (seq {seq}) is not enabled in state validating"),
        ("approve", "execute(reserve) (seq {seq}) is not enabled in state ready"),
    ],
)
def test_a_trace_that_skips_a_step_fails_lts_naming_it(
    tmp_path: Path, damage: str, named: str
) -> None:
    scenario, events = run(tmp_path)
    gone = next(i for i, e in enumerate(events) if e["label"] == damage)
    after = events[gone + 1]
    kept = [json.dumps(e) for i, e in enumerate(events) if i != gone]
    report = check_trace(kept, scenario, ["lts"])
    (lts,) = report.verdicts
    assert lts.violations == 1
    assert named.format(seq=after["seq"]) in lts.message


def test_verify_replays_the_simulated_tickets(tmp_path: Path) -> None:
    scenario, events = run(tmp_path)
    model = Model(scenario, "w", "dijkstra")
    assert isinstance(model.tasks[0].dialect, TicketDialect)
    by_inst: dict[int, list[Any]] = {}
    for e in events:
        if e["label"] in KEPT and e["inst"] is not None:
            by_inst.setdefault(e["inst"], []).append(trace_key(e))
    assert len(by_inst) == 2
    for keys in by_inst.values():
        assert replays(model, keys)
        assert not replays(model, [k for k in keys if "validate" not in str(k)])


def test_a_dialect_is_its_class_in_a_copy_too() -> None:
    import pickle

    from sim.calculus.mcp.dialects import BUILTIN

    copy = pickle.loads(pickle.dumps(BUILTIN["sgd"]))
    assert copy == BUILTIN["sgd"] and hash(copy) == hash(BUILTIN["sgd"])
    assert pickle.loads(pickle.dumps(TicketDialect())) == TicketDialect()
    assert TicketDialect() != BUILTIN["mcp"] and {TicketDialect(): 1}.get(BUILTIN["mcp"]) is None
