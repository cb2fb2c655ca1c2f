"""Bounds on times and distribution parameters, so that no draw, no mean and no clock
reading overflows a float or loses the trace's microsecond.

The times that put events on the clock (``duration``, the workflows' and tasks'
``timeout``, the failures' ``at``, ``for``, ``mtbf`` and ``mttr``) must be at most
:data:`MAX_SECONDS`: past it, a float clock's step passes a microsecond, and the
per-minute series of a run would be longer than a run can write. A Poisson arrival rate
is at most :data:`MAX_RATE` (what memory a rate at the bound uses is the resident-memory
guard's to stop, :mod:`sim.engine.guard`). Every
:class:`~sim.scenario.model.Distribution` in the scenario (links, tools, approval,
topology, wherever the models put one) is found by walking the validated models; its
durations (an empirical one's samples and quantiles too) must be at most
:data:`MAX_SECONDS`, a lognormal's ``sigma`` at most :data:`MAX_SIGMA` (``exp(sigma²/2)``
and ``exp(sigma·z)`` stay far inside a float) and a gamma's sd within :data:`GAMMA_CV`
of its mean.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from functools import cache
from typing import Any

from pydantic import BaseModel

from sim.scenario.diagnostics import FieldPath
from sim.scenario.findings import Finding, KnownNames
from sim.scenario.model import Distribution, Scenario

#: The longest duration a distribution parameter may give, in seconds (about 32 years).
MAX_SECONDS = 1e9
#: The largest Poisson arrival rate, per second: a mean gap of one microsecond, the
#: trace's resolution (a larger one is a flood that only the guards would stop).
MAX_RATE = 1e6
#: The largest lognormal sigma: its mean is exp(sigma²/2) = e^50 times its median.
MAX_SIGMA = 10.0
#: The range of a gamma's sd / mean: its shape (mean/sd)² stays in [1e-6, 1e12], where
#: ``random.gammavariate`` draws finite values.
GAMMA_CV = (1e-6, 1e3)

_DURATIONS = ("value", "mean", "sd", "median", "low", "high")


@cache
def _carrier_fields(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """(attribute, YAML key) of the fields of ``model`` that can hold a Distribution."""
    return tuple(
        (name, info.alias or name)
        for name, info in model.model_fields.items()
        if _carries(info.annotation, frozenset({model}))
    )


def _carries(annotation: Any, seen: frozenset[type]) -> bool:
    if annotation is Distribution:
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return False
        return any(
            _carries(info.annotation, seen | {annotation})
            for info in annotation.model_fields.values()
        )
    return any(_carries(arg, seen) for arg in typing.get_args(annotation))


#: Values that hold no Distribution, skipped without a call (a generated mesh's links
#: hold tens of thousands of plain latencies).
_PLAIN = (float, int, str, bool, type(None))


def _distributions(value: Any, path: FieldPath) -> Iterator[tuple[FieldPath, Distribution]]:
    if isinstance(value, Distribution):
        yield path, value
    elif isinstance(value, BaseModel):
        for name, key in _carrier_fields(type(value)):
            yield from _distributions(getattr(value, name), (*path, key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            if not isinstance(item, _PLAIN):
                yield from _distributions(item, (*path, i))
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(item, _PLAIN):
                yield from _distributions(item, (*path, key))


def _points(dist: Distribution) -> Iterator[tuple[float, FieldPath]]:
    """An empirical distribution's durations past the bound, with where each is."""
    for i, x in enumerate(dist.samples or ()):
        if x > MAX_SECONDS:
            yield x, ("samples", i)
    for key, x in (dist.quantiles or {}).items():
        if x > MAX_SECONDS:
            yield x, ("quantiles", key)


def _clock_times(scn: Scenario) -> Iterator[tuple[FieldPath, float | None]]:
    """The times of the scenario that put events on the clock, with where each is."""
    yield ("duration",), scn.duration
    for i, wf in enumerate(scn.workflows):
        yield ("workflows", i, "timeout"), wf.timeout
        for j, task in enumerate(wf.tasks):
            yield ("workflows", i, "tasks", j, "timeout"), task.timeout
    for k, failure in enumerate(scn.failures):
        yield ("failures", k, "at"), failure.at
        yield ("failures", k, "for"), failure.for_
        if failure.random is not None:
            yield ("failures", k, "random", "mtbf"), failure.random.mtbf
            yield ("failures", k, "random", "mttr"), failure.random.mttr


def _too_long(given: float) -> str:
    return f"must be ≤ {MAX_SECONDS:g} s (about 32 years) (got {given:g})"


def range_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """A finding on each time and each distribution parameter past its bound."""
    del known
    for path, given in _clock_times(scn):
        if given is not None and given > MAX_SECONDS:
            yield Finding(path, _too_long(given))
    for i, wf in enumerate(scn.workflows):
        rate = wf.arrivals.rate
        if rate is not None and rate > MAX_RATE:
            yield Finding(
                ("workflows", i, "arrivals", "rate"),
                f"must be ≤ {MAX_RATE:g} arrivals per second (a mean gap of one microsecond, "
                f"the trace's resolution) (got {rate:g})",
            )
    for path, dist in _distributions(scn, ()):
        for key in _DURATIONS:
            given = getattr(dist, key)
            if given is not None and given > MAX_SECONDS:
                yield Finding((*path, key), _too_long(given))
        for got, where in _points(dist):
            yield Finding((*path, *where), _too_long(got))
        if dist.dist == "gamma" and dist.mean and dist.sd:
            low, high = GAMMA_CV
            if not low * dist.mean <= dist.sd <= high * dist.mean:
                yield Finding(
                    (*path, "sd"),
                    f"must be between {low:g} and {high:g} times the mean (got sd {dist.sd:g}, "
                    f"mean {dist.mean:g}): the gamma's shape (mean/sd)² must be in "
                    f"[{high**-2:g}, {low**-2:g}]",
                )
        if dist.sigma is not None and dist.sigma > MAX_SIGMA:
            yield Finding(
                (*path, "sigma"),
                f"must be ≤ {MAX_SIGMA:g}: a lognormal's mean is exp(sigma²/2) times its "
                f"median, and larger draws overflow (got {dist.sigma:g})",
            )
