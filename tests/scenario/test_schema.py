"""The scenario JSON Schema: described fields, shipped copy in sync, shipped files valid."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml

from sim.scenario import load_scenario_with_warnings
from sim.scenario.schema import scenario_json_schema, scenario_json_schema_text

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_SCHEMA = ROOT / "scenarios" / "protomesh.schema.json"
SHIPPED_SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
SCHEMA_LINE = "# yaml-language-server: $schema=./protomesh.schema.json"
MINIMAL = ROOT / "tests" / "fixtures" / "scenarios" / "minimal.yaml"

#: Fields that are durations (or distributions of durations): their description says so.
DURATIONS = {
    "duration", "translation_delay", "suspect_ttl", "latency", "jitter", "delay", "timeout",
    "service_time", "at", "for", "mtbf", "mttr", "times", "value", "mean", "median", "low",
    "high",
}  # fmt: skip


def properties(node: Any, where: str = "#") -> Iterator[tuple[str, str, Any]]:
    """Every (where, name, schema) of a property, at every level including ``$defs``."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                yield where, name, sub
        for key, sub in node.items():
            if key == "properties" and isinstance(sub, dict):  # a map of names to schemas
                for name, schema in sub.items():
                    yield from properties(schema, f"{where}/properties/{name}")
            elif key not in ("default", "examples", "const", "enum"):
                yield from properties(sub, f"{where}/{key}")
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            yield from properties(sub, f"{where}/{i}")


def test_every_property_has_a_description() -> None:
    found = list(properties(scenario_json_schema()))
    assert len(found) > 80
    missing = [f"{w}/{n}" for w, n, sub in found if not (sub.get("description") or "").strip()]
    assert missing == []


def test_durations_say_seconds() -> None:
    wrong = [
        f"{w}/{n}: {sub['description']}"
        for w, n, sub in properties(scenario_json_schema())
        if n in DURATIONS and "second" not in sub["description"]
    ]
    assert wrong == []


def test_references_keep_their_description() -> None:
    schema = scenario_json_schema()
    latency = schema["$defs"]["ApprovalSpec"]["properties"]["latency"]
    assert latency["$ref"] == "#/$defs/Distribution" and "seconds" in latency["description"]


def test_schema_header_and_aliases() -> None:
    schema = scenario_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"]
    assert "for" in schema["$defs"]["FailureSpec"]["properties"]
    assert "from" in schema["$defs"]["TranslationSpec"]["properties"]
    jsonschema.Draft202012Validator.check_schema(schema)


def test_shipped_schema_is_up_to_date() -> None:
    assert SHIPPED_SCHEMA.read_text(encoding="utf-8") == scenario_json_schema_text(), (
        "scenarios/protomesh.schema.json is out of date with sim/scenario/model.py: "
        "run `make schema` and commit the result"
    )
    assert json.loads(scenario_json_schema_text()) == scenario_json_schema()


def test_there_are_shipped_scenarios() -> None:
    assert SHIPPED_SCENARIOS


@pytest.mark.parametrize("path", SHIPPED_SCENARIOS, ids=lambda p: p.name)
def test_shipped_scenario_names_the_schema(path: Path) -> None:
    assert path.read_text(encoding="utf-8").splitlines()[0] == SCHEMA_LINE


@pytest.mark.parametrize("path", [*SHIPPED_SCENARIOS, MINIMAL], ids=lambda p: p.name)
def test_shipped_scenario_is_valid(path: Path) -> None:
    schema = json.loads(SHIPPED_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)
    _, warnings = load_scenario_with_warnings(path)
    assert warnings == []


def test_schema_rejects_what_the_loader_rejects() -> None:
    schema = scenario_json_schema()
    data = yaml.safe_load(MINIMAL.read_text(encoding="utf-8"))
    data["links"][0]["latncy"] = data["links"][0].pop("latency")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)
