"""Where the tests' files are: the repository, the fixtures, the MCP servers the tests start."""

from __future__ import annotations

from pathlib import Path

#: the repository's root (this file is tests/harness/paths.py)
REPO = Path(__file__).resolve().parents[2]
#: the test data: scenarios, golden hashes, the attack corpus
FIXTURES = REPO / "tests" / "fixtures"
#: the MCP servers the tests run as processes
SERVERS = REPO / "tests" / "mcp_servers"
#: the smallest scenario that uses every section (the loader and rule tests break it)
MINIMAL_FILE = FIXTURES / "scenarios" / "minimal.yaml"
