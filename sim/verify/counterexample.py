"""A path of the untimed model as SPEC §5 trace events (counterexamples, ``check`` input).

The model's events carry label, task, tool, agent, protocol and the details it
decides; rendering numbers what the model leaves out of its states: ``seq``, the
invocation and discovery ids (``inv``, a new one at each ``call``/``invoke``/``list``),
``msg`` ids of translations, attempts, retry numbers and backoffs, a fallback's
``parent``, and the instance's final status (the first failure decides, SPEC §4).
Time is untimed: every event has ``t`` 0.0 (the model has no clock). The detail keys
are written in the order :mod:`sim.vocabulary` declares.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sim.calculus.mcp import backoff
from sim.verify.model import Model
from sim.verify.states import CANCELLED, Event
from sim.vocabulary import LABELS


def _ordered(lab: str, detail: dict[str, Any]) -> dict[str, Any]:
    keys = LABELS[lab].key_names
    return {k: detail[k] for k in keys if k in detail}


def render(model: Model, path: Iterable[Event]) -> list[dict[str, Any]]:
    """The §5 events of ``path`` (the model's event tuples in order)."""
    out: list[dict[str, Any]] = []
    tasks = model.tasks
    wf = model.workflow
    inv_of: dict[int, int] = {}  # task → its current invocation id
    attempts: dict[int, int] = {}  # invocation → attempts so far
    retries: dict[int, int] = {}
    next_id = 0
    msg = 0
    first_failure: tuple[str, str] | None = None
    timeouts = {t.index: _timeout_of(model, t.index) for t in tasks}
    for lab, ti, tool, agent, proto, raw_detail in path:
        detail = dict(raw_detail)
        if lab == "_failed":
            if first_failure is None:
                code = detail["code"]
                first_failure = ("cancelled" if code == CANCELLED else "failed", detail["reason"])
            continue
        task = tasks[ti].id if ti >= 0 else None
        inv: int | None = None
        if lab in ("translate", "list") or (lab == "timeout" and detail.get("kind") == "list"):
            prev = out[-1] if out else None
            if lab != "timeout" and prev and prev["label"] == "translate" and prev["task"] == task:
                inv = prev["inv"]
            else:
                inv = next_id
                next_id += 1
            if lab == "translate":
                msg += 1
                detail["msg"] = msg
            if lab == "timeout":
                detail["attempt"] = 3
        elif lab in ("call", "invoke"):
            depth = detail.pop("depth", 0)
            if depth and ti in inv_of:
                detail["parent"] = inv_of[ti]
            inv = inv_of[ti] = next_id
            next_id += 1
            attempts[inv] = 0
        elif ti >= 0 and lab not in ("skip", "wf_start", "wf_end"):
            inv = inv_of.get(ti)
            assert inv is not None
            if lab == "execute":
                attempts[inv] += 1
                detail["attempt"] = attempts[inv]
                detail["waited"] = 0.0
            elif lab == "timeout":
                if detail.get("action") != "error" and not detail.get("executed"):
                    attempts[inv] += 1
                detail["attempt"] = max(1, attempts[inv])
                detail["after"] = timeouts[ti]
            elif lab in ("result", "error") and "cause" not in detail:
                if lab == "result" or detail.get("error") != "ValidationError":
                    detail["attempt"] = max(1, attempts[inv])
            elif lab == "retry":
                n = retries[inv] = retries.get(inv, 0) + 1
                detail["n"] = n
                detail["backoff"] = backoff(n)
        if lab == "wf_end":
            if "status" not in detail:
                status, reason = first_failure or ("failed", "")
                detail = {"status": status, "reason": reason}
            detail["latency"] = 0.0
            if not detail.get("reason"):
                detail.pop("reason", None)
        if lab == "translate":
            proto = detail.get("from_proto")
        event = {
            "t": 0.0,
            "seq": len(out),
            "rep": 0,
            "label": lab,
            "agent": agent,
            "wf": wf,
            "inst": 0,
            "task": task,
            "inv": inv,
            "tool": tool if lab != "wf_start" and lab != "wf_end" else None,
            "proto": proto if inv is not None else None,
            "detail": _ordered(lab, detail),
        }
        if lab in ("wf_start", "wf_end"):
            event["task"] = None
        if lab == "skip":
            event["inv"] = None
        out.append(event)
    return out


def _timeout_of(model: Model, index: int) -> float:
    wf = next(w for w in model.scenario.workflows if w.name == model.workflow)
    spec = wf.tasks[index]
    return float(spec.timeout if spec.timeout is not None else wf.timeout)


def write_trace(events: Sequence[dict[str, Any]], path: Path) -> None:
    """Write ``events`` as ``trace.jsonl`` lines (SPEC §5), whole or not at all
    (:class:`~sim.experiments.store.StorageError` when it cannot be written)."""
    from sim.atomic import write_atomic

    text = "".join(
        json.dumps(ev, separators=(",", ":"), ensure_ascii=False) + "\n" for ev in events
    )
    write_atomic(path, text)
