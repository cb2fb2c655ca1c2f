"""Every located error of a file in one pass (issue 37, item 9): an unknown key in an entry
does not hide the entry's other errors (an unknown agent, tool or fallback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.scenario import ScenarioError, load_scenario

FILE = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "every_section_wrong.yaml"

#: (line, field, the start of the message) of every error the file holds, in file order
EXPECTED = [
    (4, "routers[1]", "must be one of dijkstra"),
    (7, "agents[0].oops", "unknown key 'oops'"),
    (8, "agents[1].tools[0]", "unknown tool 'book_trai'"),
    (10, "links[0].oops", "unknown key 'oops'"),
    (11, "links[1].between[1]", "unknown agent 'tickes'"),
    (16, "tools[0].oops", "unknown key 'oops'"),
    (17, "tools[0].failure_modes[0].recovery.fallback", "unknown fallback tool 'nothere'"),
    (20, "workflows[0].initiator", "unknown agent 'plannr'"),
    (22, "workflows[0].oops", "unknown key 'oops'"),
    (23, "workflows[0].arrivals.oops", "unknown key 'oops'"),
    (24, "workflows[0].tasks[0].tool", "unknown tool 'book_tran'"),
    (24, "workflows[0].tasks[0].oops", "unknown key 'oops'"),
    (26, "failures[0].link[1]", "unknown agent 'tickes'"),
    (26, "failures[0].extra", "unknown key 'extra'"),
    (28, "properties[0].oops", "unknown key 'oops'"),
]


def test_every_error_of_the_file_is_reported_at_once() -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(FILE)
    got = [(d.line, d.field, d.message) for d in caught.value.errors]
    assert [(line, field) for line, field, _ in got] == [(ln, f) for ln, f, _ in EXPECTED]
    for (_, _, message), (_, _, start) in zip(got, EXPECTED, strict=True):
        assert message.startswith(start), message
