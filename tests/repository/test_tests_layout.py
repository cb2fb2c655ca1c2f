"""The tests mirror the package and share code through one module (docs/testing.md).

``tests/<package>/test_*.py`` tests ``sim/<package>/``; ``tests/test_<module>*.py`` tests the
top-level module ``sim/<module>.py``; ``tests/repository/`` and ``tests/docs/`` test the
repository and its pages as a whole. Code that several test modules use lives in
``tests.harness`` (fixtures in the ``conftest.py`` files): no test module imports another,
neither by its package name (``tests.engine.test_trace``) nor by a bare name of a file that
sits in ``tests/`` (``from test_signals import …``, ``from parts import …``). Every test
file the pages, the code, CI or the build name (``tests/…py``) exists.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: folders of tests/ that hold no test module of a package (data, scripts, the shared code)
NOT_MIRRORS = frozenset({"fixtures", "mcp_servers", "harness", "__pycache__"})
#: folders of tests/ that test the repository rather than one package of sim
WHOLE = frozenset({"repository", "docs"})
SHARED = "tests.harness"


def _local_names(tests: Path) -> frozenset[str]:
    """Every name a bare import could reach a Python file of ``tests/`` by: the files' stems
    and the folders that hold them (the data under ``fixtures/`` is no module)."""
    names: set[str] = set()
    for path in tests.rglob("*.py"):
        rel = path.relative_to(tests)
        if rel.parts[0] not in ("fixtures", "__pycache__"):
            names |= {path.stem, *rel.parts[:-1]}
    return frozenset(names - {"__init__"})


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` and of the blocks inside it (imports are statements:
    no need to visit the expressions, most of a module's nodes)."""
    for stmt in body:
        yield stmt
        for block in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, block, []))
        for handler in getattr(stmt, "handlers", []):
            yield from _statements(handler.body)
        for case in getattr(stmt, "cases", []):
            yield from _statements(case.body)


def _imported(tree: ast.Module) -> list[tuple[int, int, str]]:
    """(line, column, dotted name) of every import in the module, at any depth."""
    found: list[tuple[int, int, str]] = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            found += [(node.lineno, node.col_offset + 1, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            if (
                node.module is None or node.module == "tests"
            ):  # from . import x, from tests import x
                sep = "" if node.module is None else "."
                found += [
                    (node.lineno, node.col_offset + 1, base + sep + a.name) for a in node.names
                ]
            else:
                found.append((node.lineno, node.col_offset + 1, base))
    return sorted(found)


def import_problems(tests: Path) -> list[str]:
    """``file:line:col: imports NAME: why`` for every import in ``tests/`` of another test
    module; the shared code (``tests.harness``) may import its own modules only."""
    local = _local_names(tests)
    # A module is parsed only when a line could start such an import (an import's module
    # is on its statement's first line): parsing every module would cost a second.
    names = "|".join(sorted(map(re.escape, local | {"tests"})))
    suspect = re.compile(
        rf"^[ \t]*(from[ \t]+(\.|tests[ \t]|(?!tests\.harness\b)({names})\b)"
        rf"|import[ \t].*\b({names})\b)",
        re.MULTILINE,
    )
    problems = []
    for path in sorted(tests.rglob("*.py")):
        rel = path.relative_to(tests.parent)
        if rel.parts[1] in NOT_MIRRORS - {"harness"}:
            continue  # data and server scripts run as their own processes
        in_harness = rel.parts[1] == "harness"
        text = path.read_text(encoding="utf-8")
        if not suspect.search(text):
            continue
        tree = ast.parse(text, filename=str(rel))
        for line, col, name in _imported(tree):
            head = name.split(".")[0]
            if name.startswith("."):
                why = "a relative import of a test module"
            elif name == SHARED or name.startswith(SHARED + "."):
                continue
            elif head == "tests":
                why = "a test module imports another (share it through tests.harness)"
            elif head in local:
                why = "a bare import of a file in tests/ (import it from tests.harness)"
            else:
                continue
            if in_harness and why.startswith("a relative"):
                continue  # tests.harness's modules importing each other
            problems.append(f"{rel}:{line}:{col}: imports {name}: {why}")
    return problems


def layout_problems(tests: Path, sim: Path) -> list[str]:
    """``path: why`` for every test module that is not where the package it tests says."""
    packages = {p.parent.name for p in sim.glob("*/__init__.py")}
    modules = {p.stem.strip("_") for p in sim.glob("*.py")} - {"init"}
    problems = []
    for path in sorted(tests.rglob("test_*.py")):
        rel = path.relative_to(tests.parent)
        parts = rel.parts[1:]
        if len(parts) == 1:
            stem = path.stem.removeprefix("test_")
            if not any(stem == m or stem.startswith(m + "_") for m in modules):
                problems.append(f"{rel}: no top-level module sim/{stem.split('_')[0]}.py")
        elif parts[0] in NOT_MIRRORS:
            problems.append(f"{rel}: a test module in {parts[0]}/, which holds no tests")
        elif parts[0] not in packages | WHOLE:
            problems.append(f"{rel}: no package sim/{parts[0]}/")
        elif len(parts) > 2:
            problems.append(f"{rel}: deeper than tests/<package>/test_*.py")
        elif not (path.parent / "__init__.py").is_file():
            problems.append(f"{rel}: its folder has no __init__.py (tests/ is a package)")
    return problems


#: a path of a Python file under tests/, as the docs, the code and CI name one
TEST_PATH = re.compile(r"(?<![\w/.-])tests/[\w/]*\w\.py\b")
#: where a test file is named: the pages, the code, CI and the build (test modules: their
#: docstrings only; a test's body may name a made-up tree)
NAMING = (
    "*.md",
    "docs/**/*.md",
    "data/**/*.md",
    "examples/**/*.md",
    "sim/**/*.py",
    "benchmarks/**/*.py",
    "tests/**/*.py",
    "tests/fixtures/**/*.yaml",
    ".ci/run",
    "Makefile",
    "pyproject.toml",
)


def stale_test_paths(root: Path) -> list[str]:
    """``file:line: path`` for every named ``tests/…py`` that does not exist."""
    problems = []
    for pattern in NAMING:
        for path in sorted(root.glob(pattern)):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8")
            rel = path.relative_to(root)
            if rel.parts[0] == "tests" and path.suffix == ".py" and path.name.startswith("test_"):
                text = text.split('"""', 2)[1] if text.startswith('"""') else ""
            for k, line in enumerate(text.splitlines(), 1):
                problems += [
                    f"{rel}:{k}: {m.group(0)}"
                    for m in TEST_PATH.finditer(line)
                    if not (root / m.group(0)).is_file()
                ]
    return problems


def test_every_test_file_named_exists() -> None:
    assert stale_test_paths(TESTS.parent) == []


def test_a_test_file_named_that_is_gone_is_named(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "tests/engine/test_trace.py": '"""Pinned with tests/test_golden_traces.py."""\n'
            'x = "tests/made/up.py"\n',
            "docs/engine.md": "See `tests/engine/test_trace.py`\n"
            "and `tests/test_engine_trace.py`.\n",
            ".ci/run": "pytest tests/engine/test_trace.py::test_x tests/test_cli.py\n",
        },
    )
    assert stale_test_paths(tmp_path) == [
        "docs/engine.md:2: tests/test_engine_trace.py",
        "tests/engine/test_trace.py:1: tests/test_golden_traces.py",
        ".ci/run:1: tests/test_cli.py",
    ]


def test_no_test_module_imports_another() -> None:
    assert import_problems(TESTS) == []


def test_every_test_module_sits_where_its_package_is() -> None:
    assert layout_problems(TESTS, TESTS.parent / "sim") == []


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root / "tests"


def test_an_import_of_a_test_module_is_named_with_its_place(tmp_path: Path) -> None:
    tests = _tree(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/harness/__init__.py": "",
            "tests/harness/runs.py": "from . import other\nfrom tests.harness import other\n",
            "tests/engine/__init__.py": "",
            "tests/engine/parts.py": "X = 1\n",
            "tests/engine/test_a.py": (
                "import json\nfrom tests.harness.runs import run\nfrom sim import engine\n"
                "from tests.engine.test_b import B\n"
                "def f():\n    from test_b import C\n"
                "from parts import X\nfrom tests.engine import test_b\nfrom . import test_b\n"
            ),
            "tests/engine/test_b.py": "B = C = 1\n",
            "tests/fixtures/server.py": "from parts import X\n",
        },
    )
    assert import_problems(tests) == [
        "tests/engine/test_a.py:4:1: imports tests.engine.test_b: a test module imports "
        "another (share it through tests.harness)",
        "tests/engine/test_a.py:6:5: imports test_b: a bare import of a file in tests/ "
        "(import it from tests.harness)",
        "tests/engine/test_a.py:7:1: imports parts: a bare import of a file in tests/ "
        "(import it from tests.harness)",
        "tests/engine/test_a.py:8:1: imports tests.engine: a test module imports another "
        "(share it through tests.harness)",
        "tests/engine/test_a.py:9:1: imports .test_b: a relative import of a test module",
    ]


def test_a_test_module_out_of_place_is_named(tmp_path: Path) -> None:
    tests = _tree(
        tmp_path,
        {
            "sim/__init__.py": "",
            "sim/__main__.py": "",
            "sim/approval.py": "",
            "sim/engine/__init__.py": "",
            "tests/test_approval_plugins.py": "",
            "tests/test_main_dependencies.py": "",
            "tests/test_engine_trace.py": "",
            "tests/engine/__init__.py": "",
            "tests/engine/test_trace.py": "",
            "tests/engine/deep/test_x.py": "",
            "tests/enginee/test_y.py": "",
            "tests/harness/test_z.py": "",
            "tests/repository/test_w.py": "",
        },
    )
    assert layout_problems(tests, tmp_path / "sim") == [
        "tests/engine/deep/test_x.py: deeper than tests/<package>/test_*.py",
        "tests/enginee/test_y.py: no package sim/enginee/",
        "tests/harness/test_z.py: a test module in harness/, which holds no tests",
        "tests/repository/test_w.py: its folder has no __init__.py (tests/ is a package)",
        "tests/test_engine_trace.py: no top-level module sim/engine.py",
    ]
