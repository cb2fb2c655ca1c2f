"""``check TRACE --scenario FILE --properties FILE --property NAME``: properties verdicts
beside the seven checks, in one pass; exit codes; ``--json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "scenarios" / "train_booking.yaml"
APPROVALS = ROOT / "tests" / "properties" / "approvals.yaml"
Events = list[dict[str, Any]]


def _write(tmp_path: Path, events: Events) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    capsys.readouterr()
    code = main(["check", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_dropped_approval_violates_the_property_in_that_invocation(
    train_mutations: dict[str, Events], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _write(tmp_path, train_mutations["drop_approve"])
    code, report = _json(
        capsys, str(trace), "--scenario", str(TRAIN), "--properties", str(APPROVALS),
        "--property", "approved-writes",
    )  # fmt: skip
    assert code == 1
    (p,) = report["properties"]
    assert p["name"] == "approved-writes" and p["scope"] == "invocation"
    assert p["violations"] == 1 and p["examined"] > 100
    wa = next(c for c in report["checks"] if c["name"] == "write_approval")
    events = p["first"]["events"]
    assert events[-1] == wa["first"]["events"][-1]  # the same execute, the same seq
    assert events[-1]["label"] == "execute" and f"seq {events[-1]['seq']}" in p["first"]["message"]
    assert report["ok"] is False


def test_the_unmutated_trace_holds_and_the_text_lists_each_property(
    train_trace: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _write(tmp_path, train_trace)
    code, report = _json(
        capsys, str(trace), "--scenario", str(TRAIN), "--properties", str(APPROVALS),
        "--property", "approved-writes",
    )  # fmt: skip
    assert code == 0 and report["ok"] is True
    assert report["properties"][0]["violations"] == 0
    everything = ["check", str(trace), "--scenario", str(TRAIN), "--properties", str(APPROVALS)]
    code = main(everything)
    out = capsys.readouterr().out
    for name in ("approved-writes", "answered-in-time", "no-failed-instance"):
        assert name in out
    assert "approved-writes     invocation scopes examined" in out
    assert code == (1 if "VIOLATED" in out else 0)


def test_properties_of_the_scenario_itself_are_checked(
    train_trace: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = TRAIN.read_text(encoding="utf-8").rstrip("\n") + (
        "\nproperties:\n"
        "  - {name: never-books, scope: instance, formula: 'G !execute(book_train)'}\n"
    )
    scenario = tmp_path / "s.yaml"
    scenario.write_text(text, encoding="utf-8")
    code, report = _json(capsys, str(_write(tmp_path, train_trace)), "--scenario", str(scenario))
    assert code == 1
    (p,) = report["properties"]
    assert p["name"] == "never-books" and p["violations"] > 0
    assert all(c["ok"] for c in report["checks"])


def test_bad_property_input_exits_2(
    train_trace: Events, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _write(tmp_path, train_trace[:50])
    args = ["check", str(trace), "--scenario", str(TRAIN)]
    assert main([*args, "--properties", str(APPROVALS), "--property", "nope"]) == 2
    assert "unknown property nope (known: approved-writes" in capsys.readouterr().err
    bad = tmp_path / "p.yaml"
    bad.write_text("- name: p\n  scope: run\n  formula: G (call -> F[<=-1] result)\n")
    assert main([*args, "--properties", str(bad)]) == 2
    assert f"{bad}:3:27: [0].formula: the bound of `F`" in capsys.readouterr().err
    assert main([*args, "--properties", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml:1:1: <root>: cannot read" in capsys.readouterr().err


def test_a_check_named_by_property_reports_its_own_verdict(
    train_mutations: dict[str, Events], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A check has no formula beside it (docs/properties.md): ``--property write_approval``
    lists the check's own verdict among the properties, run even when ``--only`` leaves
    it out; so does any of the seven."""
    trace = _write(tmp_path, train_mutations["drop_approve"])
    args = [str(trace), "--scenario", str(TRAIN)]
    code, report = _json(capsys, *args, "--property", "write_approval")
    assert code == 1
    (p,) = report["properties"]
    wa = next(c for c in report["checks"] if c["name"] == "write_approval")
    assert p == wa and (p["violations"], p["ok"]) == (1, False)
    assert p["first"]["events"][-1]["label"] == "execute"
    (tmp_path / "clean").mkdir()
    clean_trace = _write(tmp_path / "clean", train_mutations["none"])
    clean = [str(clean_trace), "--scenario", str(TRAIN)]
    code, report = _json(capsys, *clean, "--only", "lts", "--property", "requires_order")
    assert code == 0 and [c["name"] for c in report["checks"]] == ["lts", "requires_order"]
    assert report["properties"] == [report["checks"][1]] and report["properties"][0]["ok"]
    assert main(["check", *args, "--property", "write_approval", "--property", "lts"]) == 1
    out = capsys.readouterr().out
    assert "write_approval  the check: events examined" in out and "violated 1  VIOLATED" in out
    assert "lts             the check: events examined" in out
    assert "first counterexample of write_approval (the check, SPEC §6): execute (seq" in out
