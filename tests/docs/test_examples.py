"""Every shell block of README.md and docs/ runs as written (issue 37).

A shell block is a fenced block in ``sh``, ``bash``, ``shell`` or ``console``, or one
without a language whose first line is ``$ python -m sim ...``. Two kinds:

- a **transcript** (its lines start with ``$ ``): each ``$ `` line a command (``\\``
  continues it on the next line), the lines up to the next command what it prints (stdout
  and stderr, unbuffered, as a terminal shows them; blank lines at the end cut). The test
  runs the commands and compares; ``PROTOMESH_UPDATE_DOCS=1`` rewrites the block with what
  they print instead (then review the diff);
- a **script**: the block as one ``bash -euo pipefail`` script, which must exit 0 (a block
  that needs a server starts it in the background and stops it).

Each runs in a fresh folder holding a copy of what the docs read (scenarios, docs/examples,
examples, tests/properties; data/ linked), with ``python`` the test's interpreter and
``protomesh`` the command line of this checkout. A block is in the default suite unless the
line before its fence says ``<!-- doc-block: slow: WHY -->`` (``make bench``) or
``<!-- doc-block: ci: WHY -->`` (a ``make`` target that installs or runs the suite itself:
``.ci/run`` runs it in a fresh clone; here its commands are checked to be the ones
``.ci/run`` runs). Placeholder syntax (``[--opt]``, ``a|b``, ``NAME...``) belongs in blocks
without a shell language; a check finds it in shell blocks.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
SHELLS = ("sh", "bash", "shell", "console")
FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```$", re.S | re.M)
MARK = re.compile(r"<!-- doc-block: (slow|ci): [^>]+ -->\n\Z")
#: what a paste-able command must not hold: an optional ``[--x]`` or ``[x]``, alternatives
#: ``a|b`` (a pipe has spaces around it), a repetition ``NAME...``
PLACEHOLDER = re.compile(r"\[-{0,2}[A-Za-z]|(?<=\w)\|(?=\w)|[A-Za-z\]]\.\.\.")


@dataclass(frozen=True)
class Block:
    """One shell block: where it is (offset of its body), its language, body and cost."""

    page: Path
    offset: int
    language: str
    body: str
    cost: str  # "cheap", "slow" or "ci"

    @property
    def where(self) -> str:
        text = self.page.read_text(encoding="utf-8")
        line = text.count("\n", 0, self.offset)  # the fence's line, 1-based
        return f"{self.page.relative_to(REPO)}:{line}"

    @property
    def transcript(self) -> bool:
        return self.body.startswith("$ ")


def shell_blocks(page: Path) -> list[Block]:
    """The shell blocks of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    out: list[Block] = []
    for m in FENCE.finditer(text):
        language, body = m.group(1), m.group(2)
        if language not in SHELLS and not (language == "" and body.startswith("$ python -m sim")):
            continue
        mark = MARK.search(text, 0, m.start())
        cost = mark.group(1) if mark and mark.end() == m.start() else "cheap"
        out.append(Block(page, m.start(2), language, body, cost))
    return out


def commands(body: str) -> list[str]:
    """The commands of a transcript, continuation lines joined."""
    return [
        " ".join(part.rstrip().rstrip("\\").strip() for part in group)[2:]
        for group in _command_lines(body)
    ]


def _command_lines(body: str) -> list[list[str]]:
    """The source lines of each command of a transcript (with its continuation lines)."""
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


def placeholders(body: str) -> list[str]:
    """The command lines of a shell block that hold placeholder syntax (comments, and what a
    transcript's commands print, left out)."""
    found = []
    lines = body.splitlines()
    if body.startswith("$ "):
        lines = [line for group in _command_lines(body) for line in group]
    for line in lines:
        line = line.rstrip("\n")
        code = line.split(" # ", 1)[0]
        if not code.lstrip().startswith("#") and PLACEHOLDER.search(code):
            found.append(line)
    return found


def sandbox(root: Path) -> dict[str, str]:
    """Fill ``root`` with what the docs read; the environment a block runs in."""
    for part in ("scenarios", "docs/examples", "examples", "tests/properties"):
        shutil.copytree(REPO / part, root / part)
    (root / "data").symlink_to(REPO / "data")
    bin_ = root / ".bin"
    bin_.mkdir()
    for name, line in (
        ("python", f'exec {shlex.quote(sys.executable)} "$@"'),
        ("protomesh", f'exec {shlex.quote(sys.executable)} -m sim "$@"'),
    ):
        (bin_ / name).write_text(f"#!/bin/sh\n{line}\n", encoding="utf-8")
        (bin_ / name).chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
        "PYTHONUNBUFFERED": "1",
        "COLUMNS": "200",
    }


def replay(body: str, cwd: Path, env: dict[str, str]) -> str:
    """The transcript of ``body``'s commands as they print now."""
    out: list[str] = []
    for line, cmd in zip(_command_lines(body), commands(body), strict=True):
        proc = subprocess.run(
            ["bash", "-c", cmd],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        out.extend(line)
        if proc.stdout.strip():
            out.append(proc.stdout.rstrip("\n") + "\n")
    return "".join(out)


def run_script(body: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``body`` as one ``bash -euo pipefail`` script (``-x``: each command echoed)."""
    return subprocess.run(
        ["bash", "-euxo", "pipefail", "-c", body],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=3600,
    )


ALL = [b for page in PAGES for b in shell_blocks(page)]


def _param(block: Block) -> object:
    marks = [pytest.mark.slow] if block.cost == "slow" else []
    return pytest.param(block, marks=marks, id=block.where)


@pytest.mark.parametrize("block", [_param(b) for b in ALL if b.cost != "ci"])
def test_the_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    env = sandbox(tmp_path)
    if block.transcript:
        now = replay(block.body, tmp_path, env)
        if os.environ.get("PROTOMESH_UPDATE_DOCS") == "1" and now != block.body:
            text = block.page.read_text(encoding="utf-8")
            end = block.offset + len(block.body)
            block.page.write_text(text[: block.offset] + now + text[end:], encoding="utf-8")
            return
        assert now == block.body, block.where
    else:
        proc = run_script(block.body, tmp_path, env)
        assert proc.returncode == 0, f"{block.where}: exit {proc.returncode}\n{proc.stdout}"


@pytest.mark.parametrize("block", [_param(b) for b in ALL if b.cost == "ci"])
def test_a_ci_block_is_what_ci_runs(block: Block) -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for line in block.body.splitlines():
        command = line.split("#", 1)[0].strip()
        if command:
            assert re.search(rf"^[^#\n]*\b{re.escape(command)}\b", ci, re.M), (
                f"{block.where}: {command!r} is not run by .ci/run"
            )


def test_no_shell_block_holds_placeholder_syntax() -> None:
    found = [f"{b.where}: {line}" for b in ALL for line in placeholders(b.body)]
    assert found == []


def test_placeholders_are_found() -> None:
    body = (
        "python -m sim native build|status\n"
        "python -m sim export mcp F --out t.json [--tool NAME]...\n"
        "python -m sim run F | head -3   # a real pipe\n"
        "# [--comment] is prose\n"
    )
    assert placeholders(body) == body.splitlines()[:2]
    transcript = "$ python -m sim route F [--json]\nplanner -MCP+-> gw2 [MCP+→MCP]\n"
    assert placeholders(transcript) == ["$ python -m sim route F [--json]"]


def test_blocks_are_found_split_and_costed(tmp_path: Path) -> None:
    """The parser on a made-up page, and on the real ones."""
    page = tmp_path / "page.md"
    page.write_text(
        "intro\n```sh\nmake x\n```\n<!-- doc-block: slow: minutes -->\n```console\n"
        "$ python -m sim route a \\\n      --to b\nout 1\n$ cat x\nout 2\n```\n"
        "```\npython -m sim run FILE [--seed S]\n```\n```yaml\na: 1\n```\n",
        encoding="utf-8",
    )
    script, transcript = shell_blocks(page)
    assert (script.cost, script.transcript, script.body) == ("cheap", False, "make x\n")
    assert (transcript.cost, transcript.transcript) == ("slow", True)
    assert commands(transcript.body) == ["python -m sim route a --to b", "cat x"]
    assert _command_lines(transcript.body)[0] == ["$ python -m sim route a \\\n", "      --to b\n"]
    found = {str(p.relative_to(REPO)): len(shell_blocks(p)) for p in PAGES}
    assert found["README.md"] >= 4 and found["docs/verify.md"] >= 5
    assert found["docs/interop.md"] >= 1


def test_a_failing_command_fails_its_script(tmp_path: Path) -> None:
    proc = run_script("true\nfalse\necho after\n", tmp_path, dict(os.environ))
    assert proc.returncode == 1 and "+ false" in proc.stdout and "after" not in proc.stdout
