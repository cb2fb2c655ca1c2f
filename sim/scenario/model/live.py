"""How an agent runs in the live mesh (``python -m sim live``, docs/live.md): by default a
process of protomesh's own; ``live:`` may name a real server to use in its place, or
pin the port it listens on."""

from __future__ import annotations

from pydantic import Field, model_validator

from sim.scenario.model.base import Port, Spec, SpecError


class LiveSpec(Spec):
    """An agent's ``live:`` entry: a real MCP server over stdio (``command``) or
    Streamable HTTP (``url``) serves its tools instead of protomesh's simulation; ``port``
    is the loopback port its own process listens on (default: any free one)."""

    command: list[str] | None = Field(
        None,
        min_length=1,
        description="A real MCP server over stdio: its executable and arguments.",
    )
    url: str | None = Field(
        None, description="A real MCP server over Streamable HTTP: its endpoint URL."
    )
    env: dict[str, str] = Field(
        default_factory=dict, description="Environment variables for `command`."
    )
    port: Port | None = Field(
        None, description="The loopback port this agent's process listens on."
    )

    @model_validator(mode="after")
    def _one_server(self) -> LiveSpec:
        if self.command is not None and self.url is not None:
            raise SpecError("an agent names a real server by command or by url, not both", "url")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise SpecError(f"url must be http:// or https://, not {self.url!r}", "url")
        if self.env and self.command is None:
            raise SpecError("env is for a server started by command", "env")
        return self
