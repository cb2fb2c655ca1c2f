"""The loop of the pass: the seven checks' common cases written out in it, every other
consumer called through its handlers.

Calling a handler per event and check cost most of the pass (a Python call is dearer
than the work of most handlers). So each of the seven checks given to the pass (one of
each class, whose handlers are the ones the loop knows) is *fused*: for the labels it
reads, the loop does, with the check's own state, what the handler would do in the case
where that is nothing or a few dictionary operations (a valid hop while everything is
up, a send of a fresh message, a step of an invocation the check has already stepped the
same way, a write after its approve, ...), and calls the handler for everything else
(any violation, any case not known in advance). A handler whose work cannot matter is
not called at all (``recovery`` while no error awaits its strategy, ``route_validity``'s
``send``/``deliver`` while every node is up). The verdicts are those of the handlers
alone (tests/conformance/test_loop.py runs both ways on mutated traces).

The most frequent labels (``hop``, ``send``, ``deliver``, ``call``, ``validate``,
``execute``, ``result``, ``approve``) have a branch of their own, chosen by the label's
one interned string (``is``: no lookup), that does only that label's part of the above,
while no consumer but the fused checks reads the label and, for the transport labels,
every node and link is up, for the protocol ones, no error awaits its strategy (else the
label's branch is off: a sentinel no label is). Every other event takes the general
branch, by label id.

Each line is decoded as the loop reaches it (of a block, only its lines are kept). Within
one event the fused checks come first, then the other consumers in their order; the
consumers share nothing but the invocation histories, which the loop keeps
(:mod:`~sim.conformance.checks.tracking`), unless told not to (see :func:`stream`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sim.conformance.checks.base import Consumer, Context, Handler
from sim.conformance.checks.blocks import disorder, line_number, reread, unknown_label
from sim.conformance.checks.fusion import (
    IS_MESSAGE,
    IS_OPENING,
    IS_PROTOCOL,
    IS_TERMINAL,
    MAY_FLIP,
    OFF,
    OWN_COUNTED,
    WRITTEN,
    Branches,
    State,
    ends_instances,
    split,
)
from sim.conformance.checks.tracking import Invocations
from sim.conformance.events import LABEL_IDS, TraceError, decoder


def stream(
    name: str,
    blocks: Iterable[list[bytes]],
    consumers: Sequence[Consumer],
    ctx: Context,
    ordered: bool,
    fuse: bool = True,
    decode: Callable[[bytes], Any] | None = None,
    keep: bool = True,
) -> list[int] | None:
    """Feed every line of ``blocks`` to ``consumers`` (see the module docstring); the
    number of events per label id. ``ctx.hist`` holds each open invocation's events while
    a consumer reads it (``history = True``), and instances' invocations are tracked
    while one acts at ``wf_end``. ``fuse=False`` calls every handler (the reference);
    ``decode`` replaces :func:`~sim.conformance.events.decoder` (a line it does not read
    is read by that one). ``keep=False``, with the seven checks alone (lts among them):
    no history is kept, an invocation counts as its instance's at its opening only (an
    event of one not open fails lts), and None is returned after the block in which a
    check that reports histories first fails (run it again, keeping them)."""
    fused, rest = split(consumers, fuse)
    history = any(getattr(c, "history", False) for c in consumers)
    track = history or any(ends_instances(c) for c in consumers)
    inline = {id(c) for c in fused.values()}
    handlers: list[list[Handler]] = [[] for _ in LABEL_IDS]  # label id → handlers called
    for c in consumers:
        for lab, h in c.handlers().items():
            if id(c) not in inline or lab not in WRITTEN:
                handlers[LABEL_IDS[lab]].append(h)
    calls = [tuple(hs) for hs in handlers]
    any_calls = any(calls)
    enders = [c.end_instance for c in rest if ends_instances(c)]

    ids = LABEL_IDS
    HOP, SEND, DROP, WF_END = (ids[k] for k in ("hop", "send", "drop", "wf_end"))
    CALL = ids["call"]
    ERROR, APPROVE, EXECUTE, RESULT = (ids[k] for k in ("error", "approve", "execute", "result"))
    is_protocol, is_terminal, is_opening = IS_PROTOCOL, IS_TERMINAL, IS_OPENING
    is_message = IS_MESSAGE

    (wa, ro, ex, rec, lts, cons, rv, wwrite, wapproved, roinst, rrequires, rtargets, xpartners,
     xinst, rpending, rretries, rfallbacks, lstate, lcall, linvoke, copen, cat, rvalid,
     rlinked, rdown, rlinks, rpaths) = State.of(fused)  # fmt: skip
    # lazily (``keep`` False, the seven checks alone): no history; a check reading it fails
    # first where lts does (an event of an invocation not open), and the pass then stops
    watched = [c for c in fused.values() if c.history] if not (keep or rest) and lts else []
    lazy = bool(watched)
    history = history and not lazy
    hist = ctx.hist
    tracked = Invocations(fused, enders, hist, history)
    by_inst, live, remember = tracked.by_inst, tracked.live, tracked.remember
    counts = [0] * len(ids)
    sends = 0  # sends conservation took in the loop (its on_send counts the others)
    # events taken by the labels' own branches (added to counts after the loop)
    n_send = n_deliver = n_call = n_validate = n_execute = n_result = n_approve = 0
    n_wf_start = n_wf_end = 0
    events = 0
    slow_sends = 0  # of those sends, the ones given to conservation's on_send
    branches = Branches(calls, fused)
    end_instance = tracked.end
    quiet = not (rdown or rlinks)  # every node and link up
    paths_on = rv is not None  # route_validity reads the sends' paths
    idle = not (rpending or rretries or rfallbacks)  # no error awaits its strategy
    (s_hop, s_send, s_deliver, s_call, s_validate, s_execute, s_result, s_approve, s_wf_start,
     s_wf_end) = branches.labels(quiet, idle)  # fmt: skip
    VALIDATE = ids["validate"]
    may_flip = MAY_FLIP
    last_seq = -(1 << 63)
    last_t = -float("inf")
    was_enabled = gc.isenabled()
    gc.disable()  # the checks build no reference cycles; collections would only cost
    try:
        base = 0  # lines before the block
        plain = decoder()
        decode = decode or plain
        for block in blocks:
            events += len(block)
            for raw in block:
                try:
                    ev = decode(raw)
                except Exception:
                    ev = reread(name, block, raw, base, plain)
                    if ev is None:  # a blank line
                        events -= 1
                        continue
                # SPEC §5 order: two comparisons per event (t may be None: TypeError)
                seq = ev.seq
                if seq <= last_seq and ordered:
                    where = line_number(block, raw, base)
                    raise TraceError(name, where, disorder("seq", seq, last_seq))
                last_seq = seq
                t = ev.t
                try:
                    if t < last_t and ordered:
                        where = line_number(block, raw, base)
                        raise TraceError(name, where, disorder("t", t, last_t))
                    last_t = t
                except TypeError:
                    pass
                lab = ev.label
                # the labels' own branches, most frequent first (each ends in continue)
                if lab is s_hop:
                    d = ev.detail  # a ``from`` or ``to`` None is in no link, a ``proto`` None
                    a, b = d.from_, d.to
                    try:  # in no link's protocols
                        if d.proto not in rlinked[a][b]:
                            rv.on_hop(ev, raw)  # type: ignore[union-attr]
                    except KeyError:
                        rv.on_hop(ev, raw)  # type: ignore[union-attr]
                    m = d.msg  # conservation's (the stand-in is empty without it)
                    here = cat.get(m, OFF)
                    if here == a:  # it leaves from where it is (OFF equals nothing)
                        cat[m] = b
                    elif here is not OFF:
                        cons.on_hop(ev, raw)  # type: ignore[union-attr]
                    continue  # counted as the events no other count has
                if lab is s_send:
                    d, a = ev.detail, ev.agent
                    m = d.msg
                    if m is None or m in copen:
                        cons.on_send(ev, raw)  # type: ignore[union-attr]
                        slow_sends += 1
                    else:
                        copen[m] = raw
                        cat[m] = a
                    path = d.path
                    if (
                        path
                        and paths_on
                        and (tuple(path) not in rpaths or path[0] != a or path[-1] != d.to)
                    ):
                        rv.on_path(ev, raw)  # type: ignore[union-attr]
                    n_send += 1
                    continue
                if lab is s_deliver:
                    m = ev.detail.msg
                    if cat.get(m, OFF) == ev.agent:
                        del copen[m], cat[m]
                    else:  # not in flight, elsewhere, or no msg (on_end ignores that)
                        cons.on_end(ev, raw)  # type: ignore[union-attr]
                    n_deliver += 1
                    continue
                if lab is s_call:
                    inv = ev.inv
                    if history:
                        hist[inv] = [raw]
                    key = (ev.wf, ev.inst)
                    opened = by_inst.get(key)
                    if opened is None:
                        by_inst[key] = [inv]
                    else:
                        opened.append(inv)
                    tool = ev.tool
                    if inv in lstate:
                        lts.on_open(ev, raw)  # type: ignore[union-attr]
                    else:
                        cfg = lcall.get(tool)
                        if cfg is None:
                            lts.on_open(ev, raw)  # type: ignore[union-attr]
                        else:
                            lstate[inv] = cfg
                    if tool in rtargets:
                        st = roinst.get(key)
                        if st is None or st.deferred:
                            ro.on_call(ev, raw)  # type: ignore[union-attr]
                        else:  # what on_call does when no execute waits for it
                            task = ev.task
                            tools = st.task_tools.get(task)
                            if tools is None:
                                st.task_tools[task] = {tool}
                            else:
                                tools.add(tool)
                            if tool not in st.first_call:
                                st.first_call[tool] = raw
                    n_call += 1
                    continue
                if lab is s_validate:
                    inv = ev.inv
                    if history:
                        remember(ev, raw, False)
                    try:
                        nxt = lstate[inv].row[VALIDATE]
                    except (KeyError, AttributeError):  # not open, or already reported
                        nxt = None
                    if nxt is None:
                        lts.on_step(ev, raw)  # type: ignore[union-attr]
                    else:
                        lstate[inv] = nxt
                    n_validate += 1
                    continue
                if lab is s_execute:
                    inv = ev.inv
                    if history:
                        remember(ev, raw, False)
                    try:
                        nxt = lstate[inv].row[EXECUTE]
                    except (KeyError, AttributeError):
                        nxt = None
                    if nxt is None:
                        lts.on_step(ev, raw)  # type: ignore[union-attr]
                    else:
                        lstate[inv] = nxt
                    tool = ev.tool
                    if tool in wwrite:
                        if inv in wapproved:
                            wapproved.remove(inv)
                        else:
                            wa.on_execute(ev, raw)  # type: ignore[union-attr]
                    if tool in rrequires:
                        st = roinst.get((ev.wf, ev.inst))
                        # all it requires succeeded: nothing to report or defer
                        if st is None or not st.succeeded.issuperset(rrequires[tool]):
                            ro.on_execute(ev, raw)  # type: ignore[union-attr]
                    if tool in xpartners:
                        key = (ev.wf, ev.inst)
                        done = xinst.get(key)
                        if done is None:  # nothing executed yet: nothing excluded
                            xinst[key] = {tool: raw}
                        else:
                            ex.on_execute(ev, raw)  # type: ignore[union-attr]
                    n_execute += 1
                    continue
                if lab is s_result:
                    inv = ev.inv
                    try:
                        nxt = lstate[inv].row[RESULT]
                    except (KeyError, AttributeError):
                        nxt = None
                    if nxt is None:  # its history is read only if a check fails now
                        if history:
                            remember(ev, raw, False)
                        lts.on_step(ev, raw)  # type: ignore[union-attr]
                    else:
                        del lstate[inv]
                    if ro is not None:
                        st = roinst.get((ev.wf, ev.inst))
                        tool = ev.tool
                        if st is None:
                            if tool in rtargets:
                                ro.on_result(ev, raw)
                        else:  # what on_result does on an instance it knows
                            if tool in rtargets:
                                st.succeeded.add(tool)
                            tools = st.task_tools.get(ev.task)
                            if tools:
                                st.succeeded.update(tools)
                    if history:
                        del hist[inv]
                    n_result += 1
                    continue
                if lab is s_approve:
                    inv = ev.inv
                    if history:
                        remember(ev, raw, False)
                    try:
                        nxt = lstate[inv].row[APPROVE]
                    except (KeyError, AttributeError):
                        nxt = None
                    if nxt is None:
                        lts.on_step(ev, raw)  # type: ignore[union-attr]
                    else:
                        lstate[inv] = nxt
                    if ev.tool in wwrite:
                        wapproved.add(inv)
                    n_approve += 1
                    continue
                if lab is s_wf_start:  # no check reads it
                    n_wf_start += 1
                    continue
                if lab is s_wf_end:  # what end_instance does while no error waits
                    key = (ev.wf, ev.inst)
                    invs = by_inst.pop(key, [])
                    if wapproved:
                        wa.end_instance(key, invs)  # type: ignore[union-attr]
                    if roinst:
                        roinst.pop(key, None)
                    if xinst:
                        xinst.pop(key, None)
                    if lstate:
                        lts.end_instance(key, invs)  # type: ignore[union-attr]
                    for end in enders:
                        end(key, invs)
                    if history:
                        for inv in invs:
                            hist.pop(inv, None)
                    n_wf_end += 1
                    continue
                # the general branch: every label, every case
                try:
                    i = ids[lab]
                except KeyError:
                    where = line_number(block, raw, base)
                    raise TraceError(name, where, unknown_label(lab)) from None
                counts[i] += 1
                if i == HOP:
                    if rv is not None:
                        d = ev.detail
                        a = d.from_
                        if a is None:
                            a = ev.agent
                        p = d.proto
                        if p is None:
                            p = ev.proto
                        if rdown or rlinks or (a, d.to, p) not in rvalid:
                            rv.on_hop(ev, raw)
                    if cons is not None:  # its handler: hops come here during outages
                        cons.on_hop(ev, raw)
                elif is_message[i]:
                    if cons is not None:
                        d = ev.detail
                        m = d.msg
                        if i == SEND:
                            if m is None or m in copen:
                                cons.on_send(ev, raw)
                            else:
                                copen[m] = raw
                                cat[m] = ev.agent
                                sends += 1
                        else:  # a drop, or a deliver during an outage
                            cons.on_end(ev, raw)
                    if rv is not None and i == SEND:
                        rv.on_path(ev, raw)
                    if rdown and rv is not None and i != DROP:
                        rv.on_at(ev, raw)
                elif is_protocol[i]:
                    inv = ev.inv
                    if history:
                        remember(ev, raw, is_opening[i])
                    elif track and (is_opening[i] or (not lazy and inv not in live)):
                        if not lazy:  # lazily, an event of one not open fails lts: no use
                            live.add(inv)
                        key = (ev.wf, ev.inst)
                        opened = by_inst.get(key)
                        if opened is None:
                            by_inst[key] = [inv]
                        else:
                            opened.append(inv)
                    if lts is not None:
                        if is_opening[i]:
                            if inv in lstate:
                                lts.on_open(ev, raw)
                            else:
                                cfg = (lcall if i == CALL else linvoke).get(ev.tool)
                                if cfg is None:
                                    lts.on_open(ev, raw)
                                else:
                                    lstate[inv] = cfg
                        else:
                            cfg = lstate.get(inv)
                            nxt = cfg.row[i] if cfg is not None else None
                            if nxt is None:
                                lts.on_step(ev, raw)
                            elif is_terminal[i]:
                                del lstate[inv]
                            else:
                                lstate[inv] = nxt
                    if rec is not None:
                        if i == ERROR:
                            rec.on_error(ev, raw)
                        elif i == CALL:
                            if inv in rpending or (rfallbacks and (ev.wf, ev.inst) in rfallbacks):
                                rec.on_call(ev, raw)
                        elif inv in rpending or (is_terminal[i] and inv in rretries):
                            rec.on_next(ev, raw)
                    if i == EXECUTE:
                        if wa is not None and ev.tool in wwrite:
                            if inv in wapproved:
                                wapproved.remove(inv)
                            else:
                                wa.on_execute(ev, raw)
                        if ro is not None and ev.tool in rrequires:
                            st = roinst.get((ev.wf, ev.inst))
                            # all it requires succeeded: nothing to report or defer
                            if st is None or not st.succeeded.issuperset(rrequires[ev.tool]):
                                ro.on_execute(ev, raw)
                        if ex is not None and ev.tool in xpartners:
                            key = (ev.wf, ev.inst)
                            done = xinst.get(key)
                            if done is None:  # nothing executed yet: nothing excluded
                                xinst[key] = {ev.tool: raw}
                            else:
                                ex.on_execute(ev, raw)
                    elif i == APPROVE:
                        if wa is not None and ev.tool in wwrite:
                            wapproved.add(inv)
                    elif ro is not None:
                        if is_opening[i]:
                            tool = ev.tool
                            if tool in rtargets:
                                st = roinst.get((ev.wf, ev.inst))
                                if st is None or st.deferred:
                                    ro.on_call(ev, raw)
                                else:  # what on_call does when no execute waits for it
                                    task = ev.task
                                    tools = st.task_tools.get(task)
                                    if tools is None:
                                        st.task_tools[task] = {tool}
                                    else:
                                        tools.add(tool)
                                    if tool not in st.first_call:
                                        st.first_call[tool] = raw
                        elif i == RESULT:
                            st = roinst.get((ev.wf, ev.inst))
                            if st is None:
                                if ev.tool in rtargets:
                                    ro.on_result(ev, raw)
                            else:  # what on_result does on an instance it knows
                                if ev.tool in rtargets:
                                    st.succeeded.add(ev.tool)
                                tools = st.task_tools.get(ev.task)
                                if tools:
                                    st.succeeded.update(tools)
                if any_calls:
                    for h in calls[i]:
                        h(ev, raw)
                if is_terminal[i]:
                    if history:
                        del hist[inv]
                    elif track:
                        live.discard(inv)
                elif i == WF_END and track:
                    key = (ev.wf, ev.inst)
                    end_instance(key, by_inst.pop(key, []))
                if may_flip[i] and (
                    (not (rdown or rlinks)) is not quiet
                    or (not (rpending or rretries or rfallbacks)) is not idle
                ):  # a node or link went down or up, an error came or was met
                    quiet = not (rdown or rlinks)
                    idle = not (rpending or rretries or rfallbacks)
                    (s_hop, s_send, s_deliver, s_call, s_validate, s_execute, s_result,
                     s_approve, s_wf_start, s_wf_end) = branches.labels(quiet, idle)  # fmt: skip
            base += len(block)
            if lazy and any(c.violations for c in watched):
                return None  # its counterexample needs the histories: run again keeping them
    finally:
        if was_enabled:
            gc.enable()
        if cons is not None:
            cons.sends += sends + n_send - slow_sends
    own = (n_send, n_deliver, n_call, n_validate, n_execute, n_result, n_approve, n_wf_start,
           n_wf_end)  # fmt: skip
    for lab, n in zip(OWN_COUNTED, own, strict=True):
        counts[ids[lab]] += n
    counts[HOP] = 0
    counts[HOP] = events - sum(counts)  # the hops of both branches
    return counts
