"""``check`` on bad input: every malformed line, an empty trace and a compressed trace
exit 2 with a located message (file:line and field), never a traceback (issue 16)."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import pytest

from sim.cli import main
from sim.conformance import TraceError, check_trace
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "scenarios" / "train_booking.yaml"

START = b'{"t":0.5,"seq":0,"label":"wf_start","wf":"book","inst":0,"detail":{}}\n'
SEND = (
    b'{"t":0.6,"seq":1,"label":"send","agent":"planner","wf":"book","inst":0,"detail":{"msg":3}}\n'
)
DELIVER = (
    b'{"t":0.7,"seq":2,"label":"deliver","agent":"gw1","wf":"book","inst":0,"detail":{"msg":3}}\n'
)


def _exit(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["check", str(path), "--scenario", str(TRAIN), *extra])
    return code, capsys.readouterr().err


def test_a_deliver_whose_msg_is_an_object_is_a_located_field_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was ``TypeError: unhashable type: 'dict'`` from conservation's ``on_end``."""
    path = tmp_path / "t.jsonl"
    bad = DELIVER.replace(b'{"msg":3}', b'{"msg":{"id":3}}')
    path.write_bytes(START + SEND + bad)
    code, err = _exit(path, capsys)
    assert code == 2
    assert f"{path}:3: not a trace event: `detail.msg` must be an integer" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("line", "field"),
    [
        (
            b'{"seq":1,"label":"hop","detail":{"from":["a"],"to":"b"}}',
            "`detail.from` must be a string",
        ),
        (
            b'{"seq":1,"label":"link_down","detail":{"link":"a-b"}}',
            "`detail.link` must be a list of strings",
        ),
        (b'{"seq":1,"label":"call","inv":{"a":1}}', "`inv` must be an integer"),
        (b'{"seq":1,"label":"call","wf":[1]}', "`wf` must be a string"),
        (b'{"seq":1,"label":"call","detail":5}', "`detail` must be an object"),
        (b'{"seq":1,"label":"error","detail":{"error":7}}', "`detail.error` must be a string"),
    ],
)
def test_a_field_of_the_wrong_type_names_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: bytes, field: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(START + line + b"\n")
    code, err = _exit(path, capsys)
    assert code == 2
    assert f"{path}:2: not a trace event: {field}" in err, err


def test_a_100000_deep_array_line_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was ``RecursionError``; msgspec raises it too on deep nesting inside an object."""
    path = tmp_path / "t.jsonl"
    deep = b"[" * 100_000 + b"]" * 100_000
    path.write_bytes(START + deep + b"\n")
    code, err = _exit(path, capsys)
    assert code == 2
    assert f"{path}:2: not a trace event: a trace line must be a JSON object" in err, err
    nested = b'{"seq":1,"label":"call","x":' + deep + b"}"
    path.write_bytes(START + nested + b"\n")
    code, err = _exit(path, capsys)
    assert code == 2
    assert f"{path}:2: not a trace event: JSON nested too deeply to read" in err, err


def test_bytes_that_are_not_utf8_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(START + b'{"seq":1,"label":"c\xffall"}\n')
    code, err = _exit(path, capsys)
    assert code == 2
    assert f"{path}:2: not UTF-8 text: byte 0xff at column 20" in err, err


@pytest.mark.parametrize("empty", ["file", "devnull", "blank"])
def test_an_empty_trace_is_bad_input_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], empty: str
) -> None:
    path = Path("/dev/null") if empty == "devnull" else tmp_path / "t.jsonl"
    if empty != "devnull":
        path.write_bytes(b"" if empty == "file" else b"\n\n")
    code, err = _exit(path, capsys)
    assert code == 2
    assert f"error: {path}: no events (an empty trace; --allow-empty accepts it)" in err, err
    code, _ = _exit(path, capsys, "--allow-empty")
    assert code == 0


def test_an_empty_trace_with_allow_empty_says_nothing_was_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n", encoding="utf-8")
    assert main(["check", str(path), "--scenario", str(TRAIN), "--allow-empty"]) == 0
    assert "note: empty trace: nothing to check" in capsys.readouterr().out


def test_a_gzip_trace_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Was ``not a trace event: utf-8``: the gzip file is known by its magic number,
    whatever its name, and gives the same report as the plain file."""
    plain = tmp_path / "t.jsonl"
    hop = (
        b'{"t":0.65,"seq":2,"label":"hop","agent":"planner","wf":"book","inst":0,'
        b'"proto":"A2A","detail":{"msg":3,"from":"planner","to":"gw1","proto":"A2A"}}\n'
    )
    plain.write_bytes(START + SEND + hop + DELIVER.replace(b'"seq":2', b'"seq":3'))
    packed = tmp_path / "t.data"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    scenario = load_scenario(TRAIN)
    a, b = check_trace(plain, scenario), check_trace(packed, scenario)
    assert b.events == a.events == 4
    assert [v.to_json() for v in b.verdicts] == [v.to_json() for v in a.verdicts]
    assert b.verdict("conservation").examined == 3
    code, _ = _exit(packed, capsys)
    assert code == 0


def test_a_bad_line_in_a_gzip_trace_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress(START + b'{"seq":1}\n'))
    code, err = _exit(path, capsys)
    assert code == 2
    assert f"{path}:2: not a trace event: `label` must be a string (missing)" in err, err
    truncated = gzip.compress(START * 2000)[:-40]
    path.write_bytes(truncated)
    code, err = _exit(path, capsys)
    assert code == 2
    assert f"{path}:" in err and "cannot read the file" in err, err


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("bz2", bz2.compress(START)),
        ("xz", lzma.compress(START)),
        ("zstd", b"\x28\xb5\x2f\xfd" + b"\x00" * 16),
        ("lz4", b"\x04\x22\x4d\x18" + b"\x00" * 16),
    ],
)
def test_other_compressions_are_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, data: bytes
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    code, err = _exit(path, capsys)
    assert code == 2
    assert f"{path}: a {name}-compressed file: decompress it first" in err, err
    with pytest.raises(TraceError, match=f"a {name}-compressed file"):
        check_trace(path, load_scenario(TRAIN))
