"""The command-line examples of the documentation are what the commands print.

Every fenced block of README.md and docs/*.md whose first line is ``$ python -m sim
...`` is a transcript: each ``$ `` line a command (``\\`` continues it on the next
line), the lines up to the next command what it prints (stdout and stderr, unbuffered,
as a terminal shows them; blank lines at the end cut). This test runs each transcript
in a copy of the repository's scenarios and compares. ``PROTOMESH_UPDATE_DOCS=1``
rewrites the blocks with what the commands print instead (then review the diff).
Slow: ``make bench``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```[a-z]*\n(\$ python -m sim .*?)^```$", re.S | re.M)


def transcripts(page: Path) -> list[tuple[int, str]]:
    """(offset, body) of each transcript block of ``page``."""
    text = page.read_text(encoding="utf-8")
    return [(m.start(1), m.group(1)) for m in FENCE.finditer(text)]


def commands(body: str) -> list[str]:
    """The commands of a transcript, continuation lines joined."""
    out: list[str] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            cmd = lines[i][2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
            out.append(cmd)
        i += 1
    return out


def replay(body: str, cwd: Path) -> str:
    """The transcript of ``body``'s commands as they print now."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    out: list[str] = []
    for line, cmd in zip(_command_lines(body), commands(body), strict=True):
        argv = shlex.split(cmd)
        if argv[:3] == ["python", "-m", "sim"]:
            argv[0] = sys.executable
        proc = subprocess.run(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        out.extend(line)
        if proc.stdout.strip():
            out.append(proc.stdout.rstrip("\n") + "\n")
    return "".join(out)


def _command_lines(body: str) -> list[list[str]]:
    """The source lines of each command (with its continuation lines)."""
    groups: list[list[str]] = []
    lines = body.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            group = [lines[i]]
            while group[-1].rstrip("\n").endswith("\\") and i + 1 < len(lines):
                i += 1
                group.append(lines[i])
            groups.append(group)
        i += 1
    return groups


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of what the examples read (scenarios, docs/examples, tests/properties)."""
    root = tmp_path_factory.mktemp("docs")
    for part in ("scenarios", "docs/examples", "tests/properties", "plugins"):
        if (REPO / part).exists():
            shutil.copytree(REPO / part, root / part)
    return root


CASES = [
    pytest.param(page, k, id=f"{page.relative_to(REPO)}#{k}")
    for page in PAGES
    for k in range(len(transcripts(page)))
]


@pytest.mark.slow
@pytest.mark.parametrize(("page", "k"), CASES)
def test_the_transcript_is_what_the_commands_print(page: Path, k: int, sandbox: Path) -> None:
    offset, body = transcripts(page)[k]
    shutil.rmtree(sandbox / "results", ignore_errors=True)
    now = replay(body, sandbox)
    if os.environ.get("PROTOMESH_UPDATE_DOCS") == "1" and now != body:
        text = page.read_text(encoding="utf-8")
        page.write_text(text[:offset] + now + text[offset + len(body) :], encoding="utf-8")
        return
    assert now == body


def test_transcripts_are_found_and_split() -> None:
    """The parser the slow test relies on, on a made-up page and on the real ones."""
    body = "$ python -m sim route a \\\n      --to b\nout 1\n$ cat x\nout 2\n"
    assert commands(body) == ["python -m sim route a --to b", "cat x"]
    first = ["$ python -m sim route a \\\n", "      --to b\n"]
    assert _command_lines(body) == [first, ["$ cat x\n"]]
    found = {page.name: len(transcripts(page)) for page in PAGES}
    assert found["README.md"] >= 2 and found["verify.md"] >= 5
