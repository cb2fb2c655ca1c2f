"""No code branches on a protocol's or a dialect's name (issue 34, item 3): behaviour is
asked of the protocol's :class:`~sim.calculus.mcp.dialects.Dialect`, and which real transport
carries it live (and so which OpenTelemetry conventions its spans follow) of its declared
wire (:meth:`~sim.scenario.model.ProtocolSpec.transport`). No exception is left; one would be
named here with its reason."""

from __future__ import annotations

import re

from tests.harness.paths import REPO

NAMES = r"(?:MCP\+?|SGD|A2A|ANP|mcp|sgd|a2a)"
#: a name compared with ``==``/``!=``/``in`` on either side, or a dialect looked up and
#: compared (``dialects.get(rho) == ...``)
COMPARISON = re.compile(
    rf"""(?:==|!=)\s*(?:["']{NAMES}["']|\bSGD\b|\bMCP\b)"""
    rf"""|["']{NAMES}["']\s*(?:==|!=)"""
    rf"""|\bin\s*[(\[{{]\s*["']{NAMES}["']\s*,"""
    r"""|dialects?\(?\)?\.get\(.*\)\s*(?:==|!=)"""
)
#: where a name is compared on purpose: file → why (none: the live wire and the OpenTelemetry
#: conventions were the last, issue 34 item 3)
ALLOWED: dict[str, str] = {}


def name_comparisons(text: str) -> list[int]:
    """The line numbers of ``text`` that compare a protocol's or dialect's name."""
    return [n for n, line in enumerate(text.splitlines(), 1) if COMPARISON.search(line)]


def test_the_pattern_finds_each_form_of_comparison() -> None:
    bad = [
        'if dialects.get(self.rho) == "sgd":',
        "if task.rho == SGD:",
        "sgd = rho != 'SGD'",
        'if "a2a" == name:',
        'if proto in ("MCP", "MCP+"):',
        "if scn.dialects().get(wf.rho_of(task)) != other:",
    ]
    good = ["if dialect.collects:", 'label = "call" if x else "invoke"', 'name = "sgd"']
    assert name_comparisons("\n".join(bad)) == list(range(1, len(bad) + 1))
    assert name_comparisons("\n".join(good)) == []


def test_no_module_of_sim_compares_a_protocol_or_dialect_name() -> None:
    found = []
    for path in sorted((REPO / "sim").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel in ALLOWED:
            continue
        found += [f"{rel}:{n}" for n in name_comparisons(path.read_text(encoding="utf-8"))]
    assert found == []
    for rel in ALLOWED:  # an exception that no longer compares is taken out
        assert name_comparisons((REPO / rel).read_text(encoding="utf-8")), rel
