"""Mutation tests of the seven conformance checks on a real engine trace (train_booking),
plus the MCP vs MCP+ claim and the command line's exit codes and bad-input messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.conformance.checks import CHECK_NAMES, check_run_dir, check_trace
from sim.engine import run_replication
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "scenarios" / "train_booking.yaml"
MCP_VS_PLUS = ROOT / "scenarios" / "mcp_vs_mcp_plus.yaml"

Events = list[dict[str, Any]]


def _run_engine(scenario_file: Path, out: Path, duration: float, router: str) -> Path:
    scenario = load_scenario(scenario_file).model_copy(update={"duration": duration})
    run_replication(scenario, router, 0, out, "full")
    return out / "trace.jsonl"


def _check(tmp_path: Path, events: Events, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    capsys.readouterr()
    code = main(["check", str(path), "--scenario", str(TRAIN), "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def _in_order(events: Events) -> Events:
    """A mutated trace made SPEC §5-ordered again, in place (``seq`` renumbered, ``t`` never
    decreasing), so the checks, not the reader's order check, see the mutation."""
    last_t = 0.0
    for k, e in enumerate(events):
        e["seq"] = k
        last_t = e["t"] = max(last_t, e["t"])
    return events


def _verdict(report: Any, name: str) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["name"] == name)


def _only_failing(report: Any, *names: str) -> None:
    """Exactly ``names`` fail: a false positive of any other check fails the test."""
    bad = {c["name"] for c in report["checks"] if not c["ok"]}
    assert bad == set(names), bad


def test_unmutated_trace_passes_every_check(
    train_trace: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _check(tmp_path, train_trace, capsys)
    assert code == 0
    assert [c["name"] for c in report["checks"]] == list(CHECK_NAMES)
    for c in report["checks"]:
        assert c["violations"] == 0, c
        assert c["examined"] > 0, c
    assert report["events"] == len(train_trace)


def test_drop_approve_fails_write_approval(
    train_copy: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = train_copy
    i = next(
        k
        for k, e in enumerate(events)
        if e["label"] == "approve"
        and e["tool"] == "book_train"
        and any(x["label"] == "execute" and x["inv"] == e["inv"] for x in events[k:])
    )
    inv = events[i]["inv"]
    execute = next(e for e in events[i:] if e["label"] == "execute" and e["inv"] == inv)
    del events[i]
    code, report = _check(tmp_path, events, capsys)
    assert code == 1
    v = _verdict(report, "write_approval")
    _only_failing(report, "write_approval", "lts")  # approve is a step of the tool's LTS
    assert v["violations"] == 1
    assert f"invocation {inv} of book_train" in v["first"]["message"]
    assert v["first"]["events"][-1] == execute
    assert [e["label"] for e in v["first"]["events"]][:2] == ["call", "validate"]


def test_swap_required_tasks_fails_requires_order(
    train_copy: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = train_copy
    # an instance that booked: move its check_balance task after its book task
    book = next(e for e in events if e["label"] == "execute" and e["tool"] == "book_train")
    inst = book["inst"]
    bal = [e for e in events if e["inst"] == inst and e["task"] == "bal"]
    rest = [e for e in events if not (e["inst"] == inst and e["task"] == "bal")]
    last_book = max(k for k, e in enumerate(rest) if e["inst"] == inst and e["task"] == "book")
    mutated = _in_order(rest[: last_book + 1] + bal + rest[last_book + 1 :])
    code, report = _check(tmp_path, mutated, capsys)
    assert code == 1
    v = _verdict(report, "requires_order")
    _only_failing(report, "requires_order")
    assert v["violations"] >= 1
    assert "Requires check_balance" in v["first"]["message"]
    assert book in v["first"]["events"]


PROTOCOL = {"call", "validate", "approve", "deny", "execute", "result", "error", "retry"}


def test_both_exclusive_tools_fail_exclusive(
    train_copy: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A whole, LTS-valid and approved invocation of print_ticket beside the instance's
    send_ticket: only ``exclusive`` fails."""
    events = train_copy
    send = next(e for e in events if e["label"] == "execute" and e["tool"] == "send_ticket")
    mine = [e for e in events if e["inv"] == send["inv"] and e["label"] in PROTOCOL]
    last = max(k for k, e in enumerate(events) if e is mine[-1])
    copies = [
        {**e, "tool": "print_ticket", "task": "print", "inv": 10**9, "seq": 10**9} for e in mine
    ]
    printed = next(e for e in copies if e["label"] == "execute")
    events[last + 1 : last + 1] = copies
    code, report = _check(tmp_path, _in_order(events), capsys)
    assert code == 1
    v = _verdict(report, "exclusive")
    _only_failing(report, "exclusive")
    assert v["violations"] == 1
    assert v["first"]["events"] == [send, printed]


def test_removed_retry_fails_recovery(
    train_copy: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = train_copy
    k = next(k for k, e in enumerate(events) if e["label"] == "retry")
    error = events[k - 1]
    assert error["label"] == "error" and error["inv"] == events[k]["inv"]
    del events[k]
    code, report = _check(tmp_path, events, capsys)
    assert code == 1
    v = _verdict(report, "recovery")
    assert v["violations"] == 1
    assert "declares Retry(" in v["first"]["message"]
    assert error in v["first"]["events"]
    _only_failing(report, "recovery", "lts")  # the retry is also a step of its LTS


def test_execute_without_validate_fails_lts(
    train_copy: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = train_copy
    k, call = next(
        (k, e)
        for k, e in enumerate(events)
        if e["label"] == "call" and e["tool"] == "check_balance"
    )
    execute = {**call, "label": "execute", "agent": "accounts", "seq": 10**9, "detail": {}}
    events.insert(k + 1, execute)
    code, report = _check(tmp_path, _in_order(events), capsys)
    assert code == 1
    v = _verdict(report, "lts")
    _only_failing(report, "lts")
    assert v["violations"] == 1
    assert "execute(check_balance)" in v["first"]["message"]
    assert v["first"]["events"] == [call, execute]


def test_deleted_deliver_fails_conservation(
    train_copy: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = train_copy
    k, deliver = next((k, e) for k, e in enumerate(events) if e["label"] == "deliver")
    send = next(
        e for e in events if e["label"] == "send" and e["detail"]["msg"] == deliver["detail"]["msg"]
    )
    del events[k]
    code, report = _check(tmp_path, events, capsys)
    assert code == 1
    v = _verdict(report, "conservation")
    _only_failing(report, "conservation")
    assert v["violations"] == 1
    assert v["first"]["events"] == [send]
    assert f"message {send['detail']['msg']} sent" in v["first"]["message"]


def test_hop_in_missing_protocol_fails_route_validity(
    train_copy: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = train_copy
    hop = next(
        e
        for e in events
        if e["label"] == "hop" and {e["detail"]["from"], e["detail"]["to"]} == {"planner", "gw1"}
    )
    hop["proto"] = hop["detail"]["proto"] = "MCP"  # planner–gw1 carries MCP+ and A2A only
    code, report = _check(tmp_path, events, capsys)
    assert code == 1
    v = _verdict(report, "route_validity")
    _only_failing(report, "route_validity")
    assert v["violations"] == 1
    assert v["first"]["events"] == [hop]
    assert "does not carry MCP" in v["first"]["message"]


def test_hop_from_a_down_node_fails_route_validity(train_copy: Events) -> None:
    events = train_copy
    down = next(k for k, e in enumerate(events) if e["label"] == "node_down")
    node = events[down]["agent"]
    hop = next(e for e in events[down:] if e["label"] == "hop")
    hop["detail"]["from"] = hop["agent"] = node
    hop["detail"]["to"] = "planner" if node != "planner" else "gw1"
    report = check_trace(events, load_scenario(TRAIN), ["route_validity"])
    assert report.verdict("route_validity").violations >= 1


def test_text_output_and_exit_codes(
    train_trace: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [e for e in train_trace if e["label"] != "approve"]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    assert main(["check", str(path), "--scenario", str(TRAIN)]) == 1
    out = capsys.readouterr().out
    assert "write_approval  examined" in out and "VIOLATED" in out
    assert "first counterexample of write_approval" in out
    assert '"seq":' in out


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"seq":0,"label":"call"}\n{"seq": 1, "label": \n', "t.jsonl:2: malformed JSON"),
        ('{"seq":0,"label":"call"}\n[1,2]\n', "t.jsonl:2: not a trace event"),
        ('{"label":"call"}\n', "t.jsonl:1: not a trace event: `seq` must be an integer"),
    ],
)
def test_bad_trace_lines_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, needle: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(content, encoding="utf-8")
    assert main(["check", str(path), "--scenario", str(TRAIN)]) == 2
    assert needle in capsys.readouterr().err


def test_missing_trace_and_bad_scenario_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(tmp_path / "nope.jsonl"), "--scenario", str(TRAIN)]) == 2
    assert "nope.jsonl" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nagents: []\nbogus: 1\n", encoding="utf-8")
    trace = tmp_path / "t.jsonl"
    trace.write_text("", encoding="utf-8")
    assert main(["check", str(trace), "--scenario", str(bad)]) == 2
    assert "bad.yaml" in capsys.readouterr().err
    assert main(["check", str(trace)]) == 2
    assert main(["check", str(trace), "--scenario", str(TRAIN), "--only", "nonsense"]) == 2


def test_empty_trace_holds_and_conservation_is_not_applicable() -> None:
    report = check_trace([], load_scenario(TRAIN))
    assert report.ok and report.events == 0
    assert report.verdict("conservation").note


def test_mcp_plus_runs_clean_plain_mcp_violates_write_approval(tmp_path: Path) -> None:
    """The paper's claim, measured: MCP+ callers never execute a write unapproved; plain-MCP
    callers under ``mcp_policy: never`` do. Both workflows run in the same replication."""
    for router in ("dijkstra", "resilient"):
        out = tmp_path / router
        _run_engine(MCP_VS_PLUS, out, 900.0, router)
        verdicts = check_run_dir(out, load_scenario(MCP_VS_PLUS))
        report = check_trace(out / "trace.jsonl", load_scenario(MCP_VS_PLUS))
        for v in report.verdicts:
            assert v.by_workflow.get("book-plus", 0) == 0, (router, v.name, v.message)
        wa = report.verdict("write_approval")
        assert wa.by_workflow.get("book-mcp", 0) > 0
        assert wa.violations == wa.by_workflow["book-mcp"]
        assert verdicts["violations"]["write_approval"] == wa.violations
        assert verdicts["conformance"]["instances"] > 0
        assert verdicts["violations_per_1000_instances"]["write_approval"] > 0


# --- bad input: located messages, order, empty traces, not-applicable checks -------------


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"t":"x","seq":1,"label":"call"}', "t.jsonl:2: not a trace event: `t` must be a number"),
        ('{"t":true,"seq":1,"label":"call"}', "t.jsonl:2: not a trace event: `t` must be a number"),
        ('{"t":NaN,"seq":1,"label":"call"}', "t.jsonl:2: not a trace event: `t` must be a number"),
        ('{"t":1.0,"label":"call"}', "t.jsonl:2: not a trace event: `seq` must be an integer"),
        ('{"t":1.0,"seq":1.5,"label":"call"}', "t.jsonl:2: not a trace event: `seq` must be"),
        ('{"t":1.0,"seq":"1","label":"call"}', "t.jsonl:2: not a trace event: `seq` must be"),
        ('{"t":1.0,"seq":1}', "t.jsonl:2: not a trace event: `label` must be a string (missing)"),
        ('{"t":1.0,"seq":1,"label":7}', "t.jsonl:2: not a trace event: `label` must be a string"),
        ('{"t":1.0,"seq":1,"label":"teleport"}', "t.jsonl:2: unknown label 'teleport'"),
    ],
)
def test_bad_fields_exit_2_with_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, needle: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"t":0.5,"seq":0,"label":"wf_start"}\n' + line + "\n", encoding="utf-8")
    assert main(["check", str(path), "--scenario", str(TRAIN)]) == 2
    err = capsys.readouterr().err
    assert needle in err and str(path) in err, err


def _check_err(
    tmp_path: Path, events: Events, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    capsys.readouterr()
    code = main(["check", str(path), "--scenario", str(TRAIN)])
    return code, capsys.readouterr().err


def test_reversed_trace_exits_2_naming_line_and_both_values(
    train_trace: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in reversed(train_trace)))
    assert main(["check", str(path), "--scenario", str(TRAIN)]) == 2
    err = capsys.readouterr().err
    first, second = train_trace[-1]["seq"], train_trace[-2]["seq"]
    assert f"{path}:2: not in time order: `seq` {second} is not larger than" in err, err
    assert f"previous event's {first}" in err


def test_swapped_lines_exit_2_on_time_and_on_seq(
    train_trace: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    k = next(k for k in range(1, len(train_trace)) if train_trace[k]["t"] > train_trace[k - 1]["t"])
    events = list(train_trace)  # the two swapped events copied: the rest is only read
    events[k - 1], events[k] = dict(events[k]), dict(events[k - 1])
    # seq swapped back: only the time order is broken
    events[k - 1]["seq"], events[k]["seq"] = events[k]["seq"], events[k - 1]["seq"]
    code, err = _check_err(tmp_path, events, capsys)
    assert code == 2
    lateness = f"`t` {train_trace[k - 1]['t']!r} is smaller than the previous event's"
    assert f"trace.jsonl:{k + 1}: not in time order: {lateness}" in err, err
    assert repr(train_trace[k]["t"]) in err
    # an equal time is in order; a repeated seq is not
    events = train_trace[:10]
    events[5] = {**events[5], "seq": events[4]["seq"]}
    code, err = _check_err(tmp_path, events, capsys)
    assert code == 2
    assert "trace.jsonl:6: not in time order: `seq`" in err, err


def test_inserted_event_with_a_foreign_seq_is_bad_input(
    train_trace: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = list(train_trace)  # a new event inserted: the others are only read
    events.insert(3, {**events[3], "seq": 10**9})
    code, err = _check_err(tmp_path, events, capsys)
    assert code == 2
    assert "trace.jsonl:5: not in time order: `seq`" in err, err
    assert f"previous event's {10**9}" in err


def test_empty_trace_with_allow_empty_holds_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n", encoding="utf-8")
    assert main(["check", str(path), "--scenario", str(TRAIN)]) == 2
    assert main(["check", str(path), "--scenario", str(TRAIN), "--allow-empty"]) == 0
    capsys.readouterr()
    assert main(["check", str(path), "--scenario", str(TRAIN), "--json", "--allow-empty"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["note"] == "empty trace: nothing to check" and report["events"] == 0


def test_check_run_dir_on_an_empty_trace_checks_nothing(tmp_path: Path) -> None:
    (tmp_path / "trace.jsonl").write_text("", encoding="utf-8")
    verdicts = check_run_dir(tmp_path, load_scenario(TRAIN))
    assert verdicts["violations"] == {} and verdicts["violations_per_1000_instances"] == {}
    conf = verdicts["conformance"]
    assert conf["ok"] is None and conf["checked"] is False and "nothing was checked" in conf["note"]


def test_check_run_dir_gives_none_for_a_check_that_does_not_apply(
    train_trace: Events, tmp_path: Path
) -> None:
    protocol = [dict(e) for e in train_trace if e["label"] not in ("send", "hop", "deliver")]
    _in_order(protocol)
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in protocol))
    verdicts = check_run_dir(tmp_path, load_scenario(TRAIN))
    assert verdicts["violations"]["conservation"] is None
    assert verdicts["violations_per_1000_instances"]["conservation"] is None
    assert verdicts["conformance"]["checks"]["conservation"]["applicable"] is False
    assert verdicts["violations"]["write_approval"] == 0
    assert verdicts["violations_per_1000_instances"]["write_approval"] == 0.0
    assert verdicts["conformance"]["ok"] is True and verdicts["conformance"]["checked"] is True
    report = check_trace(tmp_path / "trace.jsonl", load_scenario(TRAIN))
    assert _verdict(report.to_json(), "conservation")["applicable"] is False
