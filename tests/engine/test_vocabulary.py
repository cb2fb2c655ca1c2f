"""The engine writes only what the trace vocabulary declares (sim.vocabulary).

Shipped scenarios are run at trace level ``full`` (every label the engine has: failures,
reroutes, fallbacks, SGD collects, skips) and every line is compared with the
vocabulary: the fields and their order, the label, the detail keys, their types, their
order and the required ones, and which fields are null. The SGD dialogue converter's
events are compared too (with its own keys). ``line_problems`` is shown to name each
kind of departure.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sim.engine import run_replication
from sim.scenario import load_scenario
from sim.vocabulary import LABELS, PROTOCOL_LABELS, TRANSPORT_LABELS, line_problems

ROOT = Path(__file__).resolve().parents[2]
#: each shipped scenario, run until its last outage has ended (seconds): the lines after that
#: repeat the kinds already seen (``test_the_runs_cover_the_engine_labels`` guards the cover)
SCENARIOS = {"train_booking": 1000.0, "gateway_failover": 2800.0, "mcp_vs_mcp_plus": 1000.0}
SCENARIOS |= {"travel_mesh": 600.0}


@pytest.fixture(scope="module")
def engine_lines(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    out = tmp_path_factory.mktemp("vocab")
    lines: list[dict[str, object]] = []
    for name, duration in SCENARIOS.items():
        scenario = load_scenario(ROOT / "scenarios" / f"{name}.yaml")
        scenario = scenario.model_copy(update={"duration": duration})
        for router in ("resilient", "semantic"):
            run_replication(scenario, router, 0, out / name / router, "full")
            text = (out / name / router / "trace.jsonl").read_text(encoding="utf-8")
            lines.extend(json.loads(x) for x in text.splitlines())
    return lines


def test_every_engine_line_is_declared(engine_lines: list[dict[str, object]]) -> None:
    problems: Counter[str] = Counter()
    for line in engine_lines:
        problems.update(line_problems(line))
    assert not problems, problems.most_common(10)


def test_the_runs_cover_the_engine_labels(engine_lines: list[dict[str, object]]) -> None:
    seen = Counter(str(x["label"]) for x in engine_lines)
    # the shipped scenarios do not reach these; tests/engine/test_behaviour.py's tiny
    # scenarios do, and its ``run`` checks every line with ``line_problems`` too
    must = set(LABELS) - {"fallback", "prompt", "deny", "link_down", "link_up"}
    must -= {"invoke", "collect", "skip"}
    assert must <= set(seen), sorted(must - set(seen))


def test_every_engine_detail_key_appears(engine_lines: list[dict[str, object]]) -> None:
    emitted: dict[str, set[str]] = {}
    for line in engine_lines:
        detail = line["detail"]
        assert isinstance(detail, dict)
        emitted.setdefault(str(line["label"]), set()).update(detail)
    for label, keys in emitted.items():
        declared = {k.name for k in LABELS[label].keys if k.source == "engine"}
        assert keys <= declared, (label, keys - declared)


def test_dialogue_events_are_declared(shared_data: Path) -> None:
    from sim.conformance.dialogues import dialogue_events, load_dialogues, load_services

    train = shared_data / "sgd" / "train"
    events = list(
        dialogue_events(
            load_dialogues(train / "dialogues_001_first10.json"),
            load_services(train / "schema.json"),
        )
    )
    assert events
    for event in events:
        assert line_problems(event, source="dialogue") == [], event


def test_categories() -> None:
    assert {"send", "hop", "deliver"} == TRANSPORT_LABELS
    assert {"call", "invoke", "collect", "execute", "result", "error"} <= PROTOCOL_LABELS
    assert not PROTOCOL_LABELS & {"wf_start", "list", "send", "timeout", "drop"}


GOOD = {
    "t": 1.5,
    "seq": 3,
    "rep": 0,
    "label": "hop",
    "agent": "a",
    "wf": "w",
    "inst": 1,
    "task": "k",
    "inv": 2,
    "tool": "x",
    "proto": "MCP",
    "detail": {"msg": 4, "from": "a", "proto": "MCP", "to": "b"},
}


def _with(**change: object) -> dict[str, object]:
    line = dict(GOOD)
    for key, value in change.items():
        if key.startswith("detail_"):
            detail = dict(line["detail"])  # type: ignore[call-overload]
            name = key.removeprefix("detail_")
            if value is None:
                del detail[name]
            else:
                detail[name] = value
            line["detail"] = detail
        else:
            line[key] = value
    return line


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (_with(label="hopp"), "label: 'hopp' is not a trace label (docs/reference/trace.md)"),
        (_with(detail_extra=1), "detail.extra: not declared for hop"),
        (_with(detail_msg="4"), "detail.msg: '4' is not of type <class 'int'>"),
        (_with(detail_to=None), "detail.to: required for hop, missing"),
        (_with(inv=None), "inv: null for a hop (scope message)"),
        (_with(seq=True), "seq: True is not of type <class 'int'>"),
        (_with(t=None), "t: missing or null"),
    ],
)
def test_line_problems_name_the_departure(line: dict[str, object], problem: str) -> None:
    assert line_problems(GOOD) == []
    assert problem in line_problems(line)


def test_line_problems_catch_order() -> None:
    line = dict(GOOD)
    line["detail"] = {"msg": 4, "to": "b", "from": "a", "proto": "MCP"}
    assert line_problems(line) == [
        "detail keys ['msg', 'to', 'from', 'proto'] are not in the declared order "
        "['msg', 'from', 'proto', 'to']"
    ]
    moved = {"seq": 3, **{k: v for k, v in GOOD.items() if k != "seq"}}
    assert any(p.startswith("fields ") for p in line_problems(moved))
