"""``write_approval``: P2 WriteApproval, per execution (SPEC §6.2).

The rule is :class:`WriteApprovalCore`, pure: one invocation's state is whether it is
approved since its previous ``execute``; :class:`WriteApproval` streams it over a
trace (an invocation is approved while it is in ``approved``) and ``verify`` steps it
in its search state (:class:`sim.verify.observe.CoreTracker`), so both decide by the same
rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sim.conformance.checks.base import Check, Context, Handler, InstanceKey, where
from sim.conformance.truth import Truth


class WriteApprovalCore:
    """P2 within one invocation, as a pure step: the state is a bool, True while an
    ``approve`` came since the invocation started or since its previous ``execute``;
    an ``execute`` of a write tool in state False is a violation. Only the tools in
    ``write`` (ground truth: write or delete) are ruled on."""

    __slots__ = ("write",)
    scope = "invocation"
    labels: tuple[str, ...] = ("approve", "execute")
    initial = False

    def __init__(self, write: frozenset[str]) -> None:
        self.write = write

    def on_approve(self, approved: bool, tool: Any) -> bool:
        return True if tool in self.write else approved

    def on_execute(self, approved: bool, tool: Any) -> tuple[bool, bool]:
        """(the state after, whether this execute violates P2)."""
        if tool not in self.write:
            return approved, False
        return False, not approved

    def step(self, approved: bool, label: str, tool: Any, task: Any, wf: Any) -> tuple[bool, bool]:
        """(the state after one event, whether it is a violation)."""
        if label == "approve":
            return self.on_approve(approved, tool), False
        if label == "execute":
            return self.on_execute(approved, tool)
        return approved, False


class WriteApproval(Check):
    """P2 WriteApproval per execution: ``H(execute_w → Y(¬execute S approve))`` within each
    invocation, for every tool whose ground-truth side effect is write or delete
    (:class:`WriteApprovalCore`; an invocation's state True is its membership of
    ``approved``)."""

    name = "write_approval"
    labels: tuple[str, ...] = WriteApprovalCore.labels
    history = True

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.core = self.core_of(truth)
        self.write = self.core.write
        self.approved: set[Any] = set()  # invocations whose state is True

    @staticmethod
    def core_of(truth: Truth) -> WriteApprovalCore:
        """The rule on ``truth``'s tools (the write and delete ones)."""
        return WriteApprovalCore(truth.write_tools)

    def handlers(self) -> Mapping[str, Handler]:
        return {"approve": self.on_approve, "execute": self.on_execute}

    def on_approve(self, ev: Any, raw: bytes) -> None:
        if ev.tool not in self.write:  # the core's no-op, without a call
            return
        inv = ev.inv
        if self.core.on_approve(inv in self.approved, ev.tool):
            self.approved.add(inv)
        else:
            self.approved.discard(inv)

    def on_execute(self, ev: Any, raw: bytes) -> None:
        tool = ev.tool
        if tool not in self.write:  # the core's no-op, without a call
            return
        inv = ev.inv
        after, bad = self.core.on_execute(inv in self.approved, tool)
        if after:
            self.approved.add(inv)
        else:
            self.approved.discard(inv)
        if bad:
            self.violation(
                f"execute (seq {ev.seq}) of {where(ev)}, a write tool, with no approve since "
                "the invocation started or since its previous execute",
                self.ctx.history(ev.inv, raw),
                ev.seq,
                ev.wf,
            )

    def end_instance(self, key: InstanceKey, invs: Sequence[Any]) -> None:
        approved = self.approved
        if approved:
            for inv in invs:
                approved.discard(inv)
