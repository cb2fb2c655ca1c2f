"""The mesh: protocols P, agents V, links E with Φ and w, translation rules, routing
and approval parameters (docs/scenario.md, docs/reference/routing.md)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Discriminator, Field, Tag, model_validator

from sim.calculus.mcp import PROTOCOL_FIELDS, DescriptorField
from sim.calculus.mcp.dialects import Dialect
from sim.scenario.model.base import (
    BUILTIN_WIRES,
    MAX_FOLDER_NAME,
    Affinity,
    AgentType,
    McpPolicy,
    NonNegative,
    Positive,
    Probability,
    Spec,
    SpecError,
    Whole,
    Wire,
)
from sim.scenario.model.dialects import dialect_of, dialect_problem
from sim.scenario.model.distribution import Distribution
from sim.scenario.model.live import LiveSpec


def protocol_entry(value: Any) -> Any:
    """Accept ``MCP`` as shorthand for ``{name: MCP}``."""
    return {"name": value} if isinstance(value, str) else value


class ProtocolSpec(Spec):
    """A protocol of P: a built-in name, or a user-defined one with its field set."""

    name: str = Field(min_length=1, description="Protocol name, e.g. MCP, MCP+, A2A, ANP, SGD.")
    fields: list[DescriptorField] | None = Field(
        None,
        description="Descriptor fields this protocol represents; required for a protocol "
        "that is not built in, optional override for a built-in one.",
    )
    dialect: str | None = Field(
        None,
        min_length=1,
        description="How a call in this protocol is invoked (docs/scenario.md#protocols): "
        "mcp (call, validate, approve, execute), sgd (invoke, collect the missing slots from "
        "the user, confirm, execute), a2a (A2A's task states: call, input-required as "
        "collect, approve, execute), an installed dialect's name, or a plug-in "
        "`package.module:Class` (a subclass of sim.calculus.mcp.dialects.Dialect); default: "
        "the built-in protocol's (SGD: sgd), else mcp.",
    )
    wire: Wire | None = Field(
        None,
        description="Which real transport carries it in the live mesh (docs/live.md): mcp "
        "(the official mcp SDK, Streamable HTTP; its spans carry mcp.method.name), a2a (the "
        "official a2a-sdk, JSON-RPC), or jsonrpc (JSON-RPC 2.0 at /rpc/<protocol>); default: "
        "the built-in protocol's (MCP, MCP+: mcp; A2A: a2a), else jsonrpc.",
    )

    def behaviour(self) -> Dialect:
        """The dialect this protocol's invocations take (:func:`dialect_of`)."""
        return dialect_of(self.name, self.dialect)

    def transport(self) -> Wire:
        """The wire that carries it live: the declared ``wire``, else the built-in
        protocol's, else JSON-RPC."""
        if self.wire is not None:
            return self.wire
        return BUILTIN_WIRES.get(self.name, Wire.JSONRPC)

    def carries(self) -> frozenset[str] | None:
        """The descriptor fields its wire carries: the declared ``fields``, else the
        built-in protocol's, else its dialect's; None when none of them says."""
        if self.fields is not None:
            return frozenset(self.fields)
        if self.name in PROTOCOL_FIELDS:
            return PROTOCOL_FIELDS[self.name]
        if self.dialect is None or dialect_problem(self.dialect) is not None:
            return None
        return self.behaviour().carries


class RoutingSpec(Spec):
    """Router parameters shared by all strategies."""

    loss_penalty: NonNegative = Field(
        1.0, description="Weight of semantic loss in τ, seconds-equivalent per unit of loss."
    )
    translation_delay: NonNegative = Field(
        0.002, description="Default translation time at a node, seconds."
    )
    suspect_ttl: Positive = Field(
        30.0, description="How long the resilient router avoids a suspected node or link, seconds."
    )


def router_entry(value: Any) -> Any:
    """Accept ``dijkstra`` as shorthand for ``{name: dijkstra}``."""
    return {"name": value} if isinstance(value, str) else value


class RouterSpec(Spec):
    """A router of ``routers:``: a known name, or a plug-in class with its options
    (docs/reference/routing.md)."""

    name: Annotated[
        str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=MAX_FOLDER_NAME)
    ] = Field(
        description="The router's name: built in (dijkstra, bfs, resilient, semantic), "
        "registered by an installed package (entry points protomesh.routers), or this "
        f"entry's plug-in; it names the results folder (at most {MAX_FOLDER_NAME} characters)."
    )
    plugin: str | None = Field(
        None,
        min_length=1,
        description="package.module:Class of a router class (e.g. a subclass of "
        "sim.DijkstraRouter), imported from the Python path.",
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments of the router class."
    )


class ApprovalPolicySpec(Spec):
    """An approval policy plug-in: ``{plugin: "package.module:Class", options}``
    (docs/reference/routing.md)."""

    plugin: str = Field(
        min_length=1,
        description="package.module:Class of an approval policy (a subclass of "
        "sim.ApprovalPolicy), or the name an installed package registers (entry points "
        "protomesh.approval).",
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments of the policy class."
    )


def policy_entry(value: Any) -> Any:
    """Accept ``"package.module:Class"`` (or an installed name) for ``{plugin: ...}``."""
    return {"plugin": value} if isinstance(value, str) else value


class ApprovalSpec(Spec):
    """The human (or policy) behind approval gates."""

    latency: Distribution = Field(
        default_factory=lambda: Distribution(dist="constant", value=1.0),
        description="Time from approval request to answer, seconds.",
    )
    grant_probability: Probability = Field(
        0.95, description="Probability that an approval request is granted."
    )
    mcp_policy: McpPolicy = Field(
        McpPolicy.HINTS,
        description="How a caller that sees neither requires_approval nor side_effects "
        "decides: hints (ask unless readOnlyHint is true) | never | always.",
    )
    policy: (
        Annotated[
            ApprovalPolicySpec,
            BeforeValidator(policy_entry, json_schema_input_type=str | ApprovalPolicySpec),
        ]
        | None
    ) = Field(
        None,
        description="A plug-in deciding per call whether to ask (docs/reference/routing.md); "
        "absent: the "
        "built-in rule (requires_approval, else side_effects, else mcp_policy).",
    )


class AgentSpec(Spec):
    """A node v of G: an agent with its type, capabilities and protocols Γ(v, ·)."""

    id: str = Field(min_length=1, description="Unique agent id.")
    type: AgentType = Field(description="LLM_AGENT | TOOL_SERVER | COORDINATOR | GATEWAY.")
    capabilities: list[str] = Field(
        default_factory=list, description="Capability names, matched by the semantic router."
    )
    protocols: dict[str, Affinity] = Field(
        min_length=1,
        description="Protocols spoken, each with its affinity Γ(v, p) in (0, 1].",
    )
    translation_delay: NonNegative | None = Field(
        None, description="This node's translation time, seconds (overrides every default)."
    )
    tools: list[str] = Field(default_factory=list, description="Names of the tools hosted here.")
    concurrency: Whole = Field(
        8, ge=1, description="Tool executions served at once; more wait in a FIFO queue."
    )
    live: LiveSpec | None = Field(
        None,
        description="The live mesh (`python -m sim live`): a real server in this agent's "
        "place (`command` or `url`), or the port its process listens on.",
    )


def _latency_kind(value: Any) -> str:
    """Which member of :data:`LinkLatency` a value is (a mapping: a distribution)."""
    return "<distribution>" if isinstance(value, dict | Distribution) else "<number>"


#: One protocol's latency on a link: seconds, or a distribution of seconds per crossing.
LinkLatency = Annotated[
    Annotated[NonNegative, Tag("<number>")] | Annotated[Distribution, Tag("<distribution>")],
    Discriminator(_latency_kind),
]


class LinkSpec(Spec):
    """An edge e of G with Φ(e) and the latency w_e(p) of each protocol: a number (the
    crossing's latency, plus the exponential ``jitter``) or a distribution (each crossing
    drawn from it; w_e(p) is its mean)."""

    between: list[str] = Field(
        min_length=2, max_length=2, description="The two agent ids this link joins (undirected)."
    )
    latency: dict[str, LinkLatency] = Field(
        min_length=1,
        description="Φ(e): protocols carried, each with its one-way latency, seconds: a "
        "number (w_e(p)), or a distribution drawn per crossing (w_e(p) is its mean).",
    )
    jitter: NonNegative = Field(
        0.0,
        description="Mean of the exponential extra latency per hop, seconds (0: none); "
        "numeric latencies only.",
    )

    @model_validator(mode="after")
    def _jitter_with_numbers(self) -> LinkSpec:
        drawn = [p for p, v in self.latency.items() if isinstance(v, Distribution)]
        if drawn and self.jitter > 0:
            raise SpecError(
                f"jitter applies to numeric latencies only: {drawn[0]}'s latency is a "
                "distribution, which is the whole latency of a crossing (drop jitter, or "
                "widen the distribution)",
                "jitter",
            )
        return self


class TranslationSpec(Spec):
    """A rule for one ordered protocol pair p → p' (forbid, destroy or calibrate it)."""

    from_: str = Field(alias="from", description="Source protocol p.")
    to: str = Field(description="Target protocol p'.")
    allowed: bool = Field(True, description="False forbids translating p → p' anywhere.")
    loss: Probability | None = Field(
        None, description="Measured loss in [0, 1], overriding the derived field loss."
    )
    delay: NonNegative | None = Field(
        None, description="Measured translation time, seconds (a node's own delay still wins)."
    )
    destructive: bool = Field(False, description="The translation can fail (⊥).")
    fail: Probability = Field(
        0.0, description="Probability that a destructive translation fails (⊥)."
    )
