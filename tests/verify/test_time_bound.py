"""Issue 38 item 12: ``verify --max-seconds`` bounds the searches' time. A spent budget
stops every search undecided (exit 3, the SPEC §11 JSON unchanged in shape), asked
before each search and every 1,024 states; no assertion on the clock (the budget is
spent before the first search starts, or ``give_up`` counts its calls)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.cli import main
from sim.scenario import load_scenario
from sim.verify import decide, selected
from sim.verify.verdicts import GAVE_UP

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "scenarios" / "train_booking.yaml"


def test_a_spent_budget_makes_every_search_undecided_exit_3(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["verify", str(TRAIN), "--property", "write_approval", "--property", "lts"]
    assert main([*argv, "--max-seconds", "1e-9", "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert [(p["name"], p["verdict"]) for p in report["properties"]] == [
        ("write_approval", "undecided"),
        ("lts", "undecided"),
    ]
    assert {tuple(p) for p in report["properties"]} == {
        (
            *("name", "verdict", "engine", "states", "transitions", "counterexample"),
            *("searched_states", "searched_transitions"),
        )
    }
    assert main([*argv, "--max-seconds", "1e-9"]) == 3
    assert GAVE_UP in capsys.readouterr().out


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_budget_that_is_not_a_positive_number_is_bad_input(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", str(TRAIN), "--max-seconds", value]) == 2
    assert "--max-seconds: must be a positive number of seconds" in capsys.readouterr().err


def test_give_up_stops_a_search_at_the_first_1024_states() -> None:
    sc = load_scenario(TRAIN)
    props = selected(sc, [], ["write_approval"])
    (whole,) = decide(sc, "book", "dijkstra", props).properties
    assert whole.verdict == "holds" and whole.states > 1024  # it needs longer than the bound
    asked: list[int] = []

    def second_time() -> bool:  # no at the start, yes at the first check inside
        asked.append(1)
        return len(asked) > 1

    (cut,) = decide(sc, "book", "dijkstra", props, give_up=second_time).properties
    assert (cut.verdict, cut.states, len(asked)) == ("undecided", 1024, 2)
    assert cut.note == f"partial-order reduction; {GAVE_UP}"
