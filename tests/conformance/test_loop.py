"""The pass's loop, derived from the checks (a dispatch table of their declared handlers,
gated by their declared gates), gives exactly the verdicts of each check run alone with
its gates off: counts, messages, counterexamples, per workflow counts, on the real
train_booking trace, its mutations and random damage; with another consumer beside the
checks and without; and lazily (no invocation history kept, the pass run again keeping
them when a check that reports them fails), as ``check_trace`` reads a trace file."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator, Mapping, Sized
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.conformance.checks import (
    ALL_CHECKS,
    CHECK_NAMES,
    Check,
    Consumer,
    Context,
    Verdict,
    check_trace,
    run_pass,
)
from sim.conformance.checks.loop import ALWAYS, dispatch
from sim.conformance.events import encode_event, interning_decoder
from sim.conformance.truth import Truth, from_scenario, known_values
from sim.scenario import load_scenario
from sim.vocabulary import LABEL_NAMES

ROOT = Path(__file__).resolve().parents[2]
Events = list[dict[str, Any]]


@pytest.fixture(scope="module")
def truth() -> Truth:
    return from_scenario(load_scenario(ROOT / "scenarios" / "train_booking.yaml"))


class _Seen:
    """A consumer beside the checks: every label, and every instance end."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, bytes]] = []
        self.ended: list[tuple[Any, list[Any]]] = []

    def handlers(self) -> dict[str, Any]:
        return dict.fromkeys(LABEL_NAMES, lambda ev, raw: self.seen.append((ev.seq, raw)))

    def end_instance(self, key: Any, invs: Any) -> None:
        self.ended.append((key, list(invs)))

    def end_trace(self) -> None:
        pass


def _blocks(lines: list[bytes]) -> list[list[bytes]]:
    return [lines[i : i + 97] for i in range(0, len(lines), 97)]


def _together(
    lines: list[bytes], truth: Truth, beside: bool = True, keep: bool = True
) -> tuple[Any, list[Verdict], Any]:
    """The seven checks in one pass (the scenario's names interned, as check_trace)."""
    decode = interning_decoder(known_values(truth))
    while True:  # lazily (keep=False) as check_trace does: again, keeping them, if need be
        ctx = Context()
        checks = [ALL_CHECKS[n](truth, ctx) for n in CHECK_NAMES]
        seen = _Seen()
        consumers: list[Consumer] = [*checks, seen] if beside else [*checks]
        counts = run_pass("t", _blocks(lines), consumers, ctx, decode=decode, keep=keep)
        if counts is not None:
            break
        keep = True
    verdicts = [c.finish(sum(counts.get(lab, 0) for lab in c.labels)) for c in checks]
    return counts, verdicts, (seen.seen, seen.ended)


def _no_gates(self: Check) -> Mapping[str, Sized]:
    return {}


@contextmanager
def _ungated() -> Iterator[None]:
    """Every check's handlers called for every event of their labels."""
    with pytest.MonkeyPatch.context() as mp:
        for kind in ALL_CHECKS.values():
            mp.setattr(kind, "gates", _no_gates)
        yield


def _alone(lines: list[bytes], truth: Truth) -> tuple[Any, list[Verdict], Any]:
    """Each check in a pass of its own, its gates off (the plain decoder); the consumer
    beside them alone too."""
    verdicts = []
    with _ungated():
        for n in CHECK_NAMES:
            ctx = Context()
            check = ALL_CHECKS[n](truth, ctx)
            counts = run_pass("t", _blocks(lines), [check], ctx)
            assert counts is not None
            verdicts.append(check.finish(sum(counts.get(lab, 0) for lab in check.labels)))
    seen = _Seen()
    run_pass("t", _blocks(lines), [seen], Context())
    return counts, verdicts, (seen.seen, seen.ended)


def _same(events: Events, truth: Truth) -> list[Verdict]:
    lines = [encode_event(e) for e in events]
    alone = _alone(lines, truth)
    for beside in (True, False):  # with a consumer beside the checks, and without
        together = _together(lines, truth, beside=beside)
        assert together[0] == alone[0]
        for f, a in zip(together[1], alone[1], strict=True):
            assert f == a, f.name
        if beside:
            assert together[2] == alone[2]
    lazy = _together(lines, truth, beside=False, keep=False)
    assert lazy[0] == alone[0]
    assert lazy[1] == alone[1]  # the same verdicts and counterexamples, without histories
    return together[1]


def test_the_table_holds_each_check_s_declared_handlers_in_order(truth: Truth) -> None:
    ctx = Context()
    checks = [ALL_CHECKS[n](truth, ctx) for n in CHECK_NAMES]
    seen = _Seen()
    table = dispatch([*checks, seen])
    for lab in LABEL_NAMES:
        gated, entry = table[lab]
        handlers = [h for h, _ in entry] if gated else list(entry)
        want = [c.handlers()[lab] for c in checks if lab in c.handlers()]
        assert [getattr(h, "__qualname__", "") for h in handlers[:-1]] == [
            getattr(h, "__qualname__", "") for h in want
        ], lab
        assert len(handlers) == len(want) + 1, lab  # the consumer beside them, last
    gated, entry = table["validate"]  # recovery's on_next waits for an error
    assert gated and [g for _, g in entry if g is not ALWAYS] == [checks[3].pending]  # type: ignore[attr-defined]
    assert table["timeout"][0] is False and len(table["timeout"][1]) == 1  # no check reads it


@pytest.mark.slow  # 9 s; the default suite compares them on damaged traces (below)
def test_together_and_alone_agree_on_each_mutation(
    train_mutations: dict[str, Events], truth: Truth
) -> None:
    for name, events in train_mutations.items():
        verdicts = _same(events, truth)
        assert (sum(v.violations for v in verdicts) == 0) == (name == "none"), name


def _damage(events: Events, rng: random.Random, n: int) -> Events:
    """``n`` random changes: lines dropped, doubled, swapped, relabelled, moved to another
    invocation, tool, message, node or instance; outages inserted; a send's path cut."""
    out: Events = json.loads(json.dumps(events))  # a deep copy, 3x faster than deepcopy
    tools = [*sorted({e["tool"] for e in out if e.get("tool")}), "nope"]
    agents = sorted({e["agent"] for e in out if e.get("agent")})
    for _ in range(n):
        k = rng.randrange(len(out))
        e = out[k]
        kind = rng.randrange(12)
        if kind == 0 and len(out) > 1:
            del out[k]
        elif kind == 1:
            out.insert(k, copy.deepcopy(e))
        elif kind == 2 and k + 1 < len(out):
            out[k], out[k + 1] = out[k + 1], out[k]
        elif kind == 3:
            e["label"] = rng.choice(LABEL_NAMES)
        elif kind == 4 and e.get("inv") is not None:
            e["inv"] += rng.choice((-1, 1))
        elif kind == 5:
            e["tool"] = rng.choice(tools)
        elif kind == 6 and isinstance(e.get("detail"), dict):
            d = e["detail"]
            key = rng.choice(("msg", "from", "to", "proto", "reason", "error"))
            d[key] = rng.choice((None, 0, 1)) if key == "msg" else rng.choice([None, *agents])
        elif kind == 7:
            e["inst"] = rng.choice((0, 1, 2, e.get("inst")))
        elif kind == 8:
            down = rng.choice(("node_down", "node_up"))
            out.insert(k, {"t": e["t"], "label": down, "agent": rng.choice(agents)})
        elif kind == 9:
            link = rng.sample(agents, 2)
            lab = rng.choice(("link_down", "link_up"))
            out.insert(k, {"t": e["t"], "label": lab, "detail": {"link": link}})
        elif kind == 11 and e.get("label") == "send" and isinstance(e.get("detail"), dict):
            path = e["detail"].get("path") or []  # a link skipped, or one node only
            e["detail"]["path"] = path[:1] + path[2:] if len(path) > 2 else [rng.choice(agents)]
        else:
            e["label"] = rng.choice(("error", "retry", "fallback", "abort", "prompt"))
            e.setdefault("detail", {})["error"] = rng.choice(("timeout", "service_down", None))
    for s, e in enumerate(out):
        e["seq"] = s
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(0, 7_000))
def test_together_and_alone_agree_on_damaged_traces(
    train_trace: Events, truth: Truth, seed: int, n: int, start: int
) -> None:
    window = train_trace[start : start + 600]  # six of the pass's blocks of 97 lines
    _same(_damage(window, random.Random(seed), n), truth)


def test_the_scenario_s_names_are_decoded_interned_and_others_plainly(truth: Truth) -> None:
    decode = interning_decoder(known_values(truth))
    line = {"seq": 1, "label": "hop", "agent": "planner", "tool": "fetch_user", "task": "user"}
    line["detail"] = {"from": "planner", "to": "gw1", "proto": "MCP+"}
    ev, again = decode(encode_event(line)), decode(encode_event(line))
    assert ev.agent == "planner" and ev.agent is again.agent and ev.tool is again.tool
    assert ev.task == "user" and ev.task is again.task  # the workflow's task ids too
    with pytest.raises(ValueError, match="task"):
        decode(encode_event({**line, "task": "elsewhere"}))
    assert ev.label is "hop"  # noqa: F632 - the one interned string of the label
    with pytest.raises(ValueError, match="agent"):
        decode(encode_event({**line, "agent": "stranger"}))
    # such a line is read by the plain decoder: the same events, the same verdicts
    odd = [{**line, "seq": 0, "t": 0.0, "agent": "stranger", "detail": {"to": "gw1"}}]
    verdicts = _same(odd, truth)
    assert next(v for v in verdicts if v.name == "route_validity").violations == 1


def test_lazily_no_history_is_kept_and_a_failing_check_stops_the_pass(
    train_mutations: dict[str, Events], truth: Truth
) -> None:
    def lazily(events: Events) -> tuple[dict[str, int] | None, Context, int]:
        ctx = Context()
        lines = [encode_event(e) for e in events]
        blocks = [lines[i : i + 97] for i in range(0, len(lines), 97)]
        read = [0]

        def counted() -> Any:
            for block in blocks:
                read[0] += 1
                yield block

        checks = [ALL_CHECKS[n](truth, ctx) for n in CHECK_NAMES]
        return run_pass("t", counted(), checks, ctx, keep=False), ctx, read[0]

    counts, ctx, read = lazily(train_mutations["none"])
    assert counts is not None and counts["call"] > 0 and ctx.hist == {}
    lines = len(train_mutations["none"])
    assert read == -(-lines // 97)  # every block
    for name in ("drop_approve", "execute_without_validate"):
        stopped, ctx, read = lazily(train_mutations[name])
        assert stopped is None, name  # a check that reports the histories failed
        assert read < -(-lines // 97), name  # at the block it failed in
    # eagerly, or with another consumer, the histories are kept
    ctx = Context()
    eager: list[Consumer] = [*(ALL_CHECKS[n](truth, ctx) for n in CHECK_NAMES), _Seen()]
    trace = [encode_event(e) for e in train_mutations["none"]]
    assert run_pass("t", [trace[:500]], eager, ctx, keep=False) is not None and ctx.hist


def test_check_trace_of_a_file_gives_the_verdicts_of_the_same_lines_read_eagerly(
    train_mutations: dict[str, Events], tmp_path: Path
) -> None:
    scenario = load_scenario(ROOT / "scenarios" / "train_booking.yaml")
    for name in ("none", "drop_approve", "execute_without_validate"):
        lines = [encode_event(e) for e in train_mutations[name]]
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        from_file = check_trace(path, scenario)
        eager = check_trace(iter(lines), scenario, ordered=True)
        assert from_file.verdicts == eager.verdicts, name
        assert from_file.ok == (name == "none")
