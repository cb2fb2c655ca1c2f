"""Issue 38 item 6: ``check`` on hostile traces. Integers past MAX_INT_DIGITS and lines
past MAX_LINE are bad input (exit 2, located, memory bounded: ``/dev/zero`` too); a trace
without its hops fails ``conservation`` and a send over a link the scenario lacks fails
``route_validity``, each naming the failure (the repro files of
tests/fixtures/attack/traces, and the same damage on the train_booking trace)."""

from __future__ import annotations

import functools
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cli import main
from sim.conformance import events
from sim.conformance.checks import TraceError, check_trace
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
ATTACK = ROOT / "tests" / "fixtures" / "attack" / "traces"
EXPECTED: dict[str, dict[str, Any]] = yaml.safe_load(
    (ATTACK / "expected.yaml").read_text(encoding="utf-8")
)
MINIMAL = ROOT / "tests" / "fixtures" / "scenarios" / "minimal.yaml"
TRAIN = ROOT / "scenarios" / "train_booking.yaml"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_attack_traces_exit_as_expected_naming_the_failure(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    want = EXPECTED[name]
    path = ATTACK / f"{name}.jsonl"
    code = main(["check", str(path), "--scenario", str(MINIMAL), "--json"])
    out, err = capsys.readouterr()
    assert code == want["exit"], (out, err)
    if code == 2:
        assert err == f"error: {ATTACK / want['message']}\n"
        return
    report = json.loads(out)
    failing = {c["name"]: c for c in report["checks"] if not c["ok"]}
    assert list(failing) == [want["check"]]
    assert failing[want["check"]]["first"]["message"] == want["message"]


def test_an_endless_line_is_refused_at_the_bound_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"seq":0,"label":"wf_start"}\n' + b" " * (events.MAX_LINE + 1) + b"\n")
    with pytest.raises(TraceError) as info:
        check_trace(path, load_scenario(MINIMAL))
    assert (info.value.line, info.value.message) == (
        2,
        f"a line longer than {events.MAX_LINE:,} bytes (the bound of a trace line)",
    )
    if os.path.exists("/dev/zero"):  # one endless line: read to the bound, then refused
        with pytest.raises(TraceError, match="line longer than"):
            check_trace("/dev/zero", load_scenario(MINIMAL))


def _read(data: bytes, block: int, piece: int, limit: int) -> list[bytes]:
    saved = events.BLOCK, events.PIECE, events.MAX_LINE
    events.BLOCK, events.PIECE, events.MAX_LINE = block, piece, limit
    try:
        fh = io.BufferedReader(io.BytesIO(data))  # type: ignore[arg-type]
        parts = list(events._file_blocks(fh, "t"))
        assert all(parts), "no empty block"
        return [line for part in parts for line in part]
    finally:
        events.BLOCK, events.PIECE, events.MAX_LINE = saved


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([b"a", b"bcd", b"\n", b"\n\n", b"efghij"]), max_size=60),
    st.integers(1, 16),
    st.integers(1, 20),
    st.integers(1, 12),
)
def test_blocks_give_the_lines_of_one_split_or_stop_at_the_first_long_line(
    parts: list[bytes], block: int, piece: int, limit: int
) -> None:
    data = b"".join(parts)
    whole = data.split(b"\n")
    want = [line + b"\n" for line in whole[:-1]] + ([whole[-1]] if whole[-1] else [])
    long = next((k for k, line in enumerate(want) if len(line.rstrip(b"\n")) > limit), None)
    if long is None:
        assert _read(data, block, piece, limit) == want
    else:
        with pytest.raises(TraceError) as info:
            _read(data, block, piece, limit)
        assert info.value.line == long + 1


Events = list[dict[str, Any]]


def _failing(events_: Events, tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events_), encoding="utf-8")
    report = check_trace(path, load_scenario(TRAIN))
    return {v.name: v.message for v in report.verdicts if not v.ok}


def test_train_trace_without_hops_fails_conservation_only(
    train_mutations: dict[str, Events], tmp_path: Path
) -> None:
    failing = _failing(train_mutations["no_hops"], tmp_path)
    assert list(failing) == ["conservation"]
    assert ", but the message is at planner: no hop took it to " in failing["conservation"]


def test_train_send_over_a_missing_link_fails_route_validity_only(
    train_mutations: dict[str, Events], tmp_path: Path
) -> None:
    failing = _failing(train_mutations["send_over_missing_link"], tmp_path)
    assert failing == {
        "route_validity": "send (seq 1) of message 0 over planner → accounts: "
        "there is no link planner–accounts"
    }


def test_a_hop_from_where_the_message_is_not_fails_conservation(
    train_copy: Events, tmp_path: Path
) -> None:
    hops = [k for k, e in enumerate(train_copy) if e["label"] == "hop"]
    second = next(k for k in hops if train_copy[k]["detail"]["from"] != "planner")
    first = next(
        k
        for k in hops
        if k < second and train_copy[k]["detail"]["msg"] == train_copy[second]["detail"]["msg"]
    )
    seq, msg, at = (train_copy[second][k] for k in ("seq", "detail", "agent"))
    del train_copy[first]  # the message never left its sender, yet hops on from the next node
    failing = _failing(train_copy, tmp_path)
    assert list(failing) == ["conservation"]
    assert failing["conservation"].startswith(
        f"hop (seq {seq}) of message {msg['msg']} from {at}, but the message is at "
    )


LINE_PARTS = st.sampled_from(
    ['{"t":0,"seq":', '"label":"send",', '"detail":{"msg":', "9" * 400, "1e999", "}", "[", "]"]
) | st.sampled_from(['"inst":', "-", "1", ",", '"wf":"flow"', "\n", "\x00", "\xff"])


@functools.cache
def _minimal() -> Any:
    return load_scenario(MINIMAL)


@settings(max_examples=80, deadline=None)
@given(st.lists(LINE_PARTS, max_size=40))
def test_any_trace_text_is_checked_or_refused_as_a_trace_error(parts: list[str]) -> None:
    data = "".join(parts).encode("utf-8", "surrogateescape")
    try:
        check_trace([line for line in data.split(b"\n")], _minimal())
    except TraceError as exc:
        assert exc.line is None or exc.line >= 1


def test_view_reads_a_trace_whose_unread_detail_key_has_a_huge_integer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "trace.jsonl").write_bytes((ATTACK / "junk_int_in_counterexample.jsonl").read_bytes())
    out = tmp_path / "r.html"
    assert main(["view", str(folder), "--scenario", str(MINIMAL), "--out", str(out)]) == 0
    assert "50 of 50 events" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_check_of_dev_zero_exits_2_within_bounded_memory() -> None:
    import subprocess
    import sys

    probe = (
        "import resource, sys\n"
        "from sim.cli import main\n"
        f"code = main(['check', '/dev/zero', '--scenario', {str(MINIMAL)!r}])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    err = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    assert err[0] == (
        f"error: /dev/zero:1: a line longer than {events.MAX_LINE:,} bytes (the bound of a "
        "trace line)"
    )
    assert int(err[-1]) < 300 * 1024, f"peak RSS {int(err[-1]) // 1024} MiB"  # KiB on Linux
