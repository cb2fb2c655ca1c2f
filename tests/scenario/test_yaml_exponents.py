"""YAML 1.2 (and JSON) read ``1e12`` as a number; PyYAML (YAML 1.1) reads it as a
string. The scenario loader resolves a plain exponent scalar as a float with either
composer (libyaml's and PyYAML's); a quoted one stays a string."""

from __future__ import annotations

from typing import Any

import pytest

from sim.experiments.sweep import parse_set
from sim.scenario.compose import FAST_LOADER, PURE_LOADER, Document, parse_yaml, plain_data

LOADERS = pytest.mark.parametrize("loader", [FAST_LOADER, PURE_LOADER], ids=["fast", "pure"])


def _data(text: str, loader: type[Any]) -> Any:
    doc = Document("f.yaml")
    data = parse_yaml(text, doc, loader)
    assert doc.problems == []
    return data


@LOADERS
@pytest.mark.parametrize(
    ("text", "number"),
    [("1e12", 1e12), ("2E-3", 2e-3), ("-1e+3", -1000.0), ("1.5e3", 1500.0), (".5e1", 5.0)],
)
def test_a_plain_exponent_is_a_float(loader: type[Any], text: str, number: float) -> None:
    value = _data(f"a: {text}\nb: [{text}]\n", loader)
    assert value == {"a": number, "b": [number]}
    assert type(value["a"]) is float


@LOADERS
def test_a_quoted_exponent_stays_a_string(loader: type[Any]) -> None:
    assert _data("a: '1e12'\nb: \"2E-3\"\n", loader) == {"a": "1e12", "b": "2E-3"}


@LOADERS
def test_an_exponent_key_keeps_its_text(loader: type[Any]) -> None:
    assert _data("5e-1: x\n", loader) == {"5e-1": "x"}


@LOADERS
def test_other_scalars_read_as_before(loader: type[Any]) -> None:
    text = "a: [1, 1.5, 1.0e+3, 0x1f, e5, 1e, 1_000, .inf, abc1e3]\n"
    assert _data(text, loader) == {
        "a": [1, 1.5, 1000.0, 31, "e5", "1e", 1000, float("inf"), "abc1e3"]
    }


def test_plain_data_and_set_values_read_exponents() -> None:
    assert plain_data("x-a: 1e3\n") == {"x-a": 1000.0}
    assert parse_set("duration=1e3,'2e3'").values == (1000.0, "2e3")
