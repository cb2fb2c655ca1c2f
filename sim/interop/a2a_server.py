"""One agent of a scenario as a real A2A server (``serve a2a``), through the official
``a2a-sdk`` (1.3: its ``DefaultRequestHandler``, in-memory task store, JSON-RPC endpoint
and card routes). See docs/a2a.md.

- The card (``/.well-known/agent-card.json``): the agent's as ``export a2a`` writes it
  (a kept card for an imported agent), its interface this server's ``<base>/a2a``,
  streaming on.
- A request: a user ``Message`` with a DataPart ``{"skill": NAME, "arguments": {...}}``
  naming one of the tools the agent serves (its own, or its skills' host's). It creates a
  task (``SendMessage`` and ``SendStreamingMessage`` alike): submitted, then the arguments are
  validated against the tool's input schema (a violation: the task ``failed``), then the
  approval gate: when the scenario's approval policy, on the descriptor as an A2A client
  sees it, asks, the task goes ``input-required`` with a question (a text part and a
  DataPart ``{"approval": {"skill", "arguments", "reason"}}``) and nothing runs. The
  client answers in the same task (``taskId``) with a DataPart ``{"approval": "accept"}``
  or ``{"approval": "decline"}``: accept runs the tool, decline ends the task
  ``rejected`` (the agent will not do it; nothing executed); ``CancelTask`` of a waiting
  task ends it ``canceled``. An answer is used once (the question is gone after it).
- The work: the tool's simulated behaviour as ``serve mcp`` has it (the same
  :class:`sim.interop.server.Simulation`: service time / ``speed``, an error drawn from
  ``errors``): the task ``completed`` with an artifact ``result`` (a DataPart), or
  ``failed`` with the error's text.
- Refused before any task (the JSON-RPC error -32602): a message without such a DataPart,
  an unknown skill, an answer that is not ``accept`` or ``decline``, a message to a task
  that is not waiting for one.
- ``trace``: each task is an invocation of the session trace (:mod:`sim.interop.session_trace`,
  ``proto`` ``A2A``, ``inst`` the A2A context), with ``wall``; a ``traceparent`` in the
  message's metadata or the HTTP header is recorded on its ``call``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sim.interop.a2a_decoding import decoding
from sim.interop.errors import InteropError
from sim.interop.session_trace import CLIENT_AGENT, LiveTrace
from sim.otel.context import TRACEPARENT, parse_traceparent

__all__ = ["PROTOCOL", "a2a_app", "served_tools"]

PROTOCOL = "A2A"
DECODED = "protomesh/a2a-request"
"""The key of a request's decoded form in the SDK's call context."""
ACCEPT, DECLINE = "accept", "decline"


@dataclass(frozen=True, slots=True)
class Request:
    """A decoded message: a new task's skill and arguments, or an approval's answer."""

    skill: str | None
    arguments: Mapping[str, Any]
    answer: str | None
    traceparent: str | None


@dataclass(slots=True)
class Pending:
    """A task waiting for its approval: its invocation, tool, arguments and why."""

    inst: int
    inv: int
    skill: str
    arguments: Mapping[str, Any]
    reason: str


def served_tools(
    scenario: Any, extension: Mapping[str, Mapping[str, Any]], agent: str
) -> list[str]:
    """The tools ``agent`` serves: its own, or (an imported A2A agent) its skills' host's.
    :class:`InteropError` for an unknown agent or one that serves none."""
    by_id = {a.id: a for a in scenario.agents}
    if agent not in by_id:
        raise InteropError(f"--agent {agent!r}: no such agent (agents: {', '.join(by_id)})")
    tools = list(by_id[agent].tools)
    host = (extension.get(agent) or {}).get("host")
    if not tools and host in by_id:
        tools = list(by_id[str(host)].tools)
    if not tools:
        raise InteropError(
            f"--agent {agent!r}: serves no tool (name a tool server, or an imported A2A agent)"
        )
    return tools


def _data(message: Any) -> list[Any]:
    from google.protobuf.json_format import MessageToDict

    from sim.interop.a2a_decoding import plain

    return [plain(MessageToDict(p.data)) for p in message.parts if p.HasField("data")]


def _traceparent(message: Any, headers: Mapping[str, str]) -> str | None:
    """A valid ``traceparent`` of the message's metadata, else of the HTTP header."""
    from google.protobuf.json_format import MessageToDict

    meta = MessageToDict(message.metadata) if message.HasField("metadata") else {}
    for value in (meta.get(TRACEPARENT), headers.get(TRACEPARENT)):
        if parse_traceparent(value) is not None:
            return str(value)
    return None


def decode(message: Any, waiting: bool, skills: list[str], headers: Mapping[str, str]) -> Request:
    """The request a message makes (``waiting``: its task waits for an approval);
    ``ValueError`` naming what is wrong."""
    parts = [d for d in _data(message) if isinstance(d, Mapping)]
    traced = _traceparent(message, headers)
    if waiting:
        answers = [d["approval"] for d in parts if "approval" in d]
        if not answers or answers[0] not in (ACCEPT, DECLINE):
            raise ValueError(
                'the task waits for an approval: answer with a DataPart {"approval": "accept"} '
                'or {"approval": "decline"}'
            )
        return Request(None, {}, str(answers[0]), traced)
    asked = [d for d in parts if "skill" in d]
    if not asked:
        raise ValueError(
            'expected a DataPart {"skill": NAME, "arguments": {...}} (skills: '
            + ", ".join(skills)
            + ")"
        )
    skill, arguments = asked[0]["skill"], asked[0].get("arguments", {})
    if skill not in skills:
        raise ValueError(f"Unknown skill: {skill} (skills: {', '.join(skills)})")
    if not isinstance(arguments, Mapping):
        raise ValueError(f"arguments of {skill}: an object expected")
    return Request(str(skill), dict(arguments), None, traced)


def _decoded(message: Any, headers: Mapping[str, str], skills: list[str], work: _Work) -> Request:
    """A message decoded: an answer to a waiting task, or a new task's request."""
    asked = message.task_id
    if asked and asked not in work.pending:
        raise ValueError(f"task {asked} is not waiting for an answer")
    return decode(message, bool(asked), skills, headers)


def a2a_app(
    scenario: Any,
    extension: Mapping[str, Mapping[str, Any]],
    mcp_extension: Mapping[str, Any],
    *,
    agent: str,
    base_url: str,
    speed: float | None,
    seed: int,
    trace: LiveTrace | None,
    log: Callable[[str], None],
) -> tuple[Any, Any, list[str]]:
    """The Starlette app serving ``agent`` at ``base_url``, its card and its skills."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentInterface
    from starlette.applications import Starlette

    from sim.interop.a2a_card import BINDING, ENDPOINT, PROTOCOL_VERSION
    from sim.interop.a2a_fragment import scenario_cards
    from sim.interop.server import Simulation
    from sim.interop.tools_list import scenario_tools_list

    skills = served_tools(scenario, extension, agent)
    export = scenario_tools_list(scenario, mcp_extension, skills)
    entries = {e["name"]: e for e in export.data["tools"]}
    sim = Simulation(scenario, entries, speed, seed, "result", list(export.notes))
    [(_, card)] = scenario_cards(scenario, extension, [agent], base_url, scenario.name)
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        AgentInterface(
            url=base_url.rstrip("/") + ENDPOINT,
            protocol_binding=BINDING,
            protocol_version=PROTOCOL_VERSION,
        )
    )
    card.capabilities.streaming = True
    work = _Work(sim, trace, log)
    handler = DefaultRequestHandler(
        agent_executor=_executor(work),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        request_context_builder=decoding(DECODED, lambda m, h: _decoded(m, h, skills, work)),
    )
    routes = [*create_jsonrpc_routes(handler, ENDPOINT), *create_agent_card_routes(card)]
    return Starlette(routes=routes), card, skills


class _Work:
    """The tasks' simulated work, their approvals waiting, and their trace."""

    def __init__(self, sim: Any, trace: LiveTrace | None, log: Callable[[str], None]) -> None:
        self.sim = sim
        self.trace = trace
        self.log = log
        self.pending: dict[str, Pending] = {}
        self.invocations = 0

    def note(self, label: str, inst: int, inv: int, skill: str, agent: str = CLIENT_AGENT,
             **detail: Any) -> None:  # fmt: skip
        if self.trace is not None:
            self.trace.event(
                label, agent=agent, inst=inst, inv=inv, tool=skill, proto=PROTOCOL, **detail
            )

    def start(self, context_id: str, request: Request) -> tuple[str, Pending]:
        """A new task's call, validation and gate: ``("invalid", _)`` (the arguments fail
        the schema: the text in ``reason``), ``("ask", pending)`` or ``("run", pending)``."""
        assert request.skill is not None
        skill, arguments = request.skill, request.arguments
        inst = self.trace.instance(("context", context_id)) if self.trace is not None else 0
        inv = self.trace.invocation() if self.trace is not None else self._count()
        extra = {TRACEPARENT: request.traceparent} if request.traceparent else {}
        self.note("call", inst, inv, skill, target=self.sim.hosts.get(skill, skill), **extra)
        problem = self.sim.arguments_error(skill, arguments)
        if problem is not None:
            self.note("error", inst, inv, skill, error="ValidationError", attempt=1)
            text = f"Invalid arguments for skill {skill}: {problem}"
            return "invalid", Pending(inst, inv, skill, arguments, text)
        self.note("validate", inst, inv, skill)
        asks, why = self.sim.asks(skill, arguments)
        return ("ask" if asks else "run"), Pending(inst, inv, skill, arguments, why)

    def _count(self) -> int:
        self.invocations += 1
        return self.invocations - 1

    async def run(self, pending: Pending, approved: bool) -> tuple[bool, str, Any]:
        """Execute ``pending``: ``(ok, text, result data)`` (an error's text when not ok)."""
        import anyio

        sim, skill = self.sim, pending.skill
        slot = sim.slots.get(skill)
        host = sim.hosts.get(skill, skill)
        extra = {"approved": True} if approved and sim.specs[skill].side_effects.writes else {}
        queued = time.monotonic()
        if slot is not None:
            await slot.acquire()
        try:
            waited = round(time.monotonic() - queued, 6)
            self.note("execute", pending.inst, pending.inv, skill, agent=host, attempt=1,
                      waited=waited, **extra)  # fmt: skip
            await anyio.sleep(sim.service_seconds(skill))
        finally:
            if slot is not None:
                slot.release()
        failure = sim.draw_error(skill)
        if failure is not None:
            etype, p = failure
            self.note("error", pending.inst, pending.inv, skill, error=etype, attempt=1)
            return False, f"{etype}: simulated error of {skill} (probability {p:g})", None
        self.note("result", pending.inst, pending.inv, skill, attempt=1)
        body = {"skill": skill, "status": "ok", "simulated": True}
        body["arguments"] = dict(pending.arguments)
        return True, json.dumps(body, ensure_ascii=False), body


def _executor(work: _Work) -> Any:
    """The SDK ``AgentExecutor`` doing each task's work."""
    from a2a.helpers import new_data_part, new_task, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.tasks import TaskUpdater
    from a2a.types import TaskState
    from a2a.utils.errors import TaskNotCancelableError

    from sim.interop.elicitation import approval_message, refusal

    async def finish(updater: TaskUpdater, pending: Pending, approved: bool) -> None:
        await updater.start_work()
        ok, text, body = await work.run(pending, approved)
        if not ok:
            await updater.failed(updater.new_agent_message([new_text_part(text)]))
            return
        await updater.add_artifact([new_data_part(body)], name="result")
        await updater.complete(updater.new_agent_message([new_text_part(text)]))

    class Executor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            request: Request = context.call_context.state[DECODED]
            task_id, context_id = str(context.task_id), str(context.context_id)
            updater = TaskUpdater(event_queue, task_id, context_id)
            if request.answer is not None:  # the decoder let only a waiting task's through
                pending = work.pending.pop(task_id)
                approved = request.answer == ACCEPT
                if approved:
                    work.note("approve", pending.inst, pending.inv, pending.skill,
                              reason=pending.reason)  # fmt: skip
                else:
                    work.note("deny", pending.inst, pending.inv, pending.skill,
                              reason="declined", asked=pending.reason)  # fmt: skip
                work.log(f"approval of {pending.skill} (task {task_id}): {request.answer}")
                if approved:
                    await finish(updater, pending, True)
                else:
                    said = refusal(pending.skill, "the user declined the approval")
                    await updater.reject(updater.new_agent_message([new_text_part(said)]))
                return
            history = [context.message] if context.message is not None else []
            task = new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=history)
            await event_queue.enqueue_event(task)
            what, started = work.start(context_id, request)
            if what == "invalid":
                await updater.failed(updater.new_agent_message([new_text_part(started.reason)]))
            elif what == "run":
                await finish(updater, started, False)
            else:
                work.pending[task_id] = started
                question = approval_message(started.skill, started.arguments, started.reason)
                asked = {"skill": started.skill, "arguments": dict(started.arguments),
                         "reason": started.reason}  # fmt: skip
                parts = [
                    new_text_part(f'{question} Answer {{"approval": "accept"}} or '
                                  '{"approval": "decline"} in this task.'),
                    new_data_part({"approval": asked}),
                ]  # fmt: skip
                await updater.requires_input(updater.new_agent_message(parts))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            task_id = str(context.task_id)
            pending = work.pending.pop(task_id, None)
            if pending is None:
                raise TaskNotCancelableError(message=f"task {task_id} is not waiting")
            work.note("deny", pending.inst, pending.inv, pending.skill,
                      reason="cancelled", asked=pending.reason)  # fmt: skip
            work.log(f"approval of {pending.skill} (task {task_id}): canceled")
            updater = TaskUpdater(event_queue, task_id, str(context.context_id))
            said = refusal(pending.skill, "the client canceled the task")
            await updater.cancel(updater.new_agent_message([new_text_part(said)]))

    return Executor()
