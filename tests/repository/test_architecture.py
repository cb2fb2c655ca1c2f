"""The layers of protomesh, checked on the source with ``ast`` (docs/architecture.md).

:data:`LAYERS` names every package and top-level module of ``sim`` (``sim`` is the root
package's ``__init__``), its purpose, and what it may import. Every import counts, a
function's own included, except a type-only one (under ``if TYPE_CHECKING:``). A new
package without a rule fails; so does a cycle among the rules or among the imports.
``python tests/repository/test_architecture.py`` prints the table docs/architecture.md carries.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "sim"
DOC = ROOT / "docs" / "architecture.md"
BEGIN = (
    "<!-- layers: printed by `python tests/repository/test_architecture.py`; the test compares -->"
)
END = "<!-- /layers -->"
ARROWS_BEGIN = (
    "<!-- arrows: printed by `python tests/repository/test_architecture.py --arrows`;"
    " the test compares -->"
)
ARROWS_END = "<!-- /arrows -->"

# fmt: off
#: unit → (its purpose, the units it may import). Data flows down: calculus, vocabulary
#: and the small leaves import nothing of ours; the scenario never imports the mesh (the
#: mesh owns router classes, capability matching: sim.admission runs its rules); the
#: engine never imports conformance, experiments or cli; verify never imports the engine
#: (it must be able to disagree with it), nor live (the real mesh can disagree with the
#: simulation: that is the measurement); view reads results and never runs them.
LAYERS: dict[str, tuple[str, frozenset[str]]] = {
    "sim": ("the public API, re-exported lazily (imports nothing at run time)", frozenset()),
    "calculus": ("the paper's calculus: SGD and MCP/MCP⁺ as LTSs, Φ, bisimulation, P1–P4",
                 frozenset()),
    "vocabulary": ("the trace vocabulary: labels, their detail keys and types", frozenset()),
    "spelling": ("name suggestions (`did you mean`), one for every layer", frozenset()),
    "atomic": ("files written whole or not at all", frozenset()),
    "json_input": ("JSON from outside, read within documented bounds", frozenset()),
    "longlived": ("objects a process keeps to its end, and the cyclic collector",
                  frozenset()),
    "processes": ("child processes never outlive protomesh; a signal ends a command",
                  frozenset()),
    "native": ("the engine's per-event modules compiled with mypyc at build time",
               frozenset()),
    "plugins": ("the registry of router and approval-policy names; loading `module:Class`",
                frozenset({"processes"})),
    "properties": ("user properties: LTLf formulas parsed and monitored on traces",
                   frozenset({"spelling", "vocabulary"})),
    "scenario": ("the YAML contract, loaded with located errors",
                 frozenset({"calculus", "longlived", "plugins", "properties", "spelling"})),
    "approval": ("approval policies: whether a caller asks a human before a call",
                 frozenset({"calculus", "plugins", "scenario"})),
    "mesh": ("the protocol graph, translation, capability matching, routers and registry",
             frozenset({"calculus", "longlived", "plugins", "scenario", "spelling"})),
    "admission": ("a scenario loaded and checked by every layer owning a rule on it",
                  frozenset({"approval", "mesh", "scenario"})),
    "conformance": ("the conformance checks on traces",
                    frozenset({"approval", "calculus", "json_input", "scenario", "vocabulary"})),
    "engine": ("the simulation: SimPy components driven by the calculus' LTSs",
               frozenset({"approval", "calculus", "longlived", "mesh", "native", "scenario",
                          "vocabulary"})),
    "view": ("the trace explorer: one HTML page from the files runs wrote",
             frozenset({"atomic", "conformance", "json_input", "properties", "scenario",
                        "vocabulary"})),
    "experiments": ("runs, compare, sweeps, SMC, summaries, plots and reports",
                    frozenset({"sim", "admission", "approval", "atomic", "conformance",
                               "engine", "json_input", "longlived", "mesh", "processes",
                               "properties", "scenario", "view", "vocabulary"})),
    "verify": ("exhaustive verification of the untimed model",
               frozenset({"admission", "approval", "atomic", "calculus", "conformance",
                          "mesh", "properties", "scenario", "vocabulary"})),
    "calibrate": ("a scenario's latencies, times and probabilities fitted to traces",
                  frozenset({"atomic", "conformance", "scenario", "vocabulary"})),
    "otel": ("OpenTelemetry: trace contexts, spans, OTLP export",
             frozenset({"sim", "conformance", "json_input"})),
    "interop": ("real protocol artifacts in and out: MCP and A2A clients, servers, cards",
                frozenset({"sim", "approval", "calculus", "otel", "processes", "scenario",
                           "vocabulary"})),
    "live": ("the live mesh: the scenario deployed as real processes on 127.0.0.1",
             frozenset({"sim", "approval", "atomic", "calculus", "conformance",
                        "experiments", "interop", "longlived", "mesh", "otel", "processes",
                        "scenario", "vocabulary"})),
    "api": ("the Python API of the experiments: compare, smc, verify",
            frozenset({"admission", "conformance", "experiments", "mesh", "scenario",
                       "verify"})),
    "cli": ("`python -m sim`: parse the command line, call one function, render errors",
            frozenset({"sim", "admission", "api", "atomic", "calculus", "calibrate",
                       "conformance", "engine", "experiments", "interop", "json_input",
                       "live", "longlived", "mesh", "native", "otel", "plugins",
                       "processes", "properties", "scenario", "spelling", "verify",
                       "view", "vocabulary"})),
    "__main__": ("`python -m sim` and the `protomesh` script",
                 frozenset({"cli", "longlived", "processes"})),
}
# fmt: on


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = SIM) -> dict[str, Path]:
    """Every module under ``root`` by dotted name (``sim.mesh.graph``)."""
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


MODULES = modules()


def units(root: Path = SIM) -> set[str]:
    """The packages and top-level modules of ``root`` (``sim``: the root's ``__init__``)."""
    found = {"sim"} if (root / "__init__.py").exists() else set()
    found |= {p.parent.name for p in root.glob("*/__init__.py")}
    found |= {p.stem for p in root.glob("*.py") if p.name != "__init__.py"}
    return found


def unit_of(module: str) -> str:
    """``sim.mesh.graph`` → ``mesh``; ``sim.plugins`` → ``plugins``; ``sim`` → ``sim``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "sim"


def _type_only(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@functools.cache
def imports(name: str, path: Path) -> frozenset[str]:
    """Every ``sim.…`` module ``name`` imports, at any depth, relative imports resolved;
    not those under ``if TYPE_CHECKING:`` (its ``else:`` counts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _type_only(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from sim import engine`` imports the subpackage, ``from sim import x`` sim:
            # :func:`imported_modules` cuts each name back to a module
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return frozenset(m for m in found if m == "sim" or m.startswith("sim."))


def imported_modules(module: str, path: Path, known: Iterable[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports: a name imported from one
    (``from sim import __version__``) counts as that module."""
    names = set(known)
    out = set()
    for name in imports(module, path):
        while name not in names and "." in name:
            name = name.rpartition(".")[0]
        if name in names:
            out.add(name)
    return out


def unit_graph(found: Mapping[str, Path]) -> dict[str, set[str]]:
    """unit → the other units its modules import (type-only imports aside)."""
    graph: dict[str, set[str]] = {}
    for module, path in found.items():
        source = unit_of(module)
        targets = {unit_of(m) for m in imported_modules(module, path, found)}
        graph.setdefault(source, set()).update(targets - {source})
    return graph


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """A cycle ``[a, b, …, a]`` of ``graph`` (nodes and successors in sorted order), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def circles(graph: Mapping[str, Iterable[str]]) -> list[tuple[str, ...]]:
    """The circles of ``graph``: its strongly connected components of two nodes or more,
    each sorted, in sorted order (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[tuple[str, ...]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, successors = work[-1]
            nxt = next(successors, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(tuple(sorted(component)))
    return sorted(found)


def module_graph(found: Mapping[str, Path]) -> dict[str, set[str]]:
    """module → the other modules it imports (type-only imports aside)."""
    return {m: imported_modules(m, p, found) - {m} for m, p in found.items()}


def violations(
    found: Mapping[str, Path], layers: Mapping[str, tuple[str, frozenset[str]]]
) -> list[str]:
    """``module imports sim.x`` for each import its unit's rule does not allow."""
    bad = []
    known = set(found) | set(MODULES)
    for module, path in found.items():
        source = unit_of(module)
        allowed = layers[source][1] if source in layers else frozenset()
        for imported in sorted(imported_modules(module, path, known)):
            target = unit_of(imported)
            if target != source and target not in allowed:
                bad.append(f"{module} imports {imported}")
    return bad


def table(layers: Mapping[str, tuple[str, frozenset[str]]] = LAYERS) -> str:
    """The Markdown table of the layers, lowest first (a unit after all it may import)."""
    depth: dict[str, int] = {}

    def level(unit: str) -> int:
        if unit not in depth:
            depth[unit] = 1 + max((level(u) for u in layers[unit][1]), default=-1)
        return depth[unit]

    rows = ["| unit | purpose | may import |", "|---|---|---|"]
    for unit in sorted(layers, key=lambda u: (level(u), u)):
        purpose, allowed = layers[unit]
        shown = ", ".join(f"`{u}`" for u in sorted(allowed)) or "nothing of ours"
        rows.append(f"| `{unit}` | {purpose} | {shown} |")
    return "\n".join(rows)


def reachable(graph: Mapping[str, Iterable[str]], node: str) -> set[str]:
    """Every node ``node`` reaches in ``graph`` by one arrow or more."""
    seen: set[str] = set()
    todo = [node]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def arrows(layers: Mapping[str, tuple[str, frozenset[str]]] = LAYERS) -> list[tuple[str, str]]:
    """The allowed imports less those two others imply (the transitive reduction of the
    rules): ``(a, b)`` for ``a`` may import ``b`` and no other unit ``a`` may import
    reaches ``b``; sorted."""
    graph = {unit: allowed for unit, (_, allowed) in layers.items()}
    return sorted(
        (unit, target)
        for unit, allowed in graph.items()
        for target in allowed
        if not any(target in reachable(graph, other) for other in allowed - {target})
    )


def diagram(layers: Mapping[str, tuple[str, frozenset[str]]] = LAYERS) -> str:
    """The Mermaid flowchart of :func:`arrows`, the callers on top (``a --> b``: a may
    import b, and so everything b may)."""
    node = {"__main__": "main"}  # a Mermaid id: __main__ is its label
    lines = [
        "```mermaid",
        "flowchart TD",
        *(['  main["__main__"]'] if "__main__" in layers else []),
    ]
    lines += [f"  {node.get(a, a)} --> {node.get(b, b)}" for a, b in arrows(layers)]
    return "\n".join([*lines, "```"])


# -- the rules hold on sim ---------------------------------------------------------------


def test_every_package_and_top_level_module_has_a_rule() -> None:
    assert sorted(units()) == sorted(LAYERS)


def test_every_import_is_allowed() -> None:
    assert violations(MODULES, LAYERS) == []


def test_neither_the_rules_nor_the_imports_have_a_cycle() -> None:
    assert find_cycle({u: allowed for u, (_, allowed) in LAYERS.items()}) is None
    assert find_cycle(unit_graph(MODULES)) is None


def test_no_module_circle() -> None:
    """No two modules of sim, in one unit or across units, import each other round a
    circle (type-only imports aside): ``ToolPlus.from_mapping`` delegating to
    ``calculus.mcp.parsing`` was the last one; it is ``tool_plus_from_mapping`` now."""
    assert circles(module_graph(MODULES)) == []


def test_the_scenario_reaches_the_mesh_through_nothing() -> None:
    """scenario → plugins → mesh was a 16-file circle: no path from scenario to mesh."""
    seen = reachable(unit_graph(MODULES), "scenario")
    assert "mesh" not in seen and "approval" not in seen, sorted(seen)


def test_the_doc_carries_the_table_of_the_rules() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, "docs/architecture.md lost its layers table"
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert shown == table(), "run python tests/repository/test_architecture.py and paste its table"


def test_the_doc_carries_the_diagram_of_the_rules() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert ARROWS_BEGIN in text and ARROWS_END in text, "docs/architecture.md lost its arrows"
    shown = text.split(ARROWS_BEGIN, 1)[1].split(ARROWS_END, 1)[0].strip()
    assert shown == diagram(), (
        "run python tests/repository/test_architecture.py --arrows and paste it"
    )


def test_the_diagram_draws_only_the_arrows_nothing_else_implies() -> None:
    layers = {
        "top": ("", frozenset({"mid", "low"})),
        "mid": ("", frozenset({"low"})),
        "low": ("", frozenset()),
        "side": ("", frozenset({"low"})),
    }
    assert arrows(layers) == [("mid", "low"), ("side", "low"), ("top", "mid")]
    drawn = diagram(layers).splitlines()
    assert drawn[:2] == ["```mermaid", "flowchart TD"] and "  top --> low" not in drawn
    # every allowed import is still reachable on the drawing: nothing is lost
    graph: dict[str, set[str]] = {u: {b for a, b in arrows() if a == u} for u in LAYERS}
    for unit, (_, allowed) in LAYERS.items():
        assert allowed <= reachable(graph, unit), unit


def test_only_cli_prints() -> None:
    offenders = []
    for module, path in MODULES.items():
        if unit_of(module) == "cli" or module == "sim.__main__":
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


# -- the checker catches what it is for ---------------------------------------------------


def test_the_checker_counts_function_imports_not_type_only_ones(tmp_path: Path) -> None:
    graph = MODULES["sim.mesh.graph"]
    assert "sim.scenario.model" in imported_modules("sim.mesh.graph", graph, MODULES)
    fake = tmp_path / "x.py"
    fake.write_text(
        "from typing import TYPE_CHECKING\n"
        "import typing\n"
        "from ..engine import network\n"
        "import sim.cli\n"
        "from . import graph\n"
        "if TYPE_CHECKING:\n    from sim.verify import model\n"
        "if typing.TYPE_CHECKING:\n    import sim.live\n"
        "else:\n    import sim.view\n"
        "def late() -> None:\n    from sim.api import compare\n",
        encoding="utf-8",
    )
    found = imports("sim.mesh.x", fake)
    assert {"sim.engine.network", "sim.cli", "sim.mesh.graph"} <= found
    assert {"sim.view", "sim.api.compare"} <= found
    assert not {m for m in found if m.startswith(("sim.verify", "sim.live"))}
    assert violations({"sim.mesh.x": fake}, LAYERS) == [
        f"sim.mesh.x imports {m}" for m in ["sim.api", "sim.cli", "sim.engine", "sim.view"]
    ]


def test_a_new_package_without_a_rule_is_named(tmp_path: Path) -> None:
    root = tmp_path / "sim"
    (root / "fresh").mkdir(parents=True)
    for path in ("__init__.py", "fresh/__init__.py", "fresh/part.py", "lone.py"):
        (root / path).write_text("", encoding="utf-8")
    assert units(root) == {"sim", "fresh", "lone"}
    assert sorted(units(root) - set(LAYERS)) == ["fresh", "lone"]


def test_a_constructed_cycle_is_found(tmp_path: Path) -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    # two modules importing each other's packages: the graph of the files has the cycle
    root = tmp_path / "sim"
    for unit, other in (("one", "two"), ("two", "one")):
        (root / unit).mkdir(parents=True)
        (root / unit / "__init__.py").write_text(f"from sim.{other} import x\n", encoding="utf-8")
    found = modules(root)
    assert find_cycle(unit_graph(found)) == ["one", "two", "one"]


def test_a_constructed_module_circle_is_found(tmp_path: Path) -> None:
    assert circles({"a": {"b"}, "b": {"a", "c"}, "c": set(), "d": {"e"}, "e": {"d"}}) == [
        ("a", "b"),
        ("d", "e"),
    ]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    root = tmp_path / "sim"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "one.py").write_text(
        "import sim.pkg.three\ndef f() -> None:\n    from . import two\n", encoding="utf-8"
    )
    (root / "pkg" / "two.py").write_text("from sim.pkg.one import f\n", encoding="utf-8")
    (root / "pkg" / "three.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sim.pkg import one\n",
        encoding="utf-8",
    )  # type-only: three and one make no circle
    assert circles(module_graph(modules(root))) == [("sim.pkg.one", "sim.pkg.two")]


def test_the_table_lists_a_unit_after_what_it_imports() -> None:
    rows = [line.split("`")[1] for line in table().splitlines()[2:]]
    assert sorted(rows) == sorted(LAYERS)
    for i, unit in enumerate(rows):
        assert LAYERS[unit][1] <= set(rows[:i]), unit
    with pytest.raises(AssertionError):  # the check above fails on a wrong order
        assert LAYERS["mesh"][1] <= set(rows[: rows.index("scenario")])


if __name__ == "__main__":
    sys.stdout.write((diagram() if "--arrows" in sys.argv[1:] else table()) + "\n")
