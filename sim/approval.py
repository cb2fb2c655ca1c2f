"""Approval policies: whether a caller asks a human before it executes a call (SPEC §2, §12).

A policy sees what the caller knows, the tool's :class:`~sim.calculus.mcp.ToolView` (the
descriptor as discovery over the route delivered it: unknown fields are None), and the
call's arguments, and answers ``ask(view, arguments) -> bool`` once per invocation (a
retry goes back through the gate with the same answer; each approval is consumed by
one execution). :class:`DescriptorRule` is the built-in rule and the default; a plug-in
subclasses :class:`ApprovalPolicy` and is named by ``approval.policy`` in the scenario.
The conformance checks never ask the policy: they hold the trace to the ground truth.
No time: a decision is instantaneous (the human's answer takes ``approval.latency``).

:func:`approval` is the one decision: of a tool's ground truth (what it demands), the
caller's view, the policy and the arguments (what the caller does). The engine, the
live mesh, ``verify`` and the checks' ground truth (:mod:`sim.conformance.truth`) all
take their gate from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from sim.calculus.mcp import ToolPlus, ToolView, approval_rule
from sim.plugins import (
    PluginError,
    plugin_class,
    plugin_fault,
    policy_reference,
    raised,
)
from sim.scenario.findings import Finding, KnownNames

if TYPE_CHECKING:
    from sim.scenario.model import ApprovalSpec, Scenario


class ApprovalPolicyError(RuntimeError):
    """A policy that cannot be built or misbehaved at run time; ``policy`` names it."""

    def __init__(self, policy: str, reason: str) -> None:
        self.policy = policy
        self.reason = reason
        super().__init__(f"approval policy '{policy}': {reason}")


class ApprovalPolicy:
    """Decides, per call, whether the caller asks for approval. Subclass and override
    :meth:`ask` (and :meth:`reason`, what the ``approve``/``deny`` lines record); the
    constructor takes the scenario entry's ``options`` as keywords."""

    #: the plug-in as the scenario names it (set when the policy is built)
    name: str = ""

    def ask(self, view: ToolView, arguments: Mapping[str, Any]) -> bool:
        """Whether to ask before executing the call of ``view``'s tool with ``arguments``.

        ``view.descriptor`` is what the caller knows (a field it did not learn is None),
        ``view.fields`` the fields it learned, ``view.approval`` what the built-in rule
        decides for this view. Must return a bool."""
        raise NotImplementedError(f"{type(self).__name__} does not define ask(view, arguments)")

    def reason(self, view: ToolView, arguments: Mapping[str, Any]) -> str:
        """Why the caller asks (the ``reason`` of ``approve``/``deny``); default: the name."""
        return f"policy={self.name}"


class DescriptorRule(ApprovalPolicy):
    """The built-in policy, SPEC §2: ``requires_approval`` if known; else ``side_effects``
    (ask for write or delete); else ``mcp_policy`` (hints | never | always). The
    arguments play no part."""

    def __init__(self, mcp_policy: str = "hints") -> None:
        if mcp_policy not in ("hints", "never", "always"):
            raise ValueError(f"mcp_policy must be hints|never|always, not {mcp_policy!r}")
        self.mcp_policy = mcp_policy
        self.name = f"mcp_policy={mcp_policy}"
        # id(view) → (view, ask, reason): the rule once per view (views are values; the
        # entry holds the view, so its id is not reused while it is cached)
        self._decided: dict[int, tuple[ToolView, bool, str]] = {}

    def _decision(self, view: ToolView) -> tuple[ToolView, bool, str]:
        hit = self._decided.get(id(view))
        if hit is None or hit[0] is not view:
            hit = (view, *approval_rule(view.descriptor, self.mcp_policy))
            self._decided[id(view)] = hit
        return hit

    def ask(self, view: ToolView, arguments: Mapping[str, Any]) -> bool:
        return self._decision(view)[1]

    def reason(self, view: ToolView, arguments: Mapping[str, Any]) -> str:
        return self._decision(view)[2]


def approval_policy_class(reference: str, options: Mapping[str, Any] = {}) -> type[ApprovalPolicy]:
    """The approval policy class ``module:Class`` names, checked: importable, a subclass
    of :class:`ApprovalPolicy` that defines ``ask``, and taking ``options``."""
    kind = "an approval policy (a subclass of sim.ApprovalPolicy)"
    cls: type[ApprovalPolicy] = plugin_class(reference, ApprovalPolicy, kind, options)
    if cls.ask is ApprovalPolicy.ask:
        raise PluginError(f"'{reference}' does not define ask(view, arguments)")
    return cls


def policy_findings(scn: Scenario, known: KnownNames) -> Iterator[Finding]:
    """The scenario rule of this layer (SPEC §12): an ``approval.policy`` plug-in is an
    approval policy class taking its options. An unknown name is the scenario's rule."""
    entry = scn.approval.policy
    reference = None if entry is None else policy_reference(entry.plugin)
    if entry is None or reference is None:
        return
    try:
        approval_policy_class(reference, entry.options)
    except PluginError as exc:
        where = ("approval", "policy", "plugin")
        yield Finding(where, f"approval policy plug-in '{entry.plugin}': {exc}")


def make_policy(spec: ApprovalSpec) -> ApprovalPolicy:
    """The policy of a scenario's ``approval:`` block: its plug-in built with its
    options, else :class:`DescriptorRule` with ``mcp_policy``. Any failure is an
    :class:`ApprovalPolicyError` naming the plug-in."""
    entry = spec.policy
    if entry is None:
        return DescriptorRule(spec.mcp_policy.value)
    name = entry.plugin
    reference = policy_reference(name)
    if reference is None:
        raise ApprovalPolicyError(name, "no installed approval policy has this name")
    try:
        cls = approval_policy_class(reference, entry.options)
    except PluginError as exc:
        raise ApprovalPolicyError(name, str(exc)) from None
    try:
        policy = cls(**entry.options)
    except BaseException as exc:  # SystemExit too: plug-in code is isolated
        if not plugin_fault(exc):
            raise
        raise ApprovalPolicyError(name, f"building it {raised(exc)}") from exc
    policy.name = name
    return policy


def _decide(policy: ApprovalPolicy, view: ToolView, arguments: Mapping[str, Any]) -> bool:
    """``policy.ask(view, arguments)``, checked: an exception or a non-bool answer is an
    :class:`ApprovalPolicyError` naming the policy and the call."""
    try:
        ask = policy.ask(view, arguments)
    except BaseException as exc:
        if not plugin_fault(exc):
            raise
        raise ApprovalPolicyError(policy.name, f"{_call(view, arguments)} {raised(exc)}") from exc
    if ask is not True and ask is not False:
        raise ApprovalPolicyError(
            policy.name, f"{_call(view, arguments)} returned {ask!r}, not a bool"
        )
    return ask


def _reason(policy: ApprovalPolicy, view: ToolView, arguments: Mapping[str, Any]) -> str:
    """``policy.reason(view, arguments)``, checked like :func:`decide` (a str)."""
    try:
        why = policy.reason(view, arguments)
    except BaseException as exc:
        if not plugin_fault(exc):
            raise
        raise ApprovalPolicyError(
            policy.name, f"{_call(view, arguments, 'reason')} {raised(exc)}"
        ) from exc
    if not isinstance(why, str):
        raise ApprovalPolicyError(
            policy.name, f"{_call(view, arguments, 'reason')} returned {why!r}, not a str"
        )
    return why


def _call(view: ToolView, arguments: Mapping[str, Any], method: str = "ask") -> str:
    return f"{method}({view.descriptor.name!r}, {dict(arguments)!r})"


def simulated_denial(grant_probability: float) -> str:
    """Why a simulated human's refusal is recorded (``deny``'s ``reason``, one of
    :data:`sim.vocabulary.DENIALS`): ``policy`` when the scenario grants nothing
    (``grant_probability`` 0: no human could say yes), else ``declined``."""
    return "policy" if grant_probability <= 0.0 else "declined"


class Decision(NamedTuple):
    """One call's approval (SPEC §2; P2 WriteApproval). The ground truth's part:
    ``demanded``, an approve must precede each execute (the tool writes or deletes), and
    ``gated``, the tool's own LTS has the gate (``requires_approval`` true; otherwise a
    caller may ask or not: asking is never unsafe). The caller's part: ``asks``, the
    policy's checked answer on the caller's view, and ``reason``, why ('' when it does
    not ask, or no caller was given)."""

    demanded: bool
    gated: bool
    asks: bool
    reason: str


_NO_ARGUMENTS: Mapping[str, Any] = MappingProxyType({})


def approval(
    truth: ToolPlus,
    view: ToolView | None = None,
    policy: ApprovalPolicy | None = None,
    arguments: Mapping[str, Any] = _NO_ARGUMENTS,
) -> Decision:
    """The approval of one call of ``truth``'s tool with ``arguments`` by a caller that
    knows ``view`` and follows ``policy`` (default :class:`DescriptorRule` with
    ``mcp_policy`` hints); without ``view``, the ground truth's part alone (``asks``
    false). A policy's fault is an :class:`ApprovalPolicyError` (see :func:`decide`)."""
    effects = truth.side_effects
    demanded = effects is not None and effects.writes
    gated = truth.requires_approval is True
    if view is None:
        return Decision(demanded, gated, False, "")
    rule = policy if policy is not None else _BUILT_IN
    asks = _decide(rule, view, arguments)
    return Decision(demanded, gated, asks, _reason(rule, view, arguments) if asks else "")


_BUILT_IN = DescriptorRule()
