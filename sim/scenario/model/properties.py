"""A user property's entry (``properties:`` of a scenario, or a ``--properties`` file)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class PropertySpec(BaseModel):
    """A named LTLf formula checked on every scope of its kind (docs/properties.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=r"^[a-z0-9-]+$")] = Field(
        description="Property name, [a-z0-9-]+."
    )
    scope: Literal["invocation", "instance", "run"] = Field(
        description="The traces it holds on: each invocation, each workflow instance, the run."
    )
    formula: str = Field(
        min_length=1,
        description="LTLf with past operators and bounds in seconds, e.g. "
        "'G (call -> F[<=30] (result | error))'.",
    )
