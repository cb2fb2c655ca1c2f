"""What ``serve mcp`` and ``export mcp`` give back of real descriptors (issue 14, item 4):
output schemas as given (``$ref`` included) with structuredContent that validates, or a
stated reason; unknown annotation keys and ``_meta`` kept; no ``execution.taskSupport``
(serve implements no tasks); ``export --revision`` valid against either schema;
``server/discover`` for 2026-07-28 clients."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from sim import __version__
from sim.interop.fragments import fragment_from_tools_list
from sim.interop.tools_list import spec_errors
from tests.harness.raw_session import RawSession
from tests.harness.warm_sim import warm_sim

REPO = Path(__file__).resolve().parents[2]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}
VENDOR_TOOL = {
    "name": "tag_photo",
    "title": "Tag a photo",
    "description": "Adds a tag to a photo in the album.",
    "inputSchema": {"type": "object", "properties": {"tag": {"type": "string"}}},
    "annotations": {"readOnlyHint": True, "x-vendorHint": "cheap"},
    "execution": {"taskSupport": "required"},
    "_meta": {"com.example/owner": "albums"},
}
PATTERNED = {
    "name": "serial",
    "description": "Returns the album's serial number.",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
    "outputSchema": {
        "type": "object",
        "required": ["serial"],
        "properties": {"serial": {"type": "string", "pattern": "^[0-9]{6}$"}},
    },
}


def scenario_of(tools: dict[str, Any], tmp_path: Path, name: str) -> Path:
    fragment = fragment_from_tools_list(tools, name=name, agent=name, source="a test")
    path = tmp_path / f"{name}.yaml"
    path.write_text(fragment.text, encoding="utf-8")
    return path


def session(path: Path, requests: list[dict[str, Any]], legacy: bool = True) -> list[Any]:
    """Answers to ``requests`` over a raw stdio session (after initialize if ``legacy``)."""
    raw = RawSession([*warm_sim(), "serve", "mcp", str(path)])
    answers = []
    try:
        if legacy:
            init = {"protocolVersion": "2025-11-25", "capabilities": {}}
            init["clientInfo"] = {"name": "raw", "version": "1"}
            raw.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
            raw.receive()
            raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i, (method, params) in enumerate(requests, start=1):
            raw.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
            answers.append(raw.receive())
    finally:
        assert raw.close() == 0
    return answers


def test_ref_output_schema_is_served_as_given_with_valid_structured_content(
    shared_data: Path, tmp_path: Path
) -> None:
    real = json.loads((shared_data / "mcp_tools" / "time.json").read_text(encoding="utf-8"))
    path = scenario_of(real, tmp_path, "time")
    args = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/Zurich"}
    listed, called = session(
        path, [("tools/list", {}), ("tools/call", {"name": "convert_time", "arguments": args})]
    )
    given = {t["name"]: t for t in real["tools"]}
    served = {t["name"]: t for t in listed["result"]["tools"]}
    schema = given["convert_time"]["outputSchema"]
    assert "$ref" in json.dumps(schema)
    assert served["convert_time"]["outputSchema"] == schema
    result = called["result"]
    assert result["isError"] is False
    assert list(Draft202012Validator(schema).iter_errors(result["structuredContent"])) == []


def test_unknown_keys_kept_task_support_not_served(
    tmp_path: Path, mcp_spec_2025: dict[str, Any]
) -> None:
    path = scenario_of({"tools": [VENDOR_TOOL, PATTERNED]}, tmp_path, "album")
    listed, failed = session(
        path, [("tools/list", {}), ("tools/call", {"name": "serial", "arguments": {}})]
    )
    assert spec_errors(listed["result"], mcp_spec_2025) == []
    tag, serial = listed["result"]["tools"]
    assert tag["annotations"] == {"readOnlyHint": True, "x-vendorHint": "cheap"}
    assert tag["_meta"]["com.example/owner"] == "albums"
    assert tag["title"] == "Tag a photo"
    assert "execution" not in tag  # absent = taskSupport forbidden: no tasks here
    assert serial["outputSchema"] == PATTERNED["outputSchema"]  # served, never dropped
    text = failed["result"]["content"][0]["text"]
    assert failed["result"]["isError"] is True
    assert text.startswith("OutputUnavailable: serial: outputSchema: no simple instance")
    assert "does not match '^[0-9]{6}$'" in text
    from sim.interop.server import build_server
    from sim.interop.tools_list import read_extension
    from sim.scenario import load_scenario

    _, sim_state = build_server(load_scenario(path), read_extension(path))
    assert (
        "tag_photo: execution.taskSupport 'required' not served: serve does not "
        "implement tasks (absent = forbidden)"
    ) in sim_state.notes
    assert any(
        n.startswith("serial: outputSchema served as given, but no simple instance")
        for n in sim_state.notes
    )


def test_server_discover_and_a_stateless_list(tmp_path: Path, shared_data: Path) -> None:
    spec = json.loads((shared_data / "mcp_spec" / "schema-2026-07-28.json").read_text("utf-8"))
    train = REPO / "scenarios" / "train_booking.yaml"
    discovered, listed = session(
        train,
        [("server/discover", {"_meta": MODERN_META}), ("tools/list", {"_meta": MODERN_META})],
        legacy=False,
    )
    result = discovered["result"]
    assert spec_errors(result, spec, "DiscoverResult") == []
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"] == __version__
    assert result["ttlMs"] == 60000 and result["cacheScope"] == "public"
    assert spec_errors(listed["result"], spec, "ListToolsResult") == []
    assert listed["result"]["resultType"] == "complete"


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_export_writes_either_revision(revision: str, tmp_path: Path, shared_data: Path) -> None:
    spec = json.loads((shared_data / "mcp_spec" / f"schema-{revision}.json").read_text("utf-8"))
    from sim.cli import main

    for scenario in sorted((REPO / "scenarios").glob("*.yaml")):
        out = tmp_path / f"{scenario.stem}.json"
        argv = ["export", "mcp", str(scenario), "--out", str(out), "--revision", revision]
        assert main(argv) == 0
        data = json.loads(out.read_text(encoding="utf-8"))
        assert spec_errors(data, spec) == [], scenario.name
        assert ("ttlMs" in data) is (revision == "2026-07-28")
    other = "2026-07-28" if revision == "2025-11-25" else "2025-11-25"
    wrong = json.loads((shared_data / "mcp_spec" / f"schema-{other}.json").read_text("utf-8"))
    if revision == "2025-11-25":  # a 2025-11-25 result lacks what 2026-07-28 requires
        assert any("'ttlMs' is a required property" in e for e in spec_errors(data, wrong))


@pytest.fixture(scope="module")
def mcp_spec_2025(shared_data: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (shared_data / "mcp_spec" / "schema-2025-11-25.json").read_text(encoding="utf-8")
    )
    return data
