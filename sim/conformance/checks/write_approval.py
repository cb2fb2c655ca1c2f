"""``write_approval``: P2 WriteApproval, per execution (SPEC §6.2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sim.conformance.checks.base import Check, Context, Handler, InstanceKey, where
from sim.conformance.truth import Truth


class WriteApproval(Check):
    """P2 WriteApproval per execution: ``H(execute_w → Y(¬execute S approve))`` within each
    invocation, for every tool whose ground-truth side effect is write or delete: since the
    invocation's previous ``execute`` (if any) there was an ``approve``."""

    name = "write_approval"
    labels: tuple[str, ...] = ("approve", "execute")
    history = True

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.write = truth.write_tools
        self.approved: set[Any] = set()  # invocations approved since their last execute

    def handlers(self) -> Mapping[str, Handler]:
        return {"approve": self.on_approve, "execute": self.on_execute}

    def on_approve(self, ev: Any, raw: bytes) -> None:
        if ev.tool in self.write:
            self.approved.add(ev.inv)

    def on_execute(self, ev: Any, raw: bytes) -> None:
        if ev.tool not in self.write:
            return
        try:
            self.approved.remove(ev.inv)
        except KeyError:
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
