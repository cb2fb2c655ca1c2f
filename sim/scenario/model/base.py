"""The base of every scenario model: strict keys, immutable values, located model errors,
the number types with their ranges, and the enumerations of docs/scenario.md.

Units: simulated time in seconds; costs in seconds-equivalent; probabilities in [0, 1].
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from sim.calculus.mcp import SideEffect
from sim.calculus.mcp.invocation import RETRY_STATES

#: The longest name that names a results folder (a scenario's, a router's), in
#: characters: a file name has 255 bytes at most, and the folder's path has more parts.
MAX_FOLDER_NAME = 100

#: The protocols protomesh knows without a ``fields:`` declaration (docs/reference/routing.md).
BUILTIN_PROTOCOLS: tuple[str, ...] = ("MCP", "MCP+", "A2A", "ANP", "SGD")


def _quoted(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _reads_as_number(value: str) -> bool:
    try:
        float(value.replace("_", ""))
    except ValueError:
        return False
    return True


def _number_check(expected: str) -> BeforeValidator:
    """A number field's check before pydantic's: YAML's ``true``/``yes``/``on`` are not
    numbers (pydantic would read them as 1), nor is a string, even one that reads as a
    number (pydantic would read ``"2"`` as 2): the published JSON Schema says number, so
    an editor flags it (docs/scenario.md, rules checked at load time)."""

    def check(value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"must be a number, not the boolean {str(value).lower()}")
        if isinstance(value, str):
            hint = " (write the number without quotes)" if _reads_as_number(value) else ""
            raise ValueError(f"must be {expected}, not a string {_quoted(value)}{hint}")
        return value

    return BeforeValidator(check)


_WHOLE = _number_check("a whole number")
_NUMBER = _number_check("a number")
# Constraints come before the validator in each alias, so pydantic keeps them in the
# JSON Schema (exclusiveMinimum, maximum, ...) for editors.
#: A whole number (booleans and strings rejected).
Whole = Annotated[int, _WHOLE]
Count = Annotated[int, Field(ge=0), _WHOLE]
#: A retry bound: a count the invocation LTS counts exactly (``RETRY_STATES``).
Retries = Annotated[int, Field(ge=0, le=RETRY_STATES), _WHOLE]
#: A TCP port a process may listen on.
Port = Annotated[int, Field(ge=1, le=65535), _WHOLE]
#: Finite real numbers (booleans, strings, ``.inf`` and ``.nan`` rejected) in a range.
Finite = Annotated[float, Field(allow_inf_nan=False), _NUMBER]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False), _NUMBER]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False), _NUMBER]
Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False), _NUMBER]
Affinity = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False), _NUMBER]


#: Tags of the unions a value of the scenario may take (a number or a distribution):
#: pydantic writes the tag into an error's location, the loader leaves it out.
UNION_TAGS: frozenset[str] = frozenset({"<number>", "<distribution>"})


class SpecError(ValueError):
    """A model-level error about one of the model's own fields.

    ``where`` is the path of that field relative to the model, e.g. ``("times", 3)``;
    the loader points the diagnostic there (the nearest part present in the file).
    """

    def __init__(self, message: str, *where: str | int) -> None:
        super().__init__(message)
        self.where: tuple[str | int, ...] = where


class Spec(BaseModel):
    """Base of every scenario model: unknown keys are errors, values are immutable. A
    model's validator and serializer are built at its first use (``defer_build``), not
    at import: loading a scenario builds the scenario's, which holds its parts', and no
    other model's but those a located error reads again (about 0.02 s CPU of each
    ``run``'s start, measured loading the 1,000-agent mesh)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class AgentType(StrEnum):
    """The node types of the Protocol Graph Model."""

    LLM_AGENT = "LLM_AGENT"
    TOOL_SERVER = "TOOL_SERVER"
    COORDINATOR = "COORDINATOR"
    GATEWAY = "GATEWAY"


#: A tool's ground-truth side effect (paper §6.2, P2): the calculus's enumeration.
SideEffects = SideEffect


class McpPolicy(StrEnum):
    """How a caller that cannot see ``requires_approval`` or ``side_effects`` decides."""

    HINTS = "hints"
    NEVER = "never"
    ALWAYS = "always"


class Wire(StrEnum):
    """The real transport that carries a protocol's messages in the live mesh
    (docs/live.md): the official ``mcp`` SDK (Streamable HTTP at ``/mcp``), the official
    ``a2a-sdk`` (JSON-RPC at ``/a2a``), or plain JSON-RPC 2.0 at ``/rpc/<protocol>``. The
    wire also names the OpenTelemetry semantic conventions an exported span follows."""

    MCP = "mcp"
    A2A = "a2a"
    JSONRPC = "jsonrpc"


#: The wire of a built-in protocol that has a real implementation (the built-in specs'
#: declarations); every other protocol that declares none travels on :attr:`Wire.JSONRPC`.
BUILTIN_WIRES: Mapping[str, Wire] = MappingProxyType(
    {"MCP": Wire.MCP, "MCP+": Wire.MCP, "A2A": Wire.A2A}
)


class TraceLevel(StrEnum):
    """How much of a run the trace records (docs/reference/trace.md)."""

    FULL = "full"
    PROTOCOL = "protocol"
    OFF = "off"
