"""A protocol with its own invocation dialect, defined here alone (issue 34, item 3): its
spec (a scenario entry naming the dialect ``module:Class``) and its dialect class, nothing
in ``sim/``; run end to end: the engine invokes in it, every check holds, a damaged trace
of it fails the ``lts`` check naming the step, and ``verify``'s model replays its runs. It
declares the MCP wire: the live mesh carries it through the real MCP SDK and its exported
spans follow the MCP semantic conventions."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from sim.calculus.mcp.dialects import Dialect
from sim.conformance.checks.stream import check_trace
from sim.engine import run_replication
from sim.live.envelope import Envelope
from sim.live.payload import Call, Descriptor, Outcome
from sim.scenario import parse_scenario
from sim.scenario.model import Scenario, Wire
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


#: the protocol's spec: a scenario entry naming its dialect (no ``fields``: its dialect's)
#: and the live wire that carries it
TICKET = f"{{name: TICKET, dialect: '{__name__}:TicketDialect', wire: mcp}}"
#: a task with every required input (validation passes) and one lacking two of them
FULL = "{restaurant: Nopa, city: SF, date: fri, party: 2}"
SHORT = "{restaurant: Nopa, city: SF}"


def ticket_text(args: str = FULL, spec: str = TICKET) -> str:
    """The SGD reserve mesh spoken in TICKET (its entry ``spec``), two instances, the
    task's ``args``, as YAML."""
    text = (FIXTURES / "scenarios" / "sgd_reserve.yaml").read_text()
    text = text.replace("protocols: [SGD]", "protocols: [PROTOCOLS]")
    text = text.replace("arrivals: {times: [0]}", "arrivals: {times: [0, 10]}")
    text = text.replace("{restaurant: Nopa, note: window}", args)
    return text.replace("SGD", "TICKET").replace("PROTOCOLS", spec)


def ticket_mesh(args: str = FULL, spec: str = TICKET) -> Scenario:
    """:func:`ticket_text`'s scenario."""
    scenario, _ = parse_scenario(ticket_text(args, spec), "ticket.yaml")
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
    assert scenario.wires() == {"TICKET": Wire.MCP}
    assert ticket_mesh(spec=TICKET.replace(", wire: mcp", "")).wires() == {"TICKET": Wire.JSONRPC}


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


#: the protocol's entry without a wire: JSON-RPC carries it live, no MCP conventions
UNWIRED = TICKET.replace(", wire: mcp", "")


def test_a_wire_that_does_not_exist_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim.cli import main

    path = tmp_path / "bad.yaml"
    text = ticket_text(spec=TICKET.replace("wire: mcp", "wire: grpc"))
    path.write_text(text)
    line = 1 + next(i for i, row in enumerate(text.splitlines()) if "wire: grpc" in row)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}:" in err and "protocols[0].wire" in err and "Traceback" not in err
    assert "protocols[0].wire: must be one of mcp, a2a, jsonrpc (got 'grpc')" in err


def test_its_spans_follow_the_mcp_conventions_its_wire_declares(tmp_path: Path) -> None:
    """An invocation on the MCP wire is a ``tools/call`` there, whatever its dialect opens
    with (the span keeps the dialect's name); without the wire, no MCP attribute."""
    from sim.otel.spans import trace_spans

    scenario, events = run(tmp_path)

    def invocations(wires: dict[str, Wire]) -> list[Any]:
        traced = trace_spans(
            events, scenario="ticket", router="dijkstra", epoch_ns=0, source="t", wires=wires
        )
        return [s for s in traced.spans if s.name.startswith("invoke ")]

    spans = invocations(scenario.wires())
    assert len(spans) == 2
    assert [s.attributes.get("mcp.method.name") for s in spans] == ["tools/call"] * 2
    unwired = invocations(ticket_mesh(spec=UNWIRED).wires())
    assert [s.attributes.get("mcp.method.name") for s in unwired] == [None, None]


class Desk:
    """What stands behind the agent's MCP server (a live node's part, here a recorder):
    it lists the ground truth kept to the arriving protocol's fields and answers a call."""

    def __init__(self, scenario: Scenario, fields: Any) -> None:
        self.truth = Descriptor.of_truth(scenario.tool("reserve").descriptor())
        self.fields = fields
        self.seen: list[tuple[str, Any]] = []

    async def on_message(
        self, protocol: str, env: Envelope, payload: Any, notice: Any
    ) -> tuple[Envelope, Any]:
        self.seen.append((protocol, payload))
        kind = "list_reply" if payload is None else "response"
        reply = Envelope(env.route, env.i - 1, kind, env.msg + 1, env.owner, env.attempt, 0.0)
        if payload is None:
            return reply, [self.truth.keep(self.fields(protocol))]
        return reply, Outcome(None, "reserved")


def test_it_goes_live_through_the_mcp_sdk_its_wire_declares() -> None:
    """The live host's sender for TICKET is the one its wire names (the MCP SDK's client);
    the agent's MCP server (the real SDK over HTTP on 127.0.0.1) hands the message on as
    TICKET, with what TICKET represents of the MCP⁺ metadata and nothing else."""
    import anyio

    from sim.live.host import SENDERS
    from sim.live.parts import Owner
    from sim.live.wire.jsonrpc import JsonRpcSender
    from sim.live.wire.mcp import McpSender, mcp_server
    from sim.mesh.graph import ProtocolGraph
    from tests.harness.asgi_thread import asgi_thread

    scenario = ticket_mesh()
    fields = ProtocolGraph.from_scenario(scenario).table.fields
    desk = Desk(scenario, fields)
    app = mcp_server("srv", "0", desk, fields).streamable_http_app(
        host="127.0.0.1", streamable_http_path="/mcp"
    )
    route = {"path": ["agent", "srv"], "protocols": ["TICKET"], "start": "TICKET"}
    env = Envelope(
        route | {"translations": []}, 1, "request", 5, Owner("w", 0, "r", 1, "reserve"), 1, 0.0
    )
    call = Call("reserve", {"city": "SF"}, {"requires_approval": True, "side_effects": "write"})
    got: list[Any] = []
    with asgi_thread(app, lifespan="on") as base:

        async def go() -> None:
            async with anyio.create_task_group() as tg:
                closing = anyio.Event()
                sender = SENDERS[scenario.wires()["TICKET"]](base, "agent", tg.start_soon, closing)
                got.append(sender)
                try:
                    got.append(await sender.send("TICKET", env, None, fields("TICKET"), None))
                    got.append(await sender.send("TICKET", env, call, fields("TICKET"), None))
                except Exception as exc:  # raised once the client's task group is closed
                    got.append(exc)
                finally:
                    closing.set()

        anyio.run(go)
    sender, (_, listed), (_, outcome) = got
    assert isinstance(sender, McpSender)
    assert [protocol for protocol, _ in desk.seen] == ["TICKET", "TICKET"]
    assert listed == [desk.truth.keep(TicketDialect.carries or ())]
    assert listed[0].values["requires_approval"] is True  # under MCP⁺'s _meta key
    assert desk.seen[1][1].plus == call.plus and outcome == Outcome(None, "reserved")
    plain = ticket_mesh(spec=UNWIRED).wires()["TICKET"]
    assert isinstance(SENDERS[plain](base, "agent", lambda fn: None, anyio.Event()), JsonRpcSender)


@pytest.mark.slow  # a live mesh of its own (seconds): make bench and CI (.ci/run) run it
def test_the_live_mesh_carries_it_on_the_mcp_sdk_end_to_end(tmp_path: Path) -> None:
    """``python -m sim live`` on the ticket mesh: every message the server receives is an
    MCP request at ``/mcp`` routed in TICKET, each call with the caller's view under the
    MCP⁺ key (TICKET represents it), the write approved by elicitation; every check holds."""
    from tests.harness.live_runs import live

    path = tmp_path / "ticket.yaml"
    path.write_text(ticket_text())
    out = tmp_path / "out"
    done = live(str(path), "--out", str(out), "--capture", "--quiet", "--duration", "11")
    assert done.returncode == 0, done.stderr
    run = out / "dijkstra" / "live-0"
    received = [json.loads(x) for x in (run / "wire" / "srv.jsonl").read_text().splitlines()]
    assert {r["path"] for r in received} == {"/mcp"}
    calls = [json.loads(r["body"])["params"] for r in received]
    calls = [c for c in calls if "protomesh/route" in c.get("_meta", {})]
    assert {tuple(c["_meta"]["protomesh/route"]["route"]["protocols"]) for c in calls} == {
        ("TICKET",)
    }
    sent = [c for c in calls if "name" in c]  # the tools/call requests
    assert len(sent) == 4  # two instances, each asked for approval and sent again
    assert all(
        c["_meta"]["protomesh/mcp-plus"] == {"side_effects": "write", "requires_approval": True}
        for c in sent
    )
    assert [c.get("inputResponses") for c in sent][1::2] == [{"approval": {"action": "accept"}}] * 2
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["workflows"]["succeeded"] == 2
    assert set(metrics["violations_per_1000_instances"].values()) == {0.0}
