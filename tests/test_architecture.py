"""The dependency rules of ARCHITECTURE.md, checked on the source with ``ast``.

Data flows down: ``calculus`` and ``scenario`` import nothing of ours above them;
``mesh`` never imports ``engine``; ``engine`` never imports ``experiments``,
``conformance`` or ``cli``; ``conformance`` never imports ``engine``; only ``cli``
prints for the user. Packages that do not exist yet simply have no modules to check.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SIM = Path(__file__).resolve().parents[1] / "sim"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SIM.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(SIM.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """Every ``sim.…`` module ``name`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            # ``from sim import engine`` imports the subpackage
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {m for m in found if m == "sim" or m.startswith("sim.")}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _within(module: str, package: str) -> bool:
    return module == f"sim.{package}" or module.startswith(f"sim.{package}.")


def _in(package: str) -> list[str]:
    return [m for m in MODULES if _within(m, package)]


# (package, packages it must never import); ``None`` means: nothing of ``sim`` outside itself
RULES: list[tuple[str, set[str] | None]] = [
    ("calculus", None),
    ("vocabulary", None),  # the trace vocabulary is a leaf
    # the scenario's tool entries map onto the calculus's models (SideEffect, Relation)
    ("scenario", {"mesh", "engine", "experiments", "conformance", "interop", "cli"}),
    ("mesh", {"engine", "experiments", "conformance", "cli"}),
    ("engine", {"experiments", "conformance", "cli"}),
    ("conformance", {"engine", "experiments", "cli"}),
    # verify must be able to disagree with the engine it checks
    ("verify", {"engine", "experiments", "cli"}),
    # the live mesh shares the engine's facts through mesh, calculus and vocabulary, never
    # the engine itself: the simulation and the real mesh can disagree (the measurement)
    ("live", {"engine", "cli", "view"}),
    ("calibrate", {"engine", "live", "cli"}),
]


def _violations(package: str, forbidden: set[str] | None) -> list[str]:
    bad = []
    for module in _in(package):
        for imported in sorted(_imports(module, MODULES[module])):
            target = _package(imported)
            if target == package:
                continue
            if forbidden is None:
                # ``sim`` itself (e.g. ``__version__``) is harmless; a sibling is not
                if imported == "sim":
                    continue
                bad.append(f"{module} imports {imported}")
            elif target in forbidden:
                bad.append(f"{module} imports {imported}")
    return bad


@pytest.mark.parametrize(("package", "forbidden"), RULES, ids=[r[0] for r in RULES])
def test_dependency_rule(package: str, forbidden: set[str] | None) -> None:
    assert _violations(package, forbidden) == []


def test_only_cli_prints() -> None:
    offenders = []
    for module, path in MODULES.items():
        if _within(module, "cli") or module == "sim.__main__":
            continue
        text = path.read_text(encoding="utf-8")
        if "print" not in text:
            continue  # no call of print without the word: not worth parsing
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.Call):
                func = node.func
                if (isinstance(func, ast.Name) and func.id == "print") or (
                    isinstance(func, ast.Attribute)
                    and func.attr == "print"
                    and isinstance(func.value, ast.Name)
                    and func.value.id == "builtins"
                ):
                    offenders.append(f"{module}:{node.lineno}")
    assert offenders == []


def test_the_checker_sees_the_packages_and_catches_a_violation(tmp_path: Path) -> None:
    assert "sim.mesh.routing" in MODULES and "sim.scenario.model" in MODULES
    graph_imports = _imports("sim.mesh.graph", MODULES["sim.mesh.graph"])
    assert "sim.scenario.model" in graph_imports
    fake = tmp_path / "x.py"
    fake.write_text("from ..engine import network\nimport sim.cli\nfrom . import graph\n")
    found = _imports("sim.mesh.x", fake)
    assert {"sim.engine", "sim.engine.network", "sim.cli", "sim.mesh", "sim.mesh.graph"} <= found
