"""The ``a2a-sdk`` request-context builder that decodes each message before the SDK makes
or resumes a task of it (the live mesh's A2A wire and ``serve a2a`` share it): a message
that ``decode`` refuses (``ValueError``) is the SDK's ``InvalidParamsError``, the
JSON-RPC error -32602 with the reason as its message, and no task exists."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["decoding", "plain"]


def decoding(key: str, decode: Callable[[Any, Mapping[str, str]], Any]) -> Any:
    """A ``RequestContextBuilder`` storing ``decode(message, http_headers)`` in the call
    context's state under ``key``."""
    from a2a.server.agent_execution import RequestContext, SimpleRequestContextBuilder
    from a2a.server.context import ServerCallContext
    from a2a.types import SendMessageRequest, Task
    from a2a.utils.errors import InvalidParamsError

    class Decoding(SimpleRequestContextBuilder):
        async def build(
            self,
            context: ServerCallContext,
            params: SendMessageRequest | None = None,
            task_id: str | None = None,
            context_id: str | None = None,
            task: Task | None = None,
        ) -> RequestContext:
            if params is not None:
                headers = context.state.get("headers") or {}
                try:
                    context.state[key] = decode(params.message, headers)
                except ValueError as exc:
                    raise InvalidParamsError(message=str(exc)) from None
            return await super().build(context, params, task_id, context_id, task)

    return Decoding()


def plain(value: Any) -> Any:
    """JSON read from a protobuf ``Struct``: integral doubles back to ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
