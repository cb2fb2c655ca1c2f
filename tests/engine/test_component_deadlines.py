"""Deadlines and the agenda: lazily queued timers and appointments fire when and in the
order ``later`` would fire them."""

from __future__ import annotations

from typing import Any

import simpy
from hypothesis import given
from hypothesis import strategies as st

from sim.engine.clock import Agenda, Deadlines, scheduler

#: a script: at integer times (so events coincide), set a timer (maybe cancelled after
#: ``c`` time units, or never) or schedule another event after a delay
step = st.tuples(
    st.integers(0, 6),  # when the action happens
    st.sampled_from(("timer", "other")),
    st.integers(0, 4),  # other: its delay; timer: when it is cancelled (4: never)
)


def play(script: list[tuple[int, str, int]], lazy: bool, delay: float = 3.0) -> Any:
    """The (time, what) callbacks that did something, and SimPy events processed."""
    env = simpy.Environment()
    later = scheduler(env)
    deadlines = Deadlines(env, delay)
    seen: list[tuple[float, str]] = []
    steps = [0]

    def act(event: Any) -> None:
        i = event._value
        _, kind, arg = script[i]
        if kind == "other":
            later(float(arg), i, lambda e: seen.append((env.now, f"other {e._value}")))
            return
        box = {"cancelled": False}

        def fire(e: Any) -> None:
            if not box["cancelled"]:  # what the caller's handler checks
                seen.append((env.now, f"timer {e._value}"))

        timer = deadlines.set(i, fire) if lazy else None
        if not lazy:
            later(delay, i, fire)
        if arg < 4:

            def cancel(_e: Any) -> None:
                box["cancelled"] = True
                if timer is not None:
                    timer.cancel()

            later(float(arg), None, cancel)

    for i, (at, _, _) in sorted(enumerate(script), key=lambda x: (x[1][0], x[0])):
        later(float(at), i, act)
    while env.peek() != float("inf"):
        env.step()
        steps[0] += 1
    return seen, steps[0]


@given(st.lists(step, max_size=30))
def test_lazy_timers_fire_as_later_would(script: list[tuple[int, str, int]]) -> None:
    eager, eager_steps = play(script, lazy=False)
    lazy, lazy_steps = play(script, lazy=True)
    assert lazy == eager
    assert lazy_steps <= eager_steps


def test_cancelled_timers_cost_no_event() -> None:
    # ten timers of 20 s set at 0..9, each cancelled one second later: only the first is
    # ever queued (and fires as a no-op at 20)
    script = [(i, "timer", 1) for i in range(10)]
    (eager, eager_steps), (lazy, lazy_steps) = play(script, False, 20.0), play(script, True, 20.0)
    assert eager == lazy == []
    assert eager_steps - lazy_steps == 9


def test_a_timer_set_at_the_same_instant_as_another_event_keeps_its_place() -> None:
    # the timer (set at 0, due 3) was numbered before the event scheduled at 1 for 3
    script = [(0, "timer", 4), (0, "timer", 1), (1, "other", 2), (0, "timer", 4)]
    seen, _ = play(script, lazy=True)
    assert seen == [(3.0, "timer 0"), (3.0, "timer 3"), (3.0, "other 2")]
    assert seen == play(script, lazy=False)[0]


#: a script: at integer times, book an appointment or schedule another event after a delay
booking = st.tuples(st.integers(0, 6), st.sampled_from(("agenda", "other")), st.integers(0, 5))


def book(script: list[tuple[int, str, int]], agenda_on: bool) -> Any:
    """The (time, what) callbacks, SimPy events processed and the longest queue a
    callback saw."""
    env = simpy.Environment()
    later = scheduler(env)
    agenda = Agenda(env)
    seen: list[tuple[float, str]] = []
    longest = [0]

    def note(e: Any) -> None:
        seen.append((env.now, e._value))
        longest[0] = max(longest[0], len(env._queue))

    def act(event: Any) -> None:
        i = event._value
        _, kind, delay = script[i]
        if kind == "agenda" and agenda_on:
            agenda.later(float(delay), f"appointment {i}", note)
        else:
            later(float(delay), f"{kind} {i}", note)

    for i, (at, _, _) in sorted(enumerate(script), key=lambda x: (x[1][0], x[0])):
        later(float(at), i, act)
    steps = 0
    while env.peek() != float("inf"):
        env.step()
        steps += 1
    return [(t, what.split()[1]) for t, what in seen], steps, longest[0]


@given(st.lists(booking, max_size=30))
def test_appointments_fire_as_later_would(script: list[tuple[int, str, int]]) -> None:
    (eager, eager_steps, _), (booked, booked_steps, _) = book(script, False), book(script, True)
    assert booked == eager
    assert booked_steps == eager_steps  # no event of its own: one per appointment


def test_an_agenda_keeps_one_event_on_simpys_queue() -> None:
    # ten appointments booked at 0 for 1..10 s: when the first fires the nine others wait
    # in the agenda and only the next one is on SimPy's queue (booked the latest first,
    # each was the earliest when booked, so each is queued: nothing saved)
    early_first = [(0, "agenda", 1 + i) for i in range(10)]
    late_first = [(0, "agenda", 10 - i) for i in range(10)]
    assert book(early_first, True)[0] == book(early_first, False)[0]
    assert (book(early_first, True)[2], book(early_first, False)[2]) == (1, 9)
    assert book(late_first, True)[0] == book(late_first, False)[0]
    assert book(late_first, True)[2] == 9
