"""``import mcp`` against a real server nobody on the team wrote (issue 14, item 6):
``mcp-server-time`` from the Python package registry, installed by the test setup into its
own virtual environment (cached in pytest's cache folder between runs). Skipped, saying why,
when the registry cannot be reached; slow (an install takes about a minute), so it runs in
``make bench`` (``pytest -m 'slow or bench'``), not in ``make test``."""

from __future__ import annotations

import json
import subprocess
import venv
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.interop.client import fetch_tools
from sim.scenario import parse_scenario

pytestmark = pytest.mark.slow

PACKAGE = "mcp-server-time"


@pytest.fixture(scope="session")
def time_server(request: pytest.FixtureRequest) -> list[str]:
    """The command line of ``mcp-server-time`` in its own environment (installed once)."""
    home = Path(request.config.cache.mkdir("mcp-server-time-env"))
    exe = home / "bin" / "mcp-server-time"
    done = home / ".installed"
    if not done.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(home)
        try:
            pip = subprocess.run(
                [str(home / "bin" / "python"), "-m", "pip", "install", "--quiet", PACKAGE],
                capture_output=True,
                text=True,
                timeout=600,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"the package registry did not deliver {PACKAGE} within 600 s")
        if pip.returncode != 0 or not exe.exists():
            last = (pip.stderr.strip().splitlines() or ["(no output)"])[-1]
            pytest.skip(f"the package registry is not reachable ({PACKAGE}: pip: {last})")
        done.write_text(PACKAGE + "\n", encoding="utf-8")
    return [str(exe), "--local-timezone", "Europe/Zurich"]


@pytest.mark.parametrize(("revision", "spoken"), [("auto", "2026-07-28"), ("2025-11-25",) * 2])
def test_the_real_time_server_comes_back_as_it_listed(
    time_server: list[str],
    revision: str,
    spoken: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The fragment validates, says what is unknown, and ``export mcp`` of it gives back the
    server's own ``tools/list`` entries exactly (its ``$ref`` output schema included)."""
    listing = fetch_tools(time_server, timeout=60, revision=revision)  # type: ignore[arg-type]
    assert listing.server_name == "mcp-time" and listing.protocol_version == spoken
    assert [t["name"] for t in listing.tools["tools"]] == ["get_current_time", "convert_time"]
    out = tmp_path / "time.yaml"
    argv = ["import", "mcp", "--revision", revision, "--out", str(out), "--", *time_server]
    assert main(argv) == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    scenario, _ = parse_scenario(text, str(out))
    assert [p.name for p in scenario.protocols] == ["MCP"]
    assert "# unknown: convert_time: side_effects: guessed 'read'" in text
    capsys.readouterr()
    assert main(["export", "mcp", str(out)]) == 0
    back: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert back == listing.tools
    assert "$ref" in json.dumps(back["tools"][1]["outputSchema"])
