"""SGD dialogues as protomesh traces, so ``write_approval`` and ``lts`` run on real
human-machine conversations (Schema-Guided Dialogue dataset, Rastogi et al., AAAI 2020).

The mapping (one dialogue = one workflow instance; ``wf`` = the dialogue id, ``inst`` =
its index in the file, ``t`` = the turn index, ``task`` = the service, ``tool`` =
``Service__Intent``, ``proto`` = ``SGD``, ``agent`` = ``user`` or ``system``; every event's
``detail.turn`` is its turn):

* **approval**: a SYSTEM frame with a ``CONFIRM`` or ``OFFER`` action for service S,
  answered in the *next* USER turn by a frame of S with an ``AFFIRM`` action while the
  user's active intent I of S is transactional, is an approval of I: an ``approve``
  event at the user's turn. A ``NEGATE`` there is a ``deny`` (``reason`` ``declined``).
  (``OFFER_INTENT`` / ``AFFIRM_INTENT`` choose an intent; they approve nothing.)
* **invocation**: an approval (or denial) opens an invocation of I (``invoke`` then one
  ``collect`` per slot, required slots in schema order first, then the optional ones
  alphabetically) unless one is already open; the slots are the parameters of the
  service call the approval leads to (the next call of I in the dialogue), else the
  slots of I that the user's dialogue state holds. A ``service_call`` of I in a SYSTEM frame runs
  in the open invocation of I (or opens one, with the call's parameters): ``execute``;
  then ``error`` (``ExecutionError``) and ``abort`` when the frame notifies
  ``NOTIFY_FAILURE``, else ``result``. A result or an abort closes the invocation: the
  next execution of I needs a new AFFIRM, which is what approval per execution means
  and what the real dialogues show.
* each dialogue starts with ``wf_start`` and ends with ``wf_end`` (status succeeded).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sim.calculus.mcp import SGD
from sim.calculus.mcp.dialects import BUILTIN
from sim.calculus.phi import phi_plus
from sim.calculus.sgd import EXECUTION_ERROR, Intent, Service, services_from_json
from sim.conformance.checks import SGD_CHECKS, Report, Verdict, check_trace
from sim.conformance.truth import Truth, tool_facts

PROTO = SGD
APPROVAL_PROMPTS = frozenset(("CONFIRM", "OFFER"))


class DialogueError(ValueError):
    """A dialogues file that is not in the SGD format (names the file and the place)."""


def load_dialogues(path: str | Path) -> list[dict[str, Any]]:
    """The dialogues of an SGD ``dialogues_*.json`` file."""
    from sim.json_input import JsonInputError, read_json

    p = Path(path)
    try:
        data = read_json(p)
    except OSError as exc:
        raise DialogueError(f"{p}: {exc.strerror or exc}") from None
    except JsonInputError as exc:
        where = f"{p}:{exc.line}:{exc.column}"
        raise DialogueError(
            f"{where}: malformed JSON: {exc.message}" if exc.syntax else str(exc)
        ) from None
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise DialogueError(f"{p}: expected a JSON list of dialogues")
    return data


def _expect(ok: bool, where: str, message: str) -> None:
    if not ok:
        raise DialogueError(f"{where}: {message}")


def check_shape(index: int, dialogue: Any) -> None:
    """Raise :class:`DialogueError` naming dialogue, turn, frame and field when ``dialogue``
    is not in the SGD format (the fields the conversion reads, with their JSON types)."""
    where = f"dialogue {index}"
    _expect(isinstance(dialogue, Mapping), where, "not an object")
    wf = dialogue.get("dialogue_id")
    _expect(isinstance(wf, str), where, "dialogue_id must be a string")
    where = f"dialogue {index} ({wf})"
    turns = dialogue.get("turns")
    _expect(isinstance(turns, list), where, "turns must be a list")
    for k, turn in enumerate(turns):
        at = f"{where}, turn {k}"
        _expect(isinstance(turn, Mapping), at, "not an object")
        _expect(isinstance(turn.get("speaker", ""), str), at, "speaker must be a string")
        frames = turn.get("frames")
        _expect(isinstance(frames, list), at, "frames must be a list")
        for j, frame in enumerate(frames):
            fat = f"{at}, frame {j}"
            _expect(isinstance(frame, Mapping), fat, "not an object")
            _expect(isinstance(frame.get("service"), str), fat, "service must be a string")
            actions = frame.get("actions") or []
            _expect(isinstance(actions, list), fat, "actions must be a list")
            for a in actions:
                _expect(isinstance(a, Mapping), fat, "every action must be an object")
            call = frame.get("service_call")
            if call is not None:
                _expect(isinstance(call, Mapping), fat, "service_call must be an object")
                _expect(isinstance(call.get("method"), str), fat, "service_call.method: a string")
                params = call.get("parameters") or {}
                _expect(isinstance(params, Mapping), fat, "service_call.parameters: an object")
            results = frame.get("service_results")
            _expect(results is None or isinstance(results, list), fat, "service_results: a list")
            state = frame.get("state")
            if state is not None:
                _expect(isinstance(state, Mapping), fat, "state must be an object")
                values = state.get("slot_values") or {}
                _expect(isinstance(values, Mapping), fat, "state.slot_values must be an object")


def _intents(services: Iterable[Service]) -> dict[tuple[str, str], Intent]:
    return {(s.name, i.name): i for s in services for i in s.intents}


def _slots(intent: Intent, names: Iterable[str]) -> list[str]:
    given = set(names)
    required = [s.name for s in intent.required if s.name in given]
    rest = sorted(given - set(required))
    return required + rest


class _Converter:
    def __init__(self, intents: Mapping[tuple[str, str], Intent]) -> None:
        self.intents = intents
        self.seq = 0
        self.inv = 0
        self.collected: dict[int, set[str]] = {}  # open invocation → its collected slots
        self.executions = 0
        #: (dialogue id, turn, tool, missing required slot, the execute event)
        self.missing: list[tuple[str, int, str, str, dict[str, Any]]] = []

    def ev(self, t: int, label: str, agent: str, wf: str, inst: int, **kw: Any) -> dict[str, Any]:
        event = {
            "t": float(t),
            "seq": self.seq,
            "rep": 0,
            "label": label,
            "agent": agent,
            "wf": wf,
            "inst": inst,
            "task": kw.get("task"),
            "inv": kw.get("inv"),
            "tool": kw.get("tool"),
            "proto": PROTO if kw.get("tool") else None,
            "detail": {"turn": t, **kw.get("detail", {})},
        }
        self.seq += 1
        return event

    def dialogue(self, index: int, dialogue: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        where = f"dialogue {index}"
        wf = dialogue.get("dialogue_id")
        turns = dialogue.get("turns")
        if not isinstance(wf, str) or not isinstance(turns, list):
            raise DialogueError(f"{where}: needs a string dialogue_id and a list of turns")
        ev = self.ev
        yield ev(0, "wf_start", "user", wf, index)
        calls = self._calls(turns, where)
        open_inv: dict[tuple[str, str], int] = {}
        proposed: dict[str, int] = {}  # service → turn of the system's CONFIRM / OFFER
        for k, turn in enumerate(turns):
            speaker = str(turn.get("speaker", "")).upper()
            frames = turn.get("frames")
            if not isinstance(frames, list):
                raise DialogueError(f"{where} ({wf}), turn {k}: frames must be a list")
            if speaker == "USER":
                for frame in frames:
                    yield from self._user_frame(k, frame, wf, index, proposed, open_inv, calls)
                proposed = {}
            else:
                proposed = {}
                for frame in frames:
                    service = frame.get("service")
                    acts = {a.get("act") for a in frame.get("actions") or ()}
                    if acts & APPROVAL_PROMPTS:
                        proposed[service] = k
                    call = frame.get("service_call")
                    if isinstance(call, dict):
                        yield from self._call(k, frame, call, acts, wf, index, open_inv)
        yield ev(len(turns), "wf_end", "system", wf, index, detail={"status": "succeeded"})

    def _calls(
        self, turns: Sequence[Any], where: str
    ) -> dict[tuple[str, str], list[tuple[int, list[str]]]]:
        """Per (service, intent): the turns of its service calls and their parameters."""
        out: dict[tuple[str, str], list[tuple[int, list[str]]]] = {}
        for k, turn in enumerate(turns):
            for frame in turn.get("frames") or ():
                call = frame.get("service_call")
                if isinstance(call, dict):
                    params = call.get("parameters") or {}
                    key = (frame.get("service"), call.get("method"))
                    out.setdefault(key, []).append((k, sorted(params)))  # type: ignore[arg-type]
        return out

    def _open(
        self,
        k: int,
        agent: str,
        wf: str,
        inst: int,
        service: str,
        intent: Intent,
        slots: Iterable[str],
        open_inv: dict[tuple[str, str], int],
    ) -> Iterator[dict[str, Any]]:
        inv = self.inv
        self.inv += 1
        open_inv[(service, intent.name)] = inv
        slots = list(slots)
        self.collected[inv] = set(slots)
        tool = intent.qualified_name
        yield self.ev(k, "invoke", agent, wf, inst, task=service, inv=inv, tool=tool)
        for slot in _slots(intent, slots):
            detail = {"slot": slot}
            yield self.ev(
                k, "collect", agent, wf, inst, task=service, inv=inv, tool=tool, detail=detail
            )

    def _user_frame(
        self,
        k: int,
        frame: Mapping[str, Any],
        wf: str,
        inst: int,
        proposed: dict[str, int],
        open_inv: dict[tuple[str, str], int],
        calls: Mapping[tuple[str, str], list[tuple[int, list[str]]]],
    ) -> Iterator[dict[str, Any]]:
        service = frame.get("service")
        if not isinstance(service, str) or service not in proposed:
            return
        acts = {a.get("act") for a in frame.get("actions") or ()}
        answer = "approve" if "AFFIRM" in acts else "deny" if "NEGATE" in acts else None
        if answer is None:
            return
        state = frame.get("state") or {}
        intent = self.intents.get((service, str(state.get("active_intent"))))
        if intent is None or not intent.transactional:
            return
        key = (service, intent.name)
        if key not in open_inv:
            later = [params for turn, params in calls.get(key, ()) if turn > k]
            if later and answer == "approve":
                slots = later[0]
            else:  # the user's dialogue state, restricted to the intent's own slots
                own = {s.name for s in (*intent.required, *intent.optional)}
                slots = [s for s in state.get("slot_values") or {} if s in own]
            yield from self._open(k, "user", wf, inst, service, intent, slots, open_inv)
        inv = open_inv[key]
        yield self.ev(
            k,
            answer,
            "user",
            wf,
            inst,
            task=service,
            inv=inv,
            tool=intent.qualified_name,
            detail={
                **({} if answer == "approve" else {"reason": "declined"}),
                "act": "AFFIRM" if answer == "approve" else "NEGATE",
                "answers": proposed[service],
            },
        )
        if answer == "deny":
            del open_inv[key]

    def _call(
        self,
        k: int,
        frame: Mapping[str, Any],
        call: Mapping[str, Any],
        acts: set[Any],
        wf: str,
        inst: int,
        open_inv: dict[tuple[str, str], int],
    ) -> Iterator[dict[str, Any]]:
        service = frame.get("service")
        method = call.get("method")
        intent = self.intents.get((service, method))  # type: ignore[arg-type]
        if intent is None:
            raise DialogueError(
                f"dialogue {inst} ({wf}), turn {k}: service call {service}."
                f"{method} is not in the schema"
            )
        assert isinstance(service, str)
        key = (service, intent.name)
        if key not in open_inv:
            yield from self._open(
                k, "system", wf, inst, service, intent, list(call.get("parameters") or {}), open_inv
            )
        inv = open_inv.pop(key)
        tool = intent.qualified_name

        def step(label: str, detail: dict[str, Any]) -> dict[str, Any]:
            return self.ev(
                k, label, "system", wf, inst, task=service, inv=inv, tool=tool, detail=detail
            )

        execute = step("execute", {"method": method})
        self.executions += 1
        have = self.collected.pop(inv, set())
        for slot in intent.required:
            if slot.name not in have:
                self.missing.append((wf, k, tool, slot.name, execute))
        yield execute
        if "NOTIFY_FAILURE" in acts:
            yield step("error", {"error": EXECUTION_ERROR})
            yield step("abort", {"error": EXECUTION_ERROR})
        else:
            yield step("result", {"results": len(frame.get("service_results") or ())})


def dialogue_events(
    dialogues: Sequence[Mapping[str, Any]], services: Iterable[Service]
) -> Iterator[dict[str, Any]]:
    """The trace events (SPEC §5 dicts) of SGD dialogues, in order."""
    return _events(dialogues, _Converter(_intents(services)))


def _events(dialogues: Sequence[Mapping[str, Any]], conv: _Converter) -> Iterator[dict[str, Any]]:
    for index, dialogue in enumerate(dialogues):
        check_shape(index, dialogue)
        yield from conv.dialogue(index, dialogue)


def load_services(schema: str | Path) -> tuple[Service, ...]:
    """An SGD ``schema.json`` (errors as :class:`DialogueError`)."""
    from sim.json_input import JsonInputError, read_json

    try:
        return services_from_json(read_json(schema))
    except OSError as exc:
        raise DialogueError(f"{schema}: {exc.strerror or exc}") from None
    except JsonInputError as exc:
        raise DialogueError(exc.reported) from None
    except ValueError as exc:
        raise DialogueError(f"{schema}: {exc}") from None


MISSING_SLOT = "missing_slot"
"""The finding of an execution whose invocation lacks a required slot (docs/checks/sgd.md)."""
DIALOGUE_CHECKS: tuple[str, ...] = (*SGD_CHECKS, MISSING_SLOT)
"""What ``check --sgd`` reports: the trace checks that apply to dialogues, and missing_slot."""


def sgd_truth(services: Iterable[Service], source: str = "") -> Truth:
    """The ground truth of SGD services: one tool per intent (``Service__Intent``), replayed on
    the same model as the engine's SGD callers: the ``sgd`` dialect of ``tool_lts`` of the
    intent's Φ⁺ descriptor (``invoke``, any in-order subset of the required slots, optional
    slots at any point of the collecting phase, ``approve`` for a transactional intent)."""
    tools = {}
    for svc in services:
        for intent in svc.intents:
            facts = tool_facts(phi_plus(intent, svc), (EXECUTION_ERROR,))
            tools[intent.qualified_name] = facts.dialects[BUILTIN["sgd"]]
    return Truth(tools, source=source)


def _missing_slot_verdict(conv: _Converter) -> Verdict:
    messages = [
        f"dialogue {wf}, turn {turn}: {tool} executed without its required slot {slot!r}"
        for wf, turn, tool, slot, _ in conv.missing
    ]
    by_workflow: dict[str, int] = {}
    for wf, *_ in conv.missing:
        by_workflow[wf] = by_workflow.get(wf, 0) + 1
    return Verdict(
        MISSING_SLOT,
        conv.executions,
        len(messages),
        messages[0] if messages else "",
        [conv.missing[0][4]] if messages else [],
        more=messages[1:],
        by_workflow=by_workflow,
    )


def check_dialogues(
    dialogues: Sequence[Mapping[str, Any]] | str | Path,
    services: Iterable[Service] | str | Path,
    checks: Iterable[str] | None = None,
) -> Report:
    """Convert SGD dialogues to a trace and run the checks that apply to them
    (``write_approval``, ``lts``, ``recovery``) against the schema's ground truth, and report
    ``missing_slot``: every execution whose invocation lacks a required slot, by dialogue,
    turn and slot (default: all four; ``checks`` may name a subset)."""
    if isinstance(dialogues, (str, Path)):
        source = str(dialogues)
        dialogues = load_dialogues(dialogues)
    else:
        source = "<dialogues>"
    if isinstance(services, (str, Path)):
        schema = str(services)
        services = load_services(services)
    else:
        schema = "<schema>"
    services = tuple(services)
    names = tuple(DIALOGUE_CHECKS if checks is None else checks)
    conv = _Converter(_intents(services))
    try:
        report = check_trace(
            _events(dialogues, conv),
            sgd_truth(services, schema),
            [n for n in names if n != MISSING_SLOT],
        )
    except DialogueError as exc:
        raise DialogueError(f"{source}: {exc}") from None
    if MISSING_SLOT in names:
        report.verdicts.append(_missing_slot_verdict(conv))
    report.source = source
    return report
