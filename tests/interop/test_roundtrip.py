"""Fidelity of ``import mcp`` (issue 14, item 4): every shipped scenario served and imported
back gives the tools ``export mcp`` gives, field for field, with its protocols, errors and
service times; what the SDK's models would drop (unknown annotation keys, unknown fields,
other ``_meta`` keys) survives; the legacy MCP+ key is still read."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sim.calculus.mcp import MCP_PLUS_META, MCP_PLUS_META_LEGACY
from sim.cli import main
from sim.interop.errors import InteropError
from sim.interop.fragments import imported_tools
from sim.interop.tools_list import scenario_tools_list
from sim.scenario import load_scenario, parse_scenario
from tests.harness.mcp_http import http_server

REPO = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parents[1] / "mcp_servers"
SHIPPED = sorted(p for p in (REPO / "scenarios").glob("*.yaml"))


def exported(path: Path) -> dict[str, Any]:
    """``export mcp`` of a scenario file (its tools/list result)."""
    from sim.interop.tools_list import read_extension

    return scenario_tools_list(load_scenario(path), read_extension(path)).data


def export_of_fragment(text: str, tmp_path: Path) -> tuple[Any, dict[str, Any]]:
    """The fragment parsed (it must validate) and ``export mcp`` of it."""
    path = tmp_path / "fragment.yaml"
    path.write_text(text, encoding="utf-8")
    scenario, _ = parse_scenario(text, str(path))
    return scenario, exported(path)


def assert_comes_back(path: Path, text: str, tmp_path: Path) -> None:
    """The fragment ``text`` imported from a server of ``path`` validates and gives back the
    tools ``export mcp`` gives, field for field and in order, with the scenario's protocols,
    errors and service times, nothing guessed."""
    scenario, back = export_of_fragment(text, tmp_path)
    original = load_scenario(path)
    assert back["tools"] == exported(path)["tools"]
    assert [p.name for p in scenario.protocols] == [p.name for p in original.protocols]
    by_name = {t.name: t for t in scenario.tools}
    for tool in original.tools:
        assert by_name[tool.name].errors == tool.errors
        assert by_name[tool.name].service_time == tool.service_time
    assert "# unknown:" not in text


def imported(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The fragment ``import mcp ARGV`` writes (exit 0 asserted)."""
    capsys.readouterr()
    code = main(["import", "mcp", "--timeout", "60", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _shipped_case(path: Path) -> Any:
    """train_booking (both revisions) in the default suite; every other shipped scenario
    (one server start each, large_mesh the longest) is slow: run by make bench and .ci/run."""
    marks = () if path.stem == "train_booking" else (pytest.mark.slow,)
    return pytest.param(path, id=path.stem, marks=marks)


@pytest.mark.parametrize("path", [_shipped_case(p) for p in SHIPPED])
def test_every_shipped_scenario_comes_back_through_serve_http_and_import(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``import mcp URL`` against ``serve mcp --http`` (2026-07-28 negotiated; for
    train_booking also the 2025-11-25 handshake on the same server)."""
    revisions = ["auto", "2025-11-25"] if path.stem == "train_booking" else ["auto"]
    with http_server(path) as url:
        for revision in revisions:
            text = imported(["--revision", revision, url], capsys)
            spoken = "2026-07-28" if revision == "auto" else revision
            assert f"Streamable HTTP, protocol {spoken}," in text
            assert_comes_back(path, text, tmp_path)


def test_train_booking_comes_back_through_serve_stdio_and_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = REPO / "scenarios" / "train_booking.yaml"
    text = imported(["--", sys.executable, "-m", "sim", "serve", "mcp", str(path)], capsys)
    assert "stdio, protocol 2026-07-28," in text
    assert_comes_back(path, text, tmp_path)


def test_export_carries_simulation_under_the_mcp_plus_key() -> None:
    tools = {t["name"]: t for t in exported(REPO / "scenarios" / "train_booking.yaml")["tools"]}
    plus = tools["book_train"]["_meta"][MCP_PLUS_META]
    assert plus["service_time"] == {"dist": "exponential", "mean": 0.2}
    assert plus["errors"] == {"ServiceDown": 0.02, "NotFound": 0.01}
    assert plus["protocols"] == ["MCP", "MCP+", "A2A"]
    assert MCP_PLUS_META_LEGACY not in tools["book_train"]["_meta"]
    # the default service time is not written; no errors, no key
    cached = tools["use_cached_data"]["_meta"][MCP_PLUS_META]
    assert cached["service_time"] == {"dist": "constant", "value": 0.01}
    assert "errors" not in cached


def test_the_key_follows_the_naming_rule() -> None:
    """MCP ``_meta`` keys: an optional prefix ending in ``/``, then a name that begins and
    ends with an alphanumeric character (the old ``protomesh/mcp+`` ends with ``+``)."""
    import re

    rule = re.compile(
        r"^(?:[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z](?:[A-Za-z0-9-]*"
        r"[A-Za-z0-9])?)*/)?[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$"
    )
    assert rule.match(MCP_PLUS_META)
    assert not rule.match(MCP_PLUS_META_LEGACY)


def test_the_legacy_key_is_read_and_the_new_one_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plus = {"side_effects": "delete", "requires_approval": True, "x-note": "kept"}
    entry = {
        "name": "purge",
        "description": "Deletes every record of a customer.",
        "inputSchema": {"type": "object"},
        "_meta": {MCP_PLUS_META_LEGACY: plus},
    }
    (tmp_path / "old.json").write_text(json.dumps({"tools": [entry]}), encoding="utf-8")
    out = tmp_path / "old.yaml"
    assert main(["import", "tools", str(tmp_path / "old.json"), "--out", str(out)]) == 0
    scenario, _ = parse_scenario(out.read_text(encoding="utf-8"), str(out))
    assert scenario.tools[0].side_effects.value == "delete"
    assert scenario.tools[0].requires_approval is True
    assert main(["export", "mcp", str(out)]) == 0
    written = json.loads(capsys.readouterr().out)["tools"][0]["_meta"]
    assert list(written) == [MCP_PLUS_META]
    assert written[MCP_PLUS_META]["x-note"] == "kept"  # an unknown key of the object survives
    assert written[MCP_PLUS_META]["side_effects"] == "delete"


@pytest.mark.parametrize(
    ("plus", "needle"),
    [
        ({"service_time": {"dist": "normal"}}, "$.tools[0]._meta.protomesh/mcp-plus.service_time"),
        ({"errors": {"Down": 1.5}}, "$.tools[0]._meta.protomesh/mcp-plus.errors.Down"),
        ({"errors": {"A": 0.6, "B": 0.6}}, "error probabilities sum to 1.2"),
        ({"protocols": "MCP"}, "$.tools[0]._meta.protomesh/mcp-plus.protocols: expected a list"),
        ({"protocols": [{"fields": []}]}, "$.tools[0]._meta.protomesh/mcp-plus.protocols[0].name"),
    ],
)
def test_bad_carried_values_are_located(plus: dict[str, Any], needle: str) -> None:
    entry = {"name": "t", "inputSchema": {"type": "object"}, "_meta": {MCP_PLUS_META: plus}}
    with pytest.raises(InteropError) as info:
        imported_tools({"tools": [entry]})
    assert needle in str(info.value)


@pytest.mark.parametrize("revision", ["auto", "2025-11-25"])
def test_what_the_sdk_models_drop_survives_import(
    revision: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A legacy server (it answers ``server/discover`` with -32601, so ``auto`` falls back to
    ``initialize``) whose tools carry an unknown annotation key, an unknown field, another
    ``_meta`` key and MCP+ metadata under the legacy key: all of it comes back from export."""
    out = tmp_path / "vendor.yaml"
    server = [sys.executable, str(SERVERS / "raw_server.py"), "vendor"]
    code = main(["import", "mcp", "--revision", revision, "--out", str(out), "--", *server])
    _, err = capsys.readouterr()
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert "protocol 2025-11-25" in text
    assert main(["export", "mcp", str(out)]) == 0
    tools = {t["name"]: t for t in json.loads(capsys.readouterr().out)["tools"]}
    lookup = tools["lookup_order"]
    assert lookup["annotations"] == {"readOnlyHint": True, "x-vendorHint": {"tier": "gold"}}
    assert lookup["x-futureField"] == [1, 2]
    assert lookup["title"] == "Look up an order"
    assert lookup["_meta"] == {"example.com/trace": "abc"}  # guessed fields are not invented
    cancel = tools["cancel_order"]["_meta"][MCP_PLUS_META]
    assert cancel["side_effects"] == "delete" and cancel["requires_approval"] is True
    assert cancel["failure_modes"] == [{"error": "Shipped", "recovery": {"abort": True}}]
    assert yaml.safe_load(text)["protocols"] == ["MCP", "MCP+"]
