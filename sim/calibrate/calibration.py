"""From traces and a scenario to the fitted quantities: what each measurement becomes in
the scenario (its field), and whether it is written (``fitted``) or left as it is
(``kept``: too few samples, or no entry of its own in the file).

Durations are fitted (:mod:`sim.calibrate.fit`); probabilities are counted: an error
type's probability is its count over the executions whose outcome was observed, the
grant probability the approvals over the answers. Probabilities are written to six
decimals, rounded down (a tool's errors then never sum above 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.calibrate.measure import Measurements, Names, Quantity, measure
from sim.scenario import load_scenario_with_warnings
from sim.scenario.compose import plain_data
from sim.scenario.diagnostics import Diagnostic, FieldPath, format_path
from sim.scenario.model import Distribution, Scenario

if TYPE_CHECKING:
    from sim.calibrate.fit import Fit

#: The fewest samples a quantity is fitted from (``--min-samples``).
MIN_SAMPLES = 30
_KINDS = ("link", "service", "translation", "approval", "errors", "grant")


@dataclass(frozen=True, slots=True)
class Result:
    """One measured quantity: its key, kind and scenario field (``path``; None when the
    file has no entry for it), the sample size, the fit (durations), the value the
    scenario has, the value written (None when kept), and why."""

    key: str
    kind: str
    path: FieldPath | None
    n: int
    scenario: Any
    written: Any
    fit: Fit | None = None
    counts: dict[str, int] = field(default_factory=dict)
    note: str = ""
    samples: Sequence[float] = ()

    @property
    def field(self) -> str | None:
        return None if self.path is None else format_path(self.path)

    @property
    def status(self) -> str:
        return "kept" if self.written is None else "fitted"


@dataclass(frozen=True, slots=True)
class Calibration:
    """The scenario file, what was measured, and every result (in report order)."""

    source: Source
    measured: Measurements
    results: tuple[Result, ...]
    min_samples: int


@dataclass(frozen=True, slots=True)
class Source:
    """A scenario file: its name, text, validated scenario, plain data (the file's own
    entries first in every list: a ``topology:`` block's come after) and warnings."""

    name: str
    text: str
    scenario: Scenario
    data: dict[str, Any]
    warnings: tuple[Diagnostic, ...]


def load(name: str | Path) -> Source:
    """The scenario file ``name``; :class:`~sim.scenario.ScenarioError` when it does not
    load."""
    scenario, warnings = load_scenario_with_warnings(name)
    text = Path(name).read_text(encoding="utf-8")
    return Source(str(name), text, scenario, plain_data(text), tuple(warnings))


def calibrate(
    traces: Sequence[str | Path], source: Source, min_samples: int = MIN_SAMPLES
) -> Calibration:
    """Measure ``traces`` against the scenario and fit; raises
    :class:`~sim.calibrate.events.TraceError` on a trace that cannot be read."""
    scenario = source.scenario
    measured = measure(traces, Names.of(scenario, source.name))
    from sim.calibrate.fit import significant  # scipy: once the traces are read

    own = len(source.data.get("agents") or ()), len(source.data.get("links") or ())
    results: list[Result] = []
    for quantity in sorted(measured.durations, key=lambda q: (_KINDS.index(q.kind), q)):
        samples = measured.durations[quantity]
        results.append(_duration(scenario, quantity, samples, min_samples, *own))
    tools = {t.name: j for j, t in enumerate(scenario.tools)}
    for tool, seen in sorted(measured.outcomes.items(), key=lambda kv: tools[kv[0]]):
        spec = scenario.tools[tools[tool]]
        declared = dict(spec.errors)
        written: dict[str, float] | None = None
        note = ""
        if seen.executions >= min_samples:
            types = sorted({*declared, *seen.errors})
            written = {e: _floor(seen.errors.get(e, 0) / seen.executions) for e in types}
        else:
            note = _too_few(seen.executions, min_samples)
        path = ("tools", tools[tool], "errors")
        results.append(
            Result(f"errors {tool}", "errors", path, seen.executions, declared, written,
                   counts=dict(sorted(seen.errors.items())), note=note)
        )  # fmt: skip
    answers = measured.approves + measured.denies
    if answers:
        current = scenario.approval.grant_probability
        granted = significant(measured.approves / answers) if answers >= min_samples else None
        results.append(
            Result("approval grant_probability", "grant", ("approval", "grant_probability"),
                   answers, current, granted,
                   counts={"approve": measured.approves, "deny": measured.denies},
                   note="" if granted is not None else _too_few(answers, min_samples))
        )  # fmt: skip
    return Calibration(source, measured, tuple(results), min_samples)


def _too_few(n: int, minimum: int) -> str:
    return f"{n} sample{'s' if n != 1 else ''}, fewer than {minimum} (--min-samples): kept"


def _floor(p: float) -> float:
    return math.floor(p * 1e6) / 1e6


def _duration(
    scenario: Scenario,
    quantity: Quantity,
    samples: list[float],
    min_samples: int,
    own_agents: int,
    own_links: int,
) -> Result:
    from sim.calibrate.fit import fit, significant

    path, current, note = _field_of(scenario, quantity, own_agents, own_links)
    n = len(samples)
    if n < min_samples:
        return Result(
            quantity.key, quantity.kind, path, n, current, None, note=_too_few(n, min_samples)
        )
    fitted = fit(samples)
    law = Distribution.model_validate(fitted.entry).law()
    written: Any = fitted.entry
    if quantity.kind == "translation":
        written = significant(law.mean())
        note = note or "a node's translation_delay is one number: the fitted law's mean"
    elif quantity.kind == "link" and fitted.chosen == "constant":
        written = fitted.entry["value"]  # a number: the link's own representation
    if path is None:
        written = None
    return Result(
        quantity.key, quantity.kind, path, n, current, written, fitted, note=note, samples=samples
    )


def _field_of(
    scenario: Scenario, quantity: Quantity, own_agents: int, own_links: int
) -> tuple[FieldPath | None, Any, str]:
    """The scenario field a quantity is written to, its value there, and why it has none."""
    if quantity.kind == "link":
        ends = set(quantity.name.split("|"))
        i = next(k for k, lk in enumerate(scenario.links) if set(lk.between) == ends)
        value = _plain(scenario.links[i].latency[quantity.proto])
        if i >= own_links:
            return None, value, "a link of the topology block: no entry of its own to write"
        return ("links", i, "latency", quantity.proto), value, ""
    if quantity.kind == "service":
        j = next(k for k, t in enumerate(scenario.tools) if t.name == quantity.name)
        return ("tools", j, "service_time"), _plain(scenario.tools[j].service_time), ""
    if quantity.kind == "translation":
        k = next(i for i, a in enumerate(scenario.agents) if a.id == quantity.name)
        value = scenario.agents[k].translation_delay
        if k >= own_agents:
            return None, value, "an agent of the topology block: no entry of its own to write"
        return ("agents", k, "translation_delay"), value, ""
    return ("approval", "latency"), _plain(scenario.approval.latency), ""


def _plain(value: Any) -> Any:
    """A scenario value as it is written (a distribution as its entry)."""
    if isinstance(value, Distribution):
        return value.model_dump(mode="json", exclude_none=True)
    return value
