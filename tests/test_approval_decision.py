"""One approval decision (issue 34 item 2): the engine's gate, ``verify``'s model and the
checks' ground truth take it from :func:`sim.approval.approval`, so for every
descriptor, caller's view, policy and arguments they agree with it, a plug-in policy's
per-call answer included."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.approval import ApprovalPolicy, Decision, DescriptorRule, approval
from sim.calculus.mcp import ALL_FIELDS, ToolView, caller_view
from sim.conformance.truth import tool_facts
from sim.engine.caller import Approval
from sim.engine.randomness import sampler
from sim.engine.views import ToolRT, make_view
from sim.scenario.model import ToolSpec
from sim.verify.knowledge import ToolModel


class ClassGate(ApprovalPolicy):
    """A plug-in deciding per call: ask for business-class bookings only."""

    name = "class_gate"

    def ask(self, view: ToolView, arguments: Mapping[str, Any]) -> bool:
        return arguments.get("class") == "business"

    def reason(self, view: ToolView, arguments: Mapping[str, Any]) -> str:
        return f"class={arguments.get('class')}"


POLICIES: dict[str, ApprovalPolicy] = {
    "hints": DescriptorRule("hints"),
    "never": DescriptorRule("never"),
    "always": DescriptorRule("always"),
    "class_gate": ClassGate(),
}

tools = st.builds(
    lambda effects, gate, read_only: ToolSpec(
        name="book",
        side_effects=effects,
        requires_approval=gate,
        annotations={} if read_only is None else {"readOnlyHint": read_only},
    ),
    st.sampled_from(["none", "read", "write", "delete"]),
    st.booleans(),
    st.sampled_from([None, True, False]),
)
fields = st.frozensets(st.sampled_from(sorted(ALL_FIELDS)))
arguments = st.sampled_from([{}, {"class": "business"}, {"class": "economy"}])


def engine_decision(
    spec: ToolSpec, known: frozenset[str], mcp: str, policy: ApprovalPolicy, args: dict[str, Any]
) -> tuple[bool, Decision]:
    """The engine's ground-truth write flag and its gate's decision for one call."""
    tool = ToolRT(spec, sampler(spec.service_time, random.Random(0)))
    view = make_view(tool, known, mcp)
    gate = Approval(sampler(spec.service_time, random.Random(0)), 1.0, random.Random(0), policy)
    return tool.write, gate.decision(view, args)


@settings(max_examples=150, deadline=None)
@given(tools, fields, st.sampled_from(sorted(POLICIES)), arguments)
def test_engine_verify_and_truth_take_the_one_decision(
    spec: ToolSpec, known: frozenset[str], policy_name: str, args: dict[str, Any]
) -> None:
    policy = POLICIES[policy_name]
    mcp = policy.mcp_policy if isinstance(policy, DescriptorRule) else "hints"
    truth = spec.descriptor()
    expected = approval(truth, caller_view(truth, known, mcp), policy, args)

    write, engine = engine_decision(spec, known, mcp, policy, args)
    assert engine == expected
    assert write is expected.demanded
    assert ToolModel(truth, known, mcp, ()).decision(policy, args) == expected
    facts = tool_facts(truth, ())
    assert facts.write is expected.demanded
    # the ground truth's LTSs: gated only, or both (a caller may ask when not gated)
    assert len(facts.ltss) == (1 if expected.gated else 2)
    # a caller that asks says why; one that does not records no reason
    assert bool(expected.reason) is expected.asks


@settings(max_examples=60, deadline=None)
@given(tools, st.sampled_from(["hints", "never", "always"]))
def test_a_caller_that_knows_everything_asks_exactly_where_the_truth_gates(
    spec: ToolSpec, mcp: str
) -> None:
    truth = spec.descriptor()
    full = caller_view(truth, ALL_FIELDS, mcp)
    decision = approval(truth, full, DescriptorRule(mcp))
    assert decision.asks is decision.gated is spec.requires_approval
    # a write without requires_approval is demanded but not gated: P2's scenario warning
    assert decision.demanded is (spec.side_effects.value in ("write", "delete"))


def test_a_plug_in_policy_decides_per_call_in_the_engine_and_in_verify() -> None:
    spec = ToolSpec(name="book", side_effects="write", requires_approval=True)
    truth, policy = spec.descriptor(), ClassGate()
    for args, asks in (({"class": "business"}, True), ({"class": "economy"}, False)):
        _, engine = engine_decision(spec, ALL_FIELDS, "hints", policy, args)
        model = ToolModel(truth, ALL_FIELDS, "hints", ()).decision(policy, args)
        assert engine == model == Decision(True, True, asks, "class=business" if asks else "")


def test_without_a_caller_the_decision_is_the_ground_truth_alone() -> None:
    spec = ToolSpec(name="wipe", side_effects="delete", requires_approval=False)
    assert approval(spec.descriptor()) == Decision(True, False, False, "")
