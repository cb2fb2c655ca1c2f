"""The JSON pieces the trace writer builds lines from (sim/engine/trace.py) decode to what
they encode, for any value: ``js`` of any JSON value, ``members`` of any object inside
braces, the owner fragment of any workflow, instance, task, invocation and tool (names
with quotes, backslashes, control and non-ASCII characters), its three constant parts
around the ids, and ``pjs``'s cached text."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine import trace

NAMES = st.text(max_size=8) | st.sampled_from(['"', "\\", "\n", "é", "\u2028", "</script>"])
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=6,
)
IDS = st.none() | st.integers(0, 10**12)
FRAGMENTS = settings(max_examples=40, deadline=None)


def owner(
    wf: str | None, inst: int | None, task: str | None, inv: int | None, tool: str | None
) -> str:
    """The owner fragment of these fields, each name written by ``js`` (None as null)."""
    return trace.owner_fragment(trace.js(wf), inst, trace.js(task), inv, trace.js(tool))


def check_owner_decodes(fragment: Callable[..., str], fields: dict[str, Any]) -> None:
    """``{fragment(**fields)}`` is a JSON object of exactly ``fields``."""
    text = "{" + fragment(**fields) + "}"
    assert json.loads(text) == fields, text


@FRAGMENTS
@given(value=JSON)
def test_js_decodes_to_its_value(value: Any) -> None:
    assert json.loads(trace.js(value)) == value


@FRAGMENTS
@given(obj=st.dictionaries(NAMES, JSON, max_size=4))
def test_members_inside_braces_decode_to_the_object(obj: dict[str, Any]) -> None:
    assert json.loads("{" + trace.members(obj) + "}") == obj


@FRAGMENTS
@given(wf=st.none() | NAMES, inst=IDS, task=st.none() | NAMES, inv=IDS, tool=st.none() | NAMES)
def test_the_owner_fragment_decodes_to_its_fields(
    wf: str | None, inst: int | None, task: str | None, inv: int | None, tool: str | None
) -> None:
    check_owner_decodes(owner, {"wf": wf, "inst": inst, "task": task, "inv": inv, "tool": tool})


@FRAGMENTS
@given(wf=NAMES, inst=st.integers(0, 10**12), task=NAMES, inv=st.integers(0, 10**12), tool=NAMES)
def test_the_owner_parts_around_the_ids_are_the_owner_fragment(
    wf: str, inst: int, task: str, inv: int, tool: str
) -> None:
    head, mid, tail = trace.owner_parts(trace.js(wf), trace.js(task), trace.js(tool))
    assert f"{head}{inst}{mid}{inv}{tail}" == owner(wf, inst, task, inv, tool)


@FRAGMENTS
@given(name=NAMES)
def test_pjs_is_js_cached_or_not(name: str) -> None:
    assert trace.pjs(name) == trace.js(name) == trace.pjs(name)


def test_a_fragment_that_drops_or_misquotes_a_field_is_caught() -> None:
    fields = {"wf": 'say "hi"', "inst": 3, "task": "t", "inv": None, "tool": "x"}
    check_owner_decodes(owner, fields)

    def unquoted(wf: Any, inst: Any, task: Any, inv: Any, tool: Any) -> str:
        return trace.owner_fragment(f'"{wf}"', inst, trace.js(task), inv, trace.js(tool))

    def no_inv(wf: Any, inst: Any, task: Any, inv: Any, tool: Any) -> str:
        return owner(wf, inst, task, inv, tool).replace(',"inv":null', "")

    with pytest.raises(json.JSONDecodeError):
        check_owner_decodes(unquoted, fields)
    with pytest.raises(
        AssertionError, match=r'^\{"wf":"say \\"hi\\"","inst":3,"task":"t","tool":"x"\}'
    ):
        check_owner_decodes(no_inv, fields)
