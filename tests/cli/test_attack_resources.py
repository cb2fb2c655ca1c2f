"""The attack of issue 38 on resources (items 3, 5, 7 and 12), one repro file each under
``tests/fixtures/attack/resources/``: the command that failed, its exit code now and the
located message it prints (``# command:``, ``# exit:``, ``# expect:`` in the file's
header; ``{file}`` is the file's path). Every one crashed, ran out of memory or ran for
minutes before; each now exits 2 at once, naming the element, located."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import NamedTuple

import pytest

from sim.cli import main

REPROS = Path(__file__).parents[1] / "fixtures" / "attack" / "resources"


class Repro(NamedTuple):
    """A repro file's header: the command (with its options), the exit, the message."""

    argv: list[str]
    exit: int
    expect: str


def header(path: Path) -> Repro:
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(": ")
        if key in ("command", "exit", "expect"):
            fields[key] = value
    command, *options = shlex.split(fields["command"])
    return Repro([command, str(path), *options], int(fields["exit"]), fields["expect"])


@pytest.mark.parametrize("name", sorted(p.name for p in REPROS.glob("*.yaml")))
def test_a_repro_exits_with_its_located_message(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = REPROS / name
    repro = header(path)
    argv = repro.argv
    if argv[0] in ("run", "compare"):
        argv = [*argv, "--out", str(tmp_path / "out"), "--quiet"]
    code = main(argv)
    out = capsys.readouterr()
    said = out.out + out.err
    assert code == repro.exit, said
    assert repro.expect.format(file=path) in said, said
    assert "Traceback" not in said


def test_every_finding_of_the_resources_part_has_a_repro() -> None:
    names = {p.name for p in REPROS.glob("*.yaml")}
    assert len(names) == 12
    for path in REPROS.glob("*.yaml"):
        repro = header(path)
        assert repro.exit == 2 and repro.expect, path.name
