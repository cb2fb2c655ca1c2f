"""The MCP and MCP⁺ calculi (paper §3.2, §6, §7.1): tools, their metadata, and their LTSs.

* :mod:`~sim.calculus.mcp.model`: the descriptors (``Tool``, ``ToolPlus``, metadata fields);
* :mod:`~sim.calculus.mcp.parsing`: reading them from ``tools/list`` JSON and scenario entries;
* :mod:`~sim.calculus.mcp.view`: what a caller of a protocol knows of a tool (SPEC §2);
* :mod:`~sim.calculus.mcp.invocation`: the LTS of one invocation in a dialect
  (:mod:`sim.calculus.mcp.dialects`).
"""

from sim.calculus.mcp.dialects import tool_lts
from sim.calculus.mcp.invocation import validates
from sim.calculus.mcp.model import (
    ALL_FIELDS,
    BACKOFF_BASE,
    BACKOFF_CAP,
    DISCOVERY_ATTEMPTS,
    HINT_DEFAULTS,
    MAX_FALLBACK_DEPTH,
    MCP_PLUS_META,
    MCP_PLUS_META_LEGACY,
    PROTOCOL_FIELDS,
    SERVICE_DOWN,
    SGD,
    VALIDATION_ERROR,
    Abort,
    Annotations,
    Dependency,
    DescriptorField,
    FailureMode,
    Fallback,
    RecoveryStrategy,
    Relation,
    Retry,
    SideEffect,
    Tool,
    ToolPlus,
    ToolsListError,
    UserPrompt,
    backoff,
)
from sim.calculus.mcp.parsing import (
    load_tools,
    mcp_plus_key,
    tool_plus_from_mapping,
    tools_from_list,
    tools_to_list,
)
from sim.calculus.mcp.view import (
    Knowledge,
    ToolView,
    approval_rule,
    caller_view,
    excluders,
    knowledge,
)

__all__ = [
    "ALL_FIELDS",
    "BACKOFF_BASE",
    "BACKOFF_CAP",
    "DISCOVERY_ATTEMPTS",
    "HINT_DEFAULTS",
    "MAX_FALLBACK_DEPTH",
    "MCP_PLUS_META",
    "MCP_PLUS_META_LEGACY",
    "PROTOCOL_FIELDS",
    "SERVICE_DOWN",
    "SGD",
    "VALIDATION_ERROR",
    "Abort",
    "Annotations",
    "Dependency",
    "DescriptorField",
    "FailureMode",
    "Fallback",
    "Knowledge",
    "RecoveryStrategy",
    "Relation",
    "Retry",
    "SideEffect",
    "Tool",
    "ToolPlus",
    "ToolView",
    "ToolsListError",
    "UserPrompt",
    "approval_rule",
    "backoff",
    "caller_view",
    "excluders",
    "knowledge",
    "load_tools",
    "mcp_plus_key",
    "tool_lts",
    "tool_plus_from_mapping",
    "tools_from_list",
    "tools_to_list",
    "validates",
]
