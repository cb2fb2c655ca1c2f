"""The seven conformance checks of SPEC §6, streaming over a trace (SPEC §5).

One module per check family (``write_approval``, ``order``: requires_order and
exclusive, ``recovery``, ``lts``, ``conservation``, ``route_validity``); ``stream``
is the one pass that feeds them; ``base`` the protocol every consumer of that pass
follows (:class:`Consumer`: ``handlers()`` label → handler, ``end_instance`` at
``wf_end``, ``end_trace``) and :class:`Check`, the checks' base; ``verdict`` what they
report.

Each line is decoded once and dispatched only to the handlers registered for its
label. Memory: per open invocation (its protocol events, for counterexamples, and each
check's small state), per running workflow instance, per message in flight, and one
bounded counterexample per check; never per event of the trace.

The checks read SPEC §5 semantics only: ``label``, ``inv``, ``wf``/``inst``/``task``,
``tool``, ``agent``, ``proto`` and these ``detail`` keys: ``error`` (the type of an
``error``), ``to`` (the tool of a ``fallback``; the far node of a ``hop``), ``from`` and
``proto`` (``hop``), ``at``/``from_proto``/``to_proto``/``chain`` (``translate``),
``msg`` (``send``/``deliver``/``drop``), ``reason`` (``drop``), ``link`` (``link_down``
/``link_up``), ``slot`` (``collect``, SGD).

Another consumer (a property monitor) joins the same pass:
``check_trace(path, truth, consumers=[monitor])`` calls ``monitor.handlers()`` once,
then its handlers with ``(event, raw line)`` for the labels it named, its
``end_instance(key, invs)`` at each ``wf_end`` and its ``end_trace()`` after the last
line; the monitor keeps its own results.
"""

from sim.conformance.checks.base import Check, Consumer, Context, Core, Handler, InstanceKey
from sim.conformance.checks.families import ALL_CHECKS, CHECK_NAMES, CORES, SGD_CHECKS
from sim.conformance.checks.stream import check_run_dir, check_trace, run_dir_verdicts, run_pass
from sim.conformance.checks.verdict import Report, Verdict
from sim.conformance.events import TraceError, encode_event

__all__ = [
    "ALL_CHECKS",
    "CHECK_NAMES",
    "CORES",
    "SGD_CHECKS",
    "Check",
    "Consumer",
    "Context",
    "Core",
    "Handler",
    "InstanceKey",
    "Report",
    "TraceError",
    "Verdict",
    "check_run_dir",
    "check_trace",
    "encode_event",
    "run_dir_verdicts",
    "run_pass",
]
