"""Every trace label of SPEC §5, its detail keys and their types, and the line's fields.

This is the one declaration of the trace vocabulary: the engine's recorder writes only
what is declared here (a test runs scenarios and compares every line against it) and
the conformance decoders read what is declared here. A leaf: it imports nothing of
protomesh.

A line is one JSON object with the :data:`FIELDS` in that order; a field that does not
apply is ``null``. ``detail`` is an object whose keys are the label's :class:`Key`\\ s,
written in the declared order (``turn``, a dialogue key, first); a key with
``required=False`` is left out where it does not apply. Keys with
``source="dialogue"`` are written by the SGD dialogue converter
(``sim.conformance.dialogues``), never by the engine; the keys with ``source="live"``,
``wall`` (every label's last) and ``call``'s ``traceparent``, by the live mesh
(``sim.live``) and the ``serve`` commands, never by the engine.
"""

from __future__ import annotations

from typing import NamedTuple

#: ``list[str]`` as a declared type (a JSON array of strings).
STRINGS = list[str]


class Field(NamedTuple):
    """A top-level field of a trace line."""

    name: str
    type: object  #: int, float, str, or ``dict`` for ``detail``
    nullable: bool
    doc: str


#: The top-level fields of every line, in the order they are written.
FIELDS: tuple[Field, ...] = (
    Field("t", float, False, "simulated time, seconds, rounded to microseconds"),
    Field("seq", int, False, "line number within the replication, from 0"),
    Field("rep", int, False, "replication index"),
    Field("label", str, False, "one of LABELS"),
    Field("agent", str, False, "the agent where the event happens"),
    Field("wf", str, True, "workflow name"),
    Field("inst", int, True, "workflow instance id"),
    Field("task", str, True, "task id"),
    Field("inv", int, True, "invocation (or discovery) id"),
    Field("tool", str, True, "tool name"),
    Field("proto", str, True, "protocol of the event"),
    Field("detail", dict, False, "the label's keys (an object, {} when empty)"),
)
FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)


class Key(NamedTuple):
    """A key of ``detail``: its JSON type, whether every line of the label has it."""

    name: str
    type: object  #: int, float, str, bool or STRINGS
    required: bool = True
    source: str = "engine"  #: "engine", "dialogue" (SGD dialogues only) or "live"
    doc: str = ""
    #: the values a string key may take (empty: any)
    values: tuple[str, ...] = ()


#: Which top-level fields a label fills (the others are ``null``):
#: ``element`` (agent only), ``instance`` (wf, inst), ``task`` (wf, inst, task, tool),
#: ``invocation`` (wf, inst, task, inv, tool, proto), ``message`` (the owner's fields:
#: an invocation's or a discovery's; proto = the message's protocol there).
SCOPES: tuple[str, ...] = ("element", "instance", "task", "invocation", "message")


class Label(NamedTuple):
    """A trace label: its detail keys (in written order), scope and category."""

    name: str
    keys: tuple[Key, ...]
    scope: str
    #: a label of the tool invocation LTS (the ``lts`` check reads these)
    protocol: bool = False
    #: left out at trace level ``protocol`` (written at level ``full`` only)
    transport: bool = False
    doc: str = ""

    def key(self, name: str) -> Key:
        """The declared key ``name`` (KeyError if undeclared)."""
        for k in self.keys:
            if k.name == name:
                return k
        raise KeyError(f"label '{self.name}' declares no detail key '{name}'")

    @property
    def key_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)


_TURN = Key("turn", int, False, "dialogue", "the dialogue turn")
#: ``detail.traceparent`` (SPEC §14): the W3C ``traceparent`` a client sent with the request
#: (``_meta``, A2A metadata or the HTTP header), as received; ``serve`` and ``live`` only.
TRACEPARENT = Key(
    "traceparent", str, False, "live", "the W3C traceparent the request carried (serve, live)"
)
_ATTEMPT = Key("attempt", int, doc="attempt number of the invocation, from 1")
_ERROR = Key("error", str, doc="error type")
_MSG = Key("msg", int, doc="message id")
_OPT_ATTEMPT = Key("attempt", int, False, doc="attempt number of the invocation, from 1")
#: Why an approval was denied (``deny``'s ``reason``): the user declined or cancelled the
#: question, the client cannot be asked (it did not declare elicitation), the approval
#: policy grants nothing (``grant_probability: 0``), the answer came with a request state
#: that was already used, or nobody answered within the elicitation timeout.
DENIALS: tuple[str, ...] = (
    "declined",
    "cancelled",
    "no_elicitation",
    "policy",
    "replayed",
    "timeout",
)
_ACT = Key("act", str, False, "dialogue", "AFFIRM or NEGATE")
_ANSWERS = Key("answers", int, False, "dialogue", "turn of the system's proposal")
#: approve: the view's reason; a dialogue's act (AFFIRM) and the turn of the proposal it
#: answers
_APPROVE = (_TURN, Key("reason", str, False, doc="why the view asks for approval"), _ACT, _ANSWERS)
#: deny: why it was denied (one of DENIALS) and why the view asked; a dialogue's act (NEGATE)
_DENY = (
    _TURN,
    Key("reason", str, False, doc="why the approval was denied", values=DENIALS),
    Key("asked", str, False, doc="why the view asks for approval"),
    _ACT,
    _ANSWERS,
)

_DECLARED: tuple[Label, ...] = (
    Label(
        "wf_start",
        (
            _TURN,
            TRACEPARENT._replace(doc="the instance's own W3C trace context (live callers)"),
        ),
        "instance",
        doc="an instance arrives at its initiator",
    ),
    Label(
        "wf_end",
        (
            _TURN,
            Key("status", str, doc="succeeded, failed or cancelled"),
            Key("latency", float, False, doc="wf_end.t - wf_start.t, seconds"),
            Key("reason", str, False, doc="why it failed or was cancelled"),
        ),
        "instance",
        doc="an instance ends",
    ),
    Label(
        "list",
        (
            Key("host", str, doc="the agent that answered"),
            Key("fields", STRINGS, doc="descriptor fields that survived the path, sorted"),
            Key("approval", bool, doc="whether the caller's view asks for approval"),
            Key("approval_reason", str),
        ),
        "invocation",
        doc="a discovery's reply reached the caller",
    ),
    Label(
        "call",
        (
            Key("target", str, doc="the server the request goes to"),
            Key("parent", int, False, doc="the failed invocation a fallback replaces"),
            TRACEPARENT,
        ),
        "invocation",
        protocol=True,
    ),
    Label(
        "invoke",
        (
            _TURN,
            Key("target", str, False, doc="the server the request goes to"),
            Key("parent", int, False, doc="the failed invocation a fallback replaces"),
        ),
        "invocation",
        protocol=True,
        doc="an invocation issued in SGD (call's dialect)",
    ),
    Label(
        "collect",
        (_TURN, Key("slot", str, doc="the slot the user answered")),
        "invocation",
        protocol=True,
    ),
    Label("validate", (), "invocation", protocol=True, doc="the LTS's tau"),
    Label("approve", _APPROVE, "invocation", protocol=True, doc="the approval gate's answer"),
    Label("deny", _DENY, "invocation", protocol=True, doc="the approval gate's answer"),
    Label(
        "execute",
        (
            _TURN,
            _OPT_ATTEMPT,
            Key("waited", float, False, doc="seconds queued at the server"),
            Key("approved", bool, False, doc="write/delete tools: an approval was consumed"),
            Key("method", str, False, "dialogue", "the SGD service call's method"),
        ),
        "invocation",
        protocol=True,
    ),
    Label(
        "result",
        (
            _TURN,
            _OPT_ATTEMPT,
            Key("results", int, False, "dialogue", "number of service results"),
        ),
        "invocation",
        protocol=True,
    ),
    Label(
        "error",
        (
            _TURN,
            _ERROR,
            Key("missing", STRINGS, False, doc="ValidationError: required fields missing"),
            _OPT_ATTEMPT,
            Key(
                "cause",
                str,
                False,
                doc="'timeout' for a ServiceDown the caller inferred; 'server_exit' (live) "
                "for one answered because the agent's real server had died",
            ),
        ),
        "invocation",
        protocol=True,
    ),
    Label(
        "retry",
        (_ERROR, Key("n", int, doc="retry number"), Key("backoff", float, doc="seconds")),
        "invocation",
        protocol=True,
    ),
    Label(
        "fallback",
        (_ERROR, Key("to", str, doc="the fallback tool")),
        "invocation",
        protocol=True,
    ),
    Label(
        "prompt",
        (_ERROR, Key("message", str, doc="the prompt shown to the user")),
        "invocation",
        protocol=True,
    ),
    Label("abort", (_TURN, _ERROR), "invocation", protocol=True),
    Label(
        "skip",
        (Key("exclusive_with", str, doc="the tool already started"),),
        "task",
        doc="a task skipped because its tool is exclusive with one already started",
    ),
    Label(
        "send",
        (
            _MSG,
            Key("kind", str, doc="request, response, list or list_reply"),
            Key("path", STRINGS, doc="the agents of the route"),
            Key("to", str, doc="the destination"),
        ),
        "message",
        transport=True,
    ),
    Label(
        "hop",
        (
            _MSG,
            Key("from", str),
            Key("proto", str, doc="the link's protocol"),
            Key("to", str),
        ),
        "message",
        transport=True,
    ),
    Label(
        "translate",
        (
            _MSG,
            Key("at", str, doc="the translating agent"),
            Key("chain", STRINGS, doc="the protocols of the translation chain"),
            Key("dropped", STRINGS, doc="fields the transformer drops"),
            Key("from_proto", str),
            Key("kind", str, doc="the transformer's kind"),
            Key("to_proto", str),
        ),
        "message",
    ),
    Label(
        "deliver",
        (_MSG, Key("kind", str, doc="request, response, list or list_reply")),
        "message",
        transport=True,
    ),
    Label(
        "drop",
        (
            Key("msg", int, False, doc="absent for lost work (not a message)"),
            Key(
                "reason",
                str,
                doc="node_down, link_down, translation_failed, untranslatable, run_end, "
                "link_loss (a loss fault), or the reason a fault kind's strike gives",
            ),
            Key("lost", str, False, doc="lost work: queued or executing"),
        ),
        "message",
    ),
    Label(
        "timeout",
        (
            _ATTEMPT,
            Key("after", float, False, doc="the attempt's timeout, seconds"),
            Key("executed", bool, False, doc="whether the server executed the attempt"),
            Key("kind", str, False, doc="'list' for a discovery"),
            Key("action", str, doc="error, resend or give_up"),
        ),
        "invocation",
    ),
    Label(
        "reroute",
        (
            Key("from_path", STRINGS),
            Key("to_path", STRINGS),
            Key("avoid", STRINGS, doc="the caller's suspects, sorted"),
        ),
        "invocation",
    ),
    Label("node_down", (), "element"),
    Label("node_up", (), "element"),
    Label(
        "link_down",
        (Key("link", STRINGS, doc="the link's two ends"),),
        "element",
        doc="agent: the link's first end",
    ),
    Label(
        "link_up",
        (Key("link", STRINGS, doc="the link's two ends"),),
        "element",
        doc="agent: the link's first end",
    ),
)

#: ``detail.wall`` of the live mesh (SPEC §13): the event's UTC time, ISO 8601 with
#: microseconds and ``Z``; the last key of every label.
WALL = Key("wall", str, False, "live", "the UTC time of the event (live mesh only)")
#: ``detail.wall``'s form (``datetime.strftime`` of a UTC time): ``2026-12-06T21:14:03.118204Z``.
WALL_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"

#: Every label, by name, in SPEC §5's order.
LABELS: dict[str, Label] = {lab.name: lab._replace(keys=(*lab.keys, WALL)) for lab in _DECLARED}
LABEL_NAMES: tuple[str, ...] = tuple(LABELS)
#: Labels of the tool invocation LTS (they carry ``inv``).
PROTOCOL_LABELS: frozenset[str] = frozenset(n for n, lab in LABELS.items() if lab.protocol)
#: Labels written at trace level ``full`` only.
TRANSPORT_LABELS: frozenset[str] = frozenset(n for n, lab in LABELS.items() if lab.transport)
#: Trace levels: ``full`` everything, ``protocol`` without TRANSPORT_LABELS, ``off`` nothing.
TRACE_LEVELS: tuple[str, ...] = ("full", "protocol", "off")
#: Every detail key any label declares (their union), sorted.
DETAIL_KEYS: tuple[str, ...] = tuple(sorted({k.name for lab in LABELS.values() for k in lab.keys}))


def detail_type(name: str) -> object:
    """The one type of detail key ``name`` across labels (keys share their type)."""
    types = {repr(k.type): k.type for lab in LABELS.values() for k in lab.keys if k.name == name}
    if not types:
        raise KeyError(f"no label declares detail key '{name}'")
    (only,) = types.values()
    return only
