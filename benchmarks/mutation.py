"""Seeded mutants of the shipped scenarios and what protomesh does with each (issue 16, item 8).

Mutators (each ``(text, rng) -> text``), the ones that found the defects of issue 16:

- on the parsed document: ``delete`` a node, ``duplicate`` a list entry (duplicate ids) or a
  line (a duplicate key), ``swap`` a value's type (number, string, bool, null, list,
  mapping), ``extreme`` numbers (0, -1, ±1e308, 1e-300, 1e-6, 2**63, 1e9, .inf, .nan),
  ``nest`` a value 50 to 5,000 lists or mappings deep;
- on the text: ``control`` characters (NUL, ESC, DEL, ...) at a random place, ``alias``:
  a self-referencing alias, an alias reused across the document, or an alias bomb under an
  ignored ``x-`` key;
- issue 38: ``formula``, a property whose formula is nested up to 5,000 deep, cut short
  or token soup; ``digits``, a number replaced by one of 300 to 5,000 digits or beyond the
  float range; ``plugin``, the routers (or the approval policy) replaced by one plug-in of
  :mod:`benchmarks.plugin_matrix` that exits, is interrupted or raises at import, while
  built or in a hook, or answers a wrong type (a replication that then fails with the
  plug-in's own located error is ``plugin error``, not a finding).
- issue 38's resources: ``huge`` times and rates (a duration past a float clock's
  microseconds, a rate past a microsecond's gap), ``long_name`` (a scenario, router, workflow or
  tool name or an id of 256 to 5,000 characters), ``big_mesh`` (a million-agent
  ``topology:`` of large degree), in :mod:`benchmarks.mutation_resources`.

:func:`judge` runs one mutant as a user would: ``validate`` (in this process, through the
command line) must exit 0 or 2 and never raise; a mutant that validates runs one short
replication (``duration`` set to at most :data:`SHORT` s, trace level full, a router drawn
from its own) that must not crash, and its trace must keep ``conservation`` and
``route_validity``; a replication past :data:`GUARD_EVENTS` events must stop with the
located reason of its progress guard (``stopped``), never a traceback. The stops are
armed as ``python -m sim`` arms them (a ``KeyboardInterrupt`` is then the code's). Every mutant is
bounded by :data:`DEADLINE` seconds of this process's CPU time (``ITIMER_PROF``, so a
loaded machine does not make findings): a mutant that takes longer is a finding too.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import signal
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import yaml

from benchmarks import mutation_resources as resources

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
SHORT = 10.0
"""Simulated seconds of the replication a validating mutant runs."""
DEADLINE = 30
"""CPU seconds allowed for validating and running one mutant."""

Mutator = Callable[[str, random.Random], str]
EXTREMES: tuple[Any, ...] = (
    0,
    -1,
    1e308,
    -1e308,
    1e-300,
    1e-6,
    2**63,
    10**9,
    1e9,
    float("inf"),
    float("nan"),
)
GUARD_EVENTS = 200_000
"""The event budget of a mutant's replication (``--max-events``): the shipped scenarios
run under 50,000 events in a whole hour, so a 10-second run past 200,000 is a runaway,
which must stop with its located reason (outcome ``stopped``)."""
CONTROL = "\x00\x01\x07\x08\x0b\x0c\x1b\x7f\x85\ufeff"


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path (keys and indices) below ``node``."""
    if isinstance(node, dict | list):
        items: Any = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            yield (*prefix, key)
            yield from _paths(value, (*prefix, key))


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        doc = doc[part]
    return doc


def _on_document(change: Callable[[Any, Any, random.Random], bool]) -> Mutator:
    """A mutator applying ``change(parent, key, rng)`` at a random path of the document."""

    def mutate(text: str, rng: random.Random) -> str:
        doc = yaml.safe_load(text)
        paths = list(_paths(doc))
        for _ in range(20):
            path = rng.choice(paths)
            if change(_parent(doc, path), path[-1], rng):
                break
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)

    return mutate


def _delete(parent: Any, key: Any, rng: random.Random) -> bool:
    del parent[key]
    return True


def _duplicate(parent: Any, key: Any, rng: random.Random) -> bool:
    if not isinstance(parent, list):
        return False
    parent.insert(key, parent[key])
    return True


def duplicate(text: str, rng: random.Random) -> str:
    """A list entry duplicated (duplicate ids), or a line repeated (a duplicate key)."""
    if rng.randrange(2):
        return _on_document(_duplicate)(text, rng)
    lines = text.splitlines()
    keyed = [i for i, ln in enumerate(lines) if ":" in ln and not ln.lstrip().startswith("#")]
    at = rng.choice(keyed)
    return "\n".join([*lines[: at + 1], lines[at], *lines[at + 1 :]]) + "\n"


def _swap(parent: Any, key: Any, rng: random.Random) -> bool:
    value = parent[key]
    choices: list[Any] = [7, -3.5, "text", True, None, [value], {"k": value}, [], {}]
    parent[key] = rng.choice([c for c in choices if type(c) is not type(value)])
    return True


def _extreme(parent: Any, key: Any, rng: random.Random) -> bool:
    value = parent[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    parent[key] = rng.choice(EXTREMES)
    return True


NEST = "protomesh-fuzz-nest"


def nest(text: str, rng: random.Random) -> str:
    """A value wrapped 50 to 5,000 lists or mappings deep (written as flow text: the YAML
    dumper is recursive itself)."""
    doc = yaml.safe_load(text)
    path = rng.choice(list(_paths(doc)))
    parent = _parent(doc, path)
    inner = json.dumps(parent[path[-1]], ensure_ascii=False)
    parent[path[-1]] = NEST
    depth = rng.choice((50, 300, 1000, 5000))
    dumped = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10**9)
    if rng.randrange(2):
        return dumped.replace(NEST, "[" * depth + inner + "]" * depth, 1)
    return dumped.replace(NEST, "{a: " * depth + inner + "}" * depth, 1)


def control(text: str, rng: random.Random) -> str:
    """A control character inserted at a random place."""
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(CONTROL) + text[at:]


def alias(text: str, rng: random.Random) -> str:
    """A self-referencing alias, an alias bomb under ``x-``, or a node reused by alias."""
    kind = rng.randrange(3)
    if kind == 0:
        return text + "\nx-loop: &loop [*loop]\n"
    if kind == 1:
        levels = ["x-bomb:", '  a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
        for i in range(1, 9):
            refs = ", ".join([f"*a{i - 1}"] * 9)
            levels.append(f"  a{i}: &a{i} [{refs}]")
        return text + "\n" + "\n".join(levels) + "\n"
    lines = text.splitlines()
    keyed = [
        i
        for i, ln in enumerate(lines)
        if ln.rstrip().endswith(":") and not ln.lstrip().startswith("#")
    ]
    if len(keyed) < 2:
        return text + "\nx-loop: &loop [*loop]\n"
    first, second = sorted(rng.sample(keyed, 2))
    lines[first] = lines[first].rstrip() + " &shared"
    lines[second] = lines[second].rstrip() + " *shared"
    return "\n".join(lines) + "\n"


# --- issue 38 items 2, 6, 12: formula shapes and number sizes (the bounds of
# sim/properties/parse.py and sim/json_input.py); one block, kept together ---

#: Nesting depths of the formula shapes: within MAX_DEPTH (100), one past it, far past it.
FORMULA_DEPTHS = (1, 100, 101, 1000, 5000)
#: A valid formula whose every prefix is a malformed one (``execute(``, ``F[<=``, ...).
WHOLE_FORMULA = 'G (call -> F[<=30] (result(tool={a, "b"}) | error)) & !execute(agent=x)'
FORMULA_TOKENS = ("(", ")", "[", "]", "{", "}", ",", "=", "<=", "->", "<->", "!", "&", "|")
FORMULA_WORDS = ("X", "F", "G", "U", "S", "Y", "O", "H", "call", "execute", "tool", "1e999")
#: Number literals past the bounds: 300 and 5,000 digits, past Python's 4,300-digit
#: limit, and a float literal beyond the float range.
HUGE_NUMBERS = ("9" * 300, "1" + "0" * 300, "9" * 5000, "-" + "9" * 4301, "1e400")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def _formula_shape(rng: random.Random) -> str:
    depth = rng.choice(FORMULA_DEPTHS)
    kind = rng.randrange(6)
    if kind == 0:
        return "(" * depth + "call" + ")" * depth
    if kind == 1:
        return "X " * depth + "call"
    if kind == 2:
        return " -> ".join(["call"] * depth)
    if kind == 3:
        return " & ".join(["call"] * depth)
    if kind == 4:
        return WHOLE_FORMULA[: rng.randrange(1, len(WHOLE_FORMULA))]
    words = [*FORMULA_TOKENS, *FORMULA_WORDS]
    return " ".join(rng.choice(words) for _ in range(rng.randrange(1, 40)))


def formula(text: str, rng: random.Random) -> str:
    """A property added whose formula is nested 1 to 5,000 deep (parentheses, unary
    operators, ``->`` or ``&`` chains), a prefix of a valid formula, or token soup."""
    doc = yaml.safe_load(text)
    entry = {"name": "fuzz-formula", "scope": rng.choice(("invocation", "instance", "run"))}
    entry["formula"] = _formula_shape(rng)
    if not isinstance(doc, dict):
        return text + f"\nproperties: [{json.dumps(entry)}]\n"
    props = doc.get("properties")
    doc["properties"] = [*props, entry] if isinstance(props, list) else [entry]
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10**9)


def digits(text: str, rng: random.Random) -> str:
    """A number of the text replaced by an integer of 300 to 5,000 digits or a float
    literal beyond the float range (a plain YAML scalar)."""
    found = list(_NUMBER.finditer(text))
    huge = rng.choice(HUGE_NUMBERS)
    if not found:
        return text + f"\nx-huge: {huge}\n"
    m = rng.choice(found)
    return text[: m.start()] + huge + text[m.end() :]


# --- issue 38 item 11: plug-in behaviours (sim/mesh/isolation.py, sim/plugins.py,
# sim/approval.py); one block, kept together ---


def plugin(text: str, rng: random.Random) -> str:
    """The scenario's routers replaced by one plug-in of :mod:`benchmarks.plugin_matrix`
    (or its approval policy by one), drawn from the matrix: ``sys.exit``,
    ``KeyboardInterrupt`` or an exception at import, while built or in a hook, a wrong
    answer, a non-bool ``static``. Imported when drawn, never at collection."""
    from benchmarks.plugin_matrix import REFERENCES

    reference = rng.choice(REFERENCES)
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict):
        return text + f"\nrouters: [{{name: fuzz-plugin, plugin: '{reference}'}}]\n"
    if reference.endswith("InAsk"):
        approval = doc.get("approval")
        doc["approval"] = {**(approval if isinstance(approval, dict) else {}), "policy": reference}
    else:
        doc["routers"] = [{"name": "fuzz-plugin", "plugin": reference}]
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10**9)


def plugin_error(exc: BaseException, text: str) -> bool:
    """Whether a replication's error is the plug-in's own, said as protomesh says it: a
    ``RouterError`` or ``ApprovalPolicyError`` naming the mutant's plug-in."""
    from sim.approval import ApprovalPolicyError
    from sim.mesh.errors import RouterError

    named = re.search(r"benchmarks\.plugin_matrix[\w.]*:\w+", text)
    return (
        isinstance(exc, RouterError | ApprovalPolicyError)
        and named is not None
        and named.group(0) in str(exc)
    )


# --- end of issue 38 item 11's block ---


MUTATORS: dict[str, Mutator] = {
    "delete": _on_document(_delete),
    "duplicate": duplicate,
    "swap": _on_document(_swap),
    "extreme": _on_document(_extreme),
    "nest": nest,
    "control": control,
    "alias": alias,
    # issue 38: the bounds of formulas and numbers
    "formula": formula,
    "digits": digits,
    # issue 38: plug-in behaviours
    "plugin": plugin,
    # issue 38, resources (benchmarks/mutation_resources.py)
    "huge": resources.huge,
    "long_name": resources.long_name,
    "big_mesh": resources.big_mesh,
}


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutant: which scenario, which mutator, which seed, and its text."""

    scenario: str
    mutator: str
    seed: int
    text: str

    @property
    def name(self) -> str:
        return f"{self.scenario}:{self.mutator}:{self.seed}"


def placed(i: int) -> tuple[str, str]:
    """The scenario file name and the mutator of mutant ``i``, whatever the seed
    (round-robin over every shipped scenario, then every mutator)."""
    names = list(MUTATORS)
    return SCENARIOS[i % len(SCENARIOS)].name, names[(i // len(SCENARIOS)) % len(names)]


def mutants(
    count: int, seed: int, start: int = 0, texts: Mapping[str, str] | None = None
) -> Iterator[Mutant]:
    """Mutants ``start`` .. ``count``-1, round-robin over every shipped scenario and every
    mutator (mutant ``i`` depends on ``seed`` and ``i`` only); ``texts`` (file name → text)
    replaces the shipped files' texts."""
    if texts is None:
        texts = {p.name: p.read_text(encoding="utf-8") for p in SCENARIOS}
    for i in range(start, count):
        scenario, mutator = placed(i)
        rng = random.Random(f"{seed}:{i}")
        yield Mutant(scenario, mutator, i, MUTATORS[mutator](texts[scenario], rng))


@dataclass(frozen=True, slots=True)
class Verdict:
    """What became of a mutant: ``rejected`` (exit 2), ``ran`` (validated, ran, invariants
    held), ``stopped`` (validated, ran into its event budget and stopped with the located
    element that drives it), ``too long`` (validated, but not with the short duration),
    ``plugin error`` (validated, and the replication failed with its plug-in's own error,
    naming it: :func:`plugin_error`), or a finding:
    ``crash`` (validate raised or exited otherwise), ``run crash``, ``invariant``, ``hang``."""

    outcome: str
    detail: str = ""

    @property
    def finding(self) -> bool:
        return self.outcome in ("crash", "run crash", "invariant", "hang")


class _Deadline(BaseException):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Deadline


def judge(mutant: Mutant, workdir: Path) -> Verdict:
    """Validate ``mutant`` through the command line, run a short replication if it
    validates, check the two invariants (module docstring)."""
    from sim.processes import stop_on_signals

    previous = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, DEADLINE)
    try:
        with stop_on_signals():  # as python -m sim arms them: a KeyboardInterrupt is code's
            return _judge(mutant, workdir)
    except _Deadline:
        return Verdict("hang", f"more than {DEADLINE} s of CPU")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _judge(mutant: Mutant, workdir: Path) -> Verdict:
    from sim.cli import main
    from sim.conformance import check_trace
    from sim.engine import ReplicationError, run_replication
    from sim.engine.guard import Guard, Runaway
    from sim.scenario import ScenarioError, load_scenario_with_warnings
    from sim.scenario.load import Override

    path = workdir / f"{mutant.scenario.removesuffix('.yaml')}-{mutant.mutator}-{mutant.seed}.yaml"
    path.write_text(mutant.text, encoding="utf-8", errors="surrogateescape")
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            code = main(["validate", str(path)])
    except _Deadline:
        raise
    except BaseException as exc:  # a finding: validate must never raise
        return Verdict("crash", f"validate raised {type(exc).__name__}: {str(exc)[:200]}")
    if code == 2:
        return Verdict("rejected")
    if code != 0:
        return Verdict("crash", f"validate exited {code}: {sink.getvalue()[-300:]}")
    try:
        scenario, _ = load_scenario_with_warnings(path)
        short = min(float(scenario.duration), SHORT)
        scenario, _ = load_scenario_with_warnings(path, [Override(("duration",), short, "fuzz")])
    except ScenarioError:
        return Verdict("too long")
    except BaseException as exc:
        return Verdict("crash", f"loading raised {type(exc).__name__}: {str(exc)[:200]}")
    router = random.Random(mutant.seed).choice(scenario.router_names)
    out = workdir / f"run-{mutant.seed}"
    try:
        run_replication(
            scenario, router, 0, out, "full", guard=Guard(GUARD_EVENTS, None, str(path))
        )
        report = check_trace(out / "trace.jsonl", scenario)
    except _Deadline:
        raise
    except ReplicationError as exc:
        if isinstance(exc.cause, Runaway) and f"({path}:" in str(exc.cause):
            return Verdict("stopped", f"{router}: {exc.cause}")
        if plugin_error(exc.cause, mutant.text):
            return Verdict("plugin error", f"{router}: {exc.cause}")
        return Verdict("run crash", f"{router}: {type(exc).__name__}: {str(exc)[:300]}")
    except BaseException as exc:
        return Verdict("run crash", f"{router}: {type(exc).__name__}: {str(exc)[:300]}")
    for v in report.verdicts:
        if v.name in ("conservation", "route_validity") and v.violations:
            return Verdict("invariant", f"{router}: {v.name}: {v.message}")
    return Verdict("ran", router)
