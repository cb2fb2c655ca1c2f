"""An imported fragment validates on its own (docs/interop.md, "A fragment is a complete
minimal scenario"): a tool name the scenario cannot hold (a space, a comma, parentheses,
a double quote: it appears in trace labels) is refused at import, one line naming where
it came from, exit 2, instead of a fragment that ``validate`` then rejects."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sim.cli import main
from tests.harness.paths import REPO

SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("spaced")

    @server.tool(name="get weather", description="Tells the weather in a city.")
    def weather(city: str) -> str:
        return "sunny"

    server.run()
    """
)


def _card(skill_id: str) -> dict[str, object]:
    return {
        "name": "Weather Desk",
        "description": "Tells the weather.",
        "version": "1.0",
        "supportedInterfaces": [
            {
                "url": "http://127.0.0.1:9/a2a",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
        "capabilities": {},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [
            {"id": skill_id, "name": "Forecast", "description": "A forecast.", "tags": ["weather"]}
        ],
    }


@pytest.mark.parametrize("name", ["get weather", "f(x)", 'say"hi"', "a,b"])
def test_a_saved_tools_list_with_an_unsafe_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    listing = tmp_path / "tools.json"
    tool = {"name": name, "description": "x", "inputSchema": {"type": "object"}}
    listing.write_text(json.dumps({"tools": [{**tool, "name": "ok"}, tool]}))
    out = tmp_path / "fragment.yaml"
    assert main(["import", "tools", str(listing), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {listing}: $.tools[1].name: tool name {name!r} cannot ")
    assert not out.exists()


def _import_card(tmp_path: Path, skill: str) -> tuple[int, Path, Path]:
    """``import a2a`` of a card whose one skill has the id ``skill``: (exit, card, out)."""
    card = tmp_path / "card.json"
    card.write_text(json.dumps(_card(skill)))
    out = tmp_path / "fragment.yaml"
    return main(["import", "a2a", str(card), "--out", str(out)]), card, out


def test_a_card_with_an_unsafe_skill_id_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, card, out = _import_card(tmp_path, "Forecast Now!")
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"error: {card}: skills[0].id: tool name 'Forecast Now!' cannot ")
    assert not out.exists()


def test_a_safe_card_still_imports_and_validates(tmp_path: Path) -> None:
    code, _, out = _import_card(tmp_path, "forecast-now")
    assert code == 0
    assert main(["validate", str(out)]) == 0


def test_a_live_server_with_an_unsafe_tool_name_is_refused(tmp_path: Path) -> None:
    server = tmp_path / "spaced.py"
    server.write_text(SERVER)
    out = tmp_path / "fragment.yaml"
    argv = [sys.executable, "-m", "sim", "import", "mcp", "--out", str(out), "--timeout", "30"]
    done = subprocess.run(
        [*argv, "--", sys.executable, str(server)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "tools[0].name: tool name 'get weather' cannot " in done.stderr
    assert not out.exists()
