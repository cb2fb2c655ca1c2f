"""A run checked as it goes: the conformance checks (SPEC §6), the scenario's properties
(SPEC §9) and the run's page data (:mod:`sim.view.fragment`) consume the trace's lines
in process, block by block as the engine writes them (``run_replication``'s ``tap``),
in one pass; the file is still written, byte for byte the same, and ``python -m sim
check`` re-reading it gives the same verdicts. Nothing reads the trace back but the page
data's counterexample instances the sample left out.

The consumers are built when the first lines are fed: a run that writes none (trace level
``off``) builds neither the checks' ground truth nor the page's mesh, and writes what
the pass writes for an empty trace (the same ``metrics.json`` keys and ``view.json``).

An unreadable trace (a line the pass refuses: never one of the engine's) is recorded as
``conformance.error`` (and no page data), never fatal to the run. The trace's SHA-256
(``run.json``'s digest of it) is taken from the same bytes as they pass (:meth:`RunChecks.
trace_digest`): the file is not read again to digest it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sim.conformance import TraceError
from sim.conformance.checks import run_dir_verdicts
from sim.conformance.checks.stream import Checker
from sim.conformance.checks.verdict import Report
from sim.conformance.events import BLOCK
from sim.engine.metrics import dumps
from sim.experiments.properties import property_metrics, property_monitor
from sim.experiments.rundir import METRICS_FILE, TRACE_FILE

if TYPE_CHECKING:
    from sim.experiments.worker import Built
    from sim.view.fragment import PagePass

#: Bytes of trace lines the engine writes before the pass reads them: the block a trace
#: file is read in (4 MiB, :data:`~sim.conformance.events.BLOCK`). The engine and the
#: pass take turns on the CPU's caches; in shorter turns each evicts the other's data
#: (on the 1,000-agent mesh, turns of 256 lines cost the engine a third more CPU).
TAP_BYTES = BLOCK


class RunChecks:
    """The consumers of one run's trace (the checks, the property monitor, the page
    data), fed in process by :meth:`tap` (built when the first lines are fed:
    :attr:`checker` is None until then); :meth:`merge` writes their verdicts into the run's
    ``metrics.json`` and the page fragment beside it, after the run; :meth:`close` drops
    what they wrote (a run that failed)."""

    def __init__(self, directory: Path, kept: Built) -> None:
        from sim.view.fragment import EVENTS_FILE

        scenario = kept.scenario
        self.directory = directory
        self.kept = kept
        self.monitor = property_monitor(scenario) if scenario.properties else None
        self.events: IO[bytes] = open(directory / EVENTS_FILE, "wb")  # noqa: SIM115 - close()
        self.page: PagePass | None = None
        self.checker: Checker | None = None
        self.error: TraceError | None = None
        self.pending: list[bytes] = []
        self.size = 0
        self.digest_of_trace = hashlib.sha256()

    def _start(self) -> Checker:
        """The checks and the page data, with the monitor, when the first lines are fed."""
        from sim.view.fragment import PagePass

        mesh, _ = self.kept.page()
        self.page = PagePass(mesh, float(self.kept.scenario.duration), self.events)
        consumers = [c for c in (self.monitor, self.page) if c is not None]
        name = str(self.directory / TRACE_FILE)
        self.checker = Checker(name, self.kept.truth(), consumers=consumers)
        return self.checker

    def tap(self, text: bytes) -> None:
        """The trace's next block of lines (UTF-8, whole lines), as the engine writes it:
        digested, and kept until :data:`TAP_BYTES` are, then fed to the pass (the engine
        and the pass take turns on the CPU's caches in long turns); after a line the pass
        refuses, nothing more is read (the error is kept)."""
        self.digest_of_trace.update(text)
        self.pending.append(text)
        self.size += len(text)
        if self.size >= TAP_BYTES:
            self._feed()

    def _feed(self) -> None:
        """Feed the kept blocks, each alone (whole lines each: no join, no copy)."""
        pending, self.pending, self.size = self.pending, [], 0
        if self.error is None and pending:
            try:
                checker = self.checker or self._start()
                for text in pending:
                    checker.lines(text)
            except TraceError as exc:
                self.error = exc

    def trace_digest(self) -> str:
        """The SHA-256 (hex) of the trace's bytes tapped so far: the trace file's, when
        every write of it was tapped (``run_replication(tap=)`` taps each)."""
        return self.digest_of_trace.hexdigest()

    def merge(self) -> None:
        """The verdicts into ``metrics.json`` (``violations``, ``conformance``,
        ``properties``: :func:`~sim.conformance.checks.run_dir_verdicts`) and the page
        fragment beside it; an unreadable trace as ``conformance.error``, no fragment."""
        from sim.view.fragment import store
        from sim.view.violations import groups

        self._feed()
        path = self.directory / METRICS_FILE
        metrics: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        trace = self.directory / TRACE_FILE
        if self.error is not None:
            metrics["conformance"] = {"ok": False, "error": str(self.error)}
            self.close(keep=False)
        else:
            report, page = self._report()
            metrics.update(run_dir_verdicts(report))
            found = self.monitor.finish() if self.monitor is not None else []
            if self.monitor is not None:  # the scenario's properties (SPEC §9), same pass
                metrics["properties"] = property_metrics(found, metrics["conformance"]["checked"])
            fragment = page.fragment(groups(report.verdicts, found), self.kept.digest(), trace)
            store(self.directory, fragment)
            self.close(keep=True)
        path.write_text(dumps(metrics), encoding="utf-8")

    def _report(self) -> tuple[Report, PagePass]:
        """The pass's report and page data, each consumer's trace ended. No line came: the
        report of an empty trace (no event, no verdict: no check has anything to say) and
        the page data of one, which no mesh is read for (nothing is mapped onto it)."""
        if self.checker is not None and self.page is not None:
            return self.checker.report(), self.page
        from sim.view.fragment import PagePass
        from sim.view.mesh import Mesh

        page = PagePass(Mesh([], []), float(self.kept.scenario.duration), self.events)
        for consumer in (self.monitor, page):
            if consumer is not None:
                consumer.end_trace()
        return Report(str(self.directory / TRACE_FILE), 0, []), page

    def close(self, keep: bool = False) -> None:
        """Close the page data's events file; removed unless ``keep``."""
        from sim.view.fragment import EVENTS_FILE

        self.events.close()
        if not keep:
            (self.directory / EVENTS_FILE).unlink(missing_ok=True)
