"""``conservation``: every message sent ends exactly once, in a deliver or a drop, and
is delivered where its hops took it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim.conformance.checks.base import Check, Context, Handler
from sim.conformance.checks.verdict import Verdict
from sim.conformance.events import raw_to_dict
from sim.conformance.truth import Truth


class Conservation(Check):
    """Every ``send`` ends in exactly one ``deliver`` or one ``drop`` with a reason
    (per ``detail.msg``); a drop without ``msg`` is lost work at a server, not a message.
    A message is where its sender is, then where each of its hops took it: a hop leaves
    from there and a ``deliver`` happens there (a trace without its hops fails)."""

    name = "conservation"
    labels: tuple[str, ...] = ("send", "hop", "deliver", "drop")

    def __init__(self, truth: Truth, ctx: Context) -> None:
        super().__init__(truth, ctx)
        self.open: dict[Any, bytes] = {}
        #: message in flight → the agent it is at (None: unknown); the keys of ``open``
        self.at: dict[Any, Any] = {}
        self.sends = 0
        self.orphans = 0
        self._orphan: tuple[str, bytes, int, Any] | None = None

    def handlers(self) -> Mapping[str, Handler]:
        return {
            "send": self.on_send,
            "hop": self.on_hop,
            "deliver": self.on_end,
            "drop": self.on_end,
        }

    def on_send(self, ev: Any, raw: bytes) -> None:
        self.sends += 1
        m = ev.detail.msg
        if m is None:
            self.violation(f"send (seq {ev.seq}) without detail.msg", [raw], ev.seq, ev.wf)
            return
        if m in self.open:
            self.violation(
                f"message {m} sent twice (seq {ev.seq})", [self.open[m], raw], ev.seq, ev.wf
            )
        self.open[m] = raw
        self.at[m] = ev.agent

    def on_hop(self, ev: Any, raw: bytes) -> None:
        d = ev.detail
        try:
            if d.msg not in self.at:  # not in flight (its deliver or drop says so)
                return
        except TypeError:  # an unhashable msg: not a message in flight
            return
        here = self.at[d.msg]  # None: sent by nobody, so anywhere
        a = d.from_ if d.from_ is not None else ev.agent
        if here is not None and a != here:
            self.violation(
                f"hop (seq {ev.seq}) of message {d.msg} from {a}, but the message is at "
                f"{here}: no hop took it to {a}",
                [self.open[d.msg], raw],
                ev.seq,
                ev.wf,
            )
        self.at[d.msg] = d.to

    def on_end(self, ev: Any, raw: bytes) -> None:
        d = ev.detail
        m = d.msg
        if m is None:
            return
        if ev.label == "drop" and not d.reason:
            self.violation(
                f"drop of message {m} (seq {ev.seq}) without a reason", [raw], ev.seq, ev.wf
            )
        sent = self.open.pop(m, None)
        here = self.at.pop(m, None)
        if sent is not None and ev.label == "deliver" and here is not None and here != ev.agent:
            self.violation(
                f"deliver (seq {ev.seq}) of message {m} at {ev.agent}, but the message is at "
                f"{here}: no hop took it to {ev.agent}",
                [sent, raw],
                ev.seq,
                ev.wf,
            )
        if sent is None:
            self.orphans += 1
            if self._orphan is None:
                self._orphan = (
                    f"{ev.label} of message {m} (seq {ev.seq}) that is not in flight: never "
                    "sent, or already delivered or dropped",
                    raw,
                    ev.seq,
                    ev.wf,
                )

    def finish(self, examined: int) -> Verdict:
        if self.sends == 0:
            self.note = "no send events (trace level protocol or off): nothing to conserve"
            return Verdict(self.name, 0, 0, note=self.note, applicable=False)
        if self._orphan is not None:
            message, raw, seq, wf = self._orphan
            self.violation(message, [raw], seq, wf)
            self.violations += self.orphans - 1
        if self.open:
            m, raw = next(iter(self.open.items()))  # the earliest send still open
            seq = raw_to_dict(raw).get("seq", -1)
            self.violation(
                f"message {m} sent (seq {seq}) never ends in a deliver or a drop"
                + (f" (nor do {len(self.open) - 1} more)" if len(self.open) > 1 else ""),
                [raw],
                seq if isinstance(seq, int) else -1,
            )
            self.violations += len(self.open) - 1
        return super().finish(examined)
