"""Invocations and discoveries: the state one tool call (or one ``list``) carries.

An :class:`Invocation` is one run of the tool's LTS shared by the caller and the
server (:meth:`Invocation.take` raises :class:`EngineBug` for a label the LTS does not
enable); ``reply`` is where the server sends its response (the caller's handler), so
the server never looks the caller up. A :class:`Discovery` is a ``list`` exchange
whose waiters are called with the view once the reply arrives. No time of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sim.calculus.lts import LTS, TAU
from sim.engine.bugs import EngineBug
from sim.engine.clock import Timer
from sim.engine.paths import Path
from sim.engine.trace import js, owner_fragment, owner_parts, pjs
from sim.engine.views import Table, ToolRT, ViewRT

if TYPE_CHECKING:
    from sim.engine.transport import Message
    from sim.engine.workflows import Instance, TaskRT

Reply = Callable[["Message"], None]


class Plan:
    """What every invocation of one task with one view and one approval decision does
    before its first request, decided once (the first time it is needed): the LTS of the
    task's dialect and its transition table, the state after the opening label (the
    dialect's ``call`` or ``invoke``) and after τ, the required slots the task's arguments
    lack (validation's ``missing``, or the slots a collecting dialect asks for) and the trace
    fragments. Each transition is checked against the LTS when the plan is made
    (:class:`EngineBug`). No time."""

    __slots__ = (
        "collects",
        "gate",
        "head",
        "invokes",
        "lts",
        "mid",
        "missing",
        "missingj",
        "opened",
        "rhoj",
        "table",
        "tail",
        "validated",
        "why",
    )

    def __init__(self, task: TaskRT, view: ViewRT, gate: bool, why: str = '""') -> None:
        self.gate = gate
        #: why the caller asks, as JSON (the ``reason`` of its ``approve``/``deny``)
        self.why = why
        dialect = task.dialect
        #: the intake collects the missing slots (else it validates: τ)
        self.collects: bool = dialect.collects
        #: the opening label is ``invoke`` (else ``call``)
        self.invokes: bool = dialect.opening == "invoke"
        self.lts = lts = view.lts(gate, dialect)
        self.table: Table = view.table(lts)
        labels = view.labels
        self.opened = _step(
            lts, self.table, view, lts.initial, labels.invoke if self.invokes else labels.call
        )
        args = task.args
        self.missing = tuple(k for k in view.required if k not in args)
        self.missingj = f',"missing":{js(list(self.missing))}'
        self.validated = -1  # validation fails (or the dialect collects: there is none)
        if not self.collects and not self.missing:
            self.validated = _step(lts, self.table, view, self.opened, TAU)
        self.rhoj = pjs(task.rho)
        self.head, self.mid, self.tail = owner_parts(task.wfj, task.j, view.tool.j)


def _step(lts: LTS, table: Table, view: ViewRT, state: int, lab: str) -> int:
    nxt = table[state].get(lab)
    if nxt is None:
        raise EngineBug(
            f"an invocation of {view.tool.name}: '{lab}' is not enabled in state "
            f"{lts.name(state)} (enabled: {[a for a, _ in lts.enabled(state)]})"
        )
    return nxt


class Invocation:
    """One invocation of a tool by a caller for a task of an instance; ``gate``: whether
    the caller asks for approval before each execution (the policy's decision for it);
    ``plan``: its :class:`Plan` (made here when not given); ``written``: whether its
    lines are written (else, at trace level ``off``, its owner fields ``frag`` are
    never read and stay empty)."""

    __slots__ = (
        "approved",
        "attempt",
        "depth",
        "done",
        "executed",
        "frag",
        "gate",
        "id",
        "instance",
        "lts",
        "need",
        "parent",
        "path",
        "pending",
        "plan",
        "reply",
        "resends",
        "retries",
        "rhoj",
        "state",
        "table",
        "task",
        "timer",
        "tool",
        "view",
        "waiting",
    )

    def __init__(
        self,
        inv_id: int,
        reply: Reply,
        instance: Instance,
        task: TaskRT,
        view: ViewRT,
        path: Path,
        need: str,
        parent: int | None,
        depth: int,
        gate: bool,
        plan: Plan | None = None,
        written: bool = True,
    ) -> None:
        if plan is None:
            plan = Plan(task, view, gate)
        self.plan = plan
        self.id = inv_id
        self.reply = reply  # the caller's handler of the server's response
        self.instance = instance
        self.task = task
        self.tool = view.tool
        self.view = view
        self.gate = gate
        self.lts: LTS = plan.lts
        self.table = plan.table
        self.state = plan.lts.initial
        self.pending: tuple[str, ...] = ()  # SGD: the slots still to collect
        self.attempt = 0
        self.path = path
        self.need = need
        self.approved = False  # an approval not yet consumed by an execute
        self.executed = -1  # the attempt the server executed last
        self.waiting = False
        self.done = False
        self.resends = 0
        self.retries = 0
        self.parent = parent
        self.depth = depth
        self.rhoj = plan.rhoj
        self.frag = f"{plan.head}{instance.id}{plan.mid}{inv_id}{plan.tail}" if written else ""
        self.timer: Timer | None = None  # the current attempt's timeout

    def take(self, lab: str) -> None:
        """Take transition ``lab`` of the invocation's LTS; :class:`EngineBug` if not enabled."""
        nxt = self.table[self.state].get(lab)
        if nxt is None:
            lts = self.lts
            raise EngineBug(
                f"invocation {self.id} of {self.tool.name}: '{lab}' is not enabled in state "
                f"{lts.name(self.state)} (enabled: {[a for a, _ in lts.enabled(self.state)]})"
            )
        self.state = nxt

    @property
    def live(self) -> bool:
        return not self.done and not self.instance.dead


class Discovery:
    """A ``list`` exchange: the caller learns the descriptor of ``tool`` at ``path``'s end."""

    __slots__ = (
        "attempt",
        "done",
        "frag",
        "gate",
        "id",
        "inst",
        "key",
        "need",
        "path",
        "reply",
        "rho",
        "taskj",
        "timer",
        "tool",
        "toolj",
        "waiters",
        "waiting",
        "wfj",
    )

    def __init__(
        self,
        disc_id: int,
        reply: Reply,
        key: Any,
        tool: ToolRT,
        path: Path,
        need: str,
        rho: str,
        instance: Instance,
        task: TaskRT,
    ) -> None:
        self.id = disc_id
        self.reply = reply  # the caller's handler of the list reply
        self.key = key
        self.tool = tool
        self.toolj = tool.j
        self.path = path
        self.need = need
        self.rho = rho
        self.attempt = 0
        self.waiting = False
        self.done = False
        self.wfj = task.wfj
        self.inst = instance.id
        self.taskj = task.j
        self.waiters: list[Any] = []
        self.frag = owner_fragment(self.wfj, self.inst, self.taskj, disc_id, self.toolj)
        self.timer: Timer | None = None  # the current attempt's list timeout
