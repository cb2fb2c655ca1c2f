"""The scenario format as JSON Schema, for editors (``python -m sim schema``).

Built from the pydantic models of :mod:`sim.scenario.model`, so the schema that
editors check against and the loader always agree; a ``faults:`` entry is one branch
per kind of :data:`~sim.scenario.model.faults.FAULT_KINDS`. The shipped copy lives in
``scenarios/protomesh.schema.json``; ``make schema`` regenerates it.
"""

from __future__ import annotations

import json
from typing import Any

from sim.scenario.model import FAULT_KINDS, Scenario

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://protomesh.dev/schemas/protomesh.schema.json"


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scenario file."""
    body = Scenario.model_json_schema(by_alias=True)
    _fault_kinds(body["$defs"])
    schema: dict[str, Any] = {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        "title": "protomesh scenario",
    }
    schema.update((k, v) for k, v in body.items() if k != "title")
    # Top-level `x-...` keys are free (YAML anchors, imported metadata): the loader ignores them.
    schema["patternProperties"] = {
        "^x-": {"description": "Extension key, ignored by protomesh (anchors, notes, metadata)."}
    }
    return schema


def scenario_json_schema_text() -> str:
    """:func:`scenario_json_schema` as deterministic, indented JSON text ending in a newline."""
    return json.dumps(scenario_json_schema(), indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def _fault_kinds(defs: dict[str, Any]) -> None:
    """``FaultSpec`` (a ``faults:`` entry) as one ``anyOf`` branch per fault kind, each
    kind's model added to ``defs``."""
    branches = []
    for spec in FAULT_KINDS.values():
        own = spec.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
        defs.update(own.pop("$defs", {}))
        defs[spec.__name__] = own
        branches.append({"$ref": f"#/$defs/{spec.__name__}"})
    defs["FaultSpec"] = {"description": "A fault: {kind, ...} of one kind.", "anyOf": branches}
