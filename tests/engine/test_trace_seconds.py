"""``seconds(t)``: the trace's time text, byte for byte ``repr(round(t, 6))``."""

from __future__ import annotations

import math

from hypothesis import example, given
from hypothesis import strategies as st

from sim.engine.trace import seconds


def old(t: float) -> str:
    """The formatting the trace used before (the reference)."""
    return repr(round(t, 6))


def fixed_only(t: float) -> str:
    """A plausible wrong version: ``%.6f`` everywhere (no range guard)."""
    text = f"{t:.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def near(x: float, ulps: int) -> float:
    """``x`` moved by ``ulps`` units in the last place (signed)."""
    direction = math.inf if ulps > 0 else -math.inf
    for _ in range(abs(ulps)):
        x = math.nextafter(x, direction)
    return x


#: Six-decimal rounding boundaries (k + 0.5) / 1e6, a few ulps either side.
boundaries = st.builds(
    lambda k, ulps, sign: sign * near((k + 0.5) / 1e6, ulps),
    st.integers(0, 10**22),
    st.integers(-3, 3),
    st.sampled_from((1.0, -1.0)),
)
#: The two ends of the fast range and the powers of ten around them, a few ulps either side.
range_ends = st.builds(
    near,
    st.sampled_from((1e-4, 1e9, 1e-5, 1e-6, 1e-7, 1e15, 1e16, 1e17, 0.5e-6, 1.0, 0.0)),
    st.integers(-4, 4),
)
integral = st.integers(-(10**18), 10**18).map(float)
tiny = st.floats(min_value=-1e-3, max_value=1e-3)
huge = st.floats(min_value=1e8, max_value=1e300) | st.floats(min_value=-1e300, max_value=-1e8)
#: Every magnitude a run can reach, uniformly by exponent.
magnitudes = st.builds(
    lambda m, e: m / 1e16 * 10.0**e, st.integers(10**16, 10**17 - 1), st.integers(-8, 17)
)


@given(st.floats(allow_nan=True, allow_infinity=True))
@example(-0.0)
@example(0.0)
@example(5e-05)
@example(0.0001)
@example(999_999_999.9999995)
@example(1e16)
@example(123.0)
@example(0.1 + 0.2)
def test_any_float_prints_as_before(t: float) -> None:
    assert seconds(t) == old(t)


@given(boundaries | range_ends | integral | tiny | huge | magnitudes)
def test_edges_print_as_before(t: float) -> None:
    assert seconds(t) == old(t)


def test_the_edges_catch_a_formatting_without_the_range_guard() -> None:
    # exponent notation below 1e-4 and from 1e16 on, and 16+ digit values above 1e9
    for t in (5e-05, 1.5e-06, 1e16, 123456789012.1, 1e15 + 0.3):
        assert fixed_only(t) != old(t), t
        assert seconds(t) == old(t)
    assert seconds(-0.0) == "-0.0" and seconds(3.0) == "3.0" and seconds(2.5e-07) == "0.0"
