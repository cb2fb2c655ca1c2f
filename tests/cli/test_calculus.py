"""``python -m sim lts | bisim | phi | unphi | lint``: output and exit codes (SPEC §7)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from sim.calculus.lts import read_aut
from sim.cli import main

REPO = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def schema_path(shared_data: Path) -> Path:
    return shared_data / "sgd" / "train" / "schema.json"


SCENARIO = textwrap.dedent(
    """\
    name: lts-cli
    duration: 10
    protocols: [MCP, MCP+]
    agents:
      - id: caller
        type: LLM_AGENT
        protocols: {MCP: 1.0, MCP+: 1.0}
      - id: server
        type: TOOL_SERVER
        protocols: {MCP: 1.0, MCP+: 1.0}
        tools: [book]
    links:
      - between: [caller, server]
        latency: {MCP: 0.01, MCP+: 0.01}
    tools:
      - name: book
        description: Books a train ticket from an origin to a destination.
        input_schema: {type: object, required: [date], properties: {date: {type: string}}}
        side_effects: write
        requires_approval: true
        annotations: {readOnlyHint: true}
        failure_modes:
          - {error: ServiceDown, recovery: {retry: 1}}
        errors: {ServiceDown: 0.1}
    workflows:
      - name: w
        initiator: caller
        protocol: MCP+
        arrivals: {times: [0]}
        tasks:
          - {id: b, tool: book}
    """
)


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    return path


def test_lts_prints_the_tool_lts_as_aut(capsys: pytest.CaptureFixture[str], scenario: Path) -> None:
    code, out, _ = run(capsys, "lts", str(scenario), "--tool", "book", "--aut")
    assert code == 0
    lts = read_aut(out)
    assert lts.step(0, "call(book)") is not None
    labels = {t.label for t in lts.transitions}
    assert "approve(book)" in labels and "retry(book)" in labels


def test_lts_follows_the_callers_protocol(
    capsys: pytest.CaptureFixture[str], scenario: Path
) -> None:
    code, out, _ = run(capsys, "lts", str(scenario), "--tool", "book", "--protocol", "MCP")
    assert code == 0
    assert "approval gate: no (mcp_policy=hints, readOnlyHint=True)" in out
    assert "retry(book)" not in out  # failure modes do not travel through MCP
    assert "--error(book,ServiceDown)--> failed:ServiceDown" in out


def test_lts_protocol_sgd_prints_the_sgd_dialect(
    capsys: pytest.CaptureFixture[str], scenario: Path
) -> None:
    """The engine runs ``invoke``/``collect`` for SGD callers; ``lts`` shows that dialect."""
    code, out, _ = run(capsys, "lts", str(scenario), "--tool", "book", "--protocol", "SGD")
    assert code == 0 and "dialect: sgd" in out and "--collect(date)-->" in out
    assert "--invoke(book)-->" in out and "call(book)" not in out and "--tau-->" not in out
    code, out, _ = run(capsys, "lts", str(scenario), "--tool", "book", "--protocol", "MCP")
    assert code == 0 and "dialect: mcp" in out and "--call(book)-->" in out
    assert "invoke(book)" not in out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--tool", "nope"], "no tool 'nope'"),
        (["--tool", "book", "--protocol", "XYZ"], "unknown protocol 'XYZ'"),
    ],
)
def test_lts_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], scenario: Path, args: list[str], words: str
) -> None:
    code, out, err = run(capsys, "lts", str(scenario), *args)
    assert code == 2 and out == ""
    assert words in err and "Traceback" not in err


def test_lts_on_a_broken_scenario_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SCENARIO.replace("duration: 10", "duration: -1"))
    code, _, err = run(capsys, "lts", str(bad), "--tool", "book")
    assert code == 2 and err.startswith("error:") and "Traceback" not in err
    code, _, err = run(capsys, "lts", str(tmp_path / "missing.yaml"), "--tool", "book")
    assert code == 2 and "no such file" in err


def test_bisim_equivalent_and_not(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a = tmp_path / "a.aut"
    b = tmp_path / "b.aut"
    c = tmp_path / "c.aut"
    a.write_text('des (0, 3, 3)\n(0,"a",1)\n(1,"tau",2)\n(2,"b",0)\n')
    b.write_text('des (0, 2, 2)\n(0,"a",1)\n(1,"b",0)\n')
    c.write_text('des (0, 2, 3)\n(0,"a",1)\n(1,"c",2)\n')
    assert run(capsys, "bisim", str(a), str(b))[:2] == (0, "equivalent (weakly bisimilar)\n")
    code, out, _ = run(capsys, "bisim", str(a), str(b), "--strong")
    assert code == 1 and "not strongly bisimilar" in out
    code, out, _ = run(capsys, "bisim", str(a), str(c))
    assert code == 1
    assert "distinguishing trace: a b" in out or "distinguishing trace: a c" in out


def test_bisim_aut_dialects(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``i`` after ``a`` is visible in mCRL2 (default: not equivalent to ``a`` alone) and
    internal in CADP (equivalent); the multi-action ``b|c`` equals ``c|b`` in both."""
    a = tmp_path / "a.aut"
    a.write_text('des (0, 3, 4)\n(0, "a", 1)\n(1, "i", 2)\n(2, "b|c", 3)\n', encoding="utf-8")
    b = tmp_path / "b.aut"
    b.write_text('des (0, 2, 3)\n(0, "a", 1)\n(1, "c|b", 2)\n', encoding="utf-8")
    code, out, _ = run(capsys, "bisim", str(a), str(b))
    assert code == 1 and "distinguishing trace: a b|c" in out  # A must do i first
    assert run(capsys, "bisim", str(a), str(b), "--aut-dialect", "cadp")[0] == 0
    code, _, err = run(capsys, "bisim", str(a), str(b), "--aut-dialect", "ltsmin")
    assert code == 2 and "--aut-dialect" in err
    code, out, _ = run(capsys, "bisim", "--help")
    assert code == 0 and "is a visible action" in " ".join(out.split())


def test_bisim_bad_input_names_the_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = tmp_path / "g.aut"
    good.write_text("des (0, 0, 1)\n")
    bad = tmp_path / "bad.aut"
    bad.write_text('des (0, 1, 2)\n(0,"a" 1)\n')
    code, _, err = run(capsys, "bisim", str(good), str(bad))
    assert code == 2 and f"{bad}: line 2:" in err
    code, _, err = run(capsys, "bisim", str(good), str(tmp_path / "none.aut"))
    assert code == 2 and "no such file" in err


def test_phi_prints_a_spec_valid_tools_list(
    capsys: pytest.CaptureFixture[str], schema_path: Path, shared_data: Path
) -> None:
    import jsonschema

    spec = json.loads((shared_data / "mcp_spec" / "schema-2025-11-25.json").read_text())
    validator = {"$ref": "#/$defs/ListToolsResult", "$defs": spec["$defs"]}
    code, out, _ = run(capsys, "phi", str(schema_path))
    assert code == 0
    plain = json.loads(out)
    jsonschema.validate(plain, validator)
    assert len(plain["tools"]) == 53 and "_meta" not in plain["tools"][0]
    code, out, _ = run(capsys, "phi", str(schema_path), "--plus", "--annotations")
    plus = json.loads(out)
    jsonschema.validate(plus, validator)
    meta = plus["tools"][1]["_meta"]["protomesh/mcp-plus"]
    assert meta["side_effects"] == "write" and meta["requires_approval"] is True
    assert plus["tools"][1]["annotations"]["readOnlyHint"] is False


def test_phi_bad_schema_exits_2_with_the_json_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "schema.json"
    bad.write_text(json.dumps([{"service_name": "X", "description": "d", "slots": 3}]))
    code, out, err = run(capsys, "phi", str(bad))
    assert code == 2 and out == ""
    assert f"{bad}: $[0].slots: expected a list" in err
    bad.write_text("[{")
    code, _, err = run(capsys, "phi", str(bad))
    assert code == 2 and "invalid JSON at line 1" in err


def test_unphi_reports_unknowns(
    capsys: pytest.CaptureFixture[str], schema_path: Path, tmp_path: Path
) -> None:
    run(capsys, "phi", str(schema_path))
    code, out, _ = run(capsys, "phi", str(schema_path))
    tools = tmp_path / "tools.json"
    tools.write_text(out)
    code, out, err = run(capsys, "unphi", str(tools))
    assert code == 0
    services = json.loads(out)
    assert len(services) == 26
    intent = services[0]["intents"][1]
    assert intent["is_transactional"] is None
    assert intent["unknown"] == ["transactional", "failure_modes", "dependencies"]
    assert services[0]["description"] is None
    assert "transactional unknown for 53" in err


def test_unphi_of_phi_plus_recovers_everything(
    capsys: pytest.CaptureFixture[str], schema_path: Path, tmp_path: Path
) -> None:
    code, out, _ = run(capsys, "phi", str(schema_path), "--plus")
    tools = tmp_path / "tools.json"
    tools.write_text(out)
    code, out, err = run(capsys, "unphi", str(tools))
    assert code == 0 and "every intent field recovered" in err
    original: list[dict[str, Any]] = json.loads(schema_path.read_text())
    back = json.loads(out)
    for svc_o, svc_b in zip(original, back, strict=True):
        assert svc_o["intents"] == [
            {k: v for k, v in i.items() if k != "recovered_from"} for i in svc_b["intents"]
        ]
        assert sorted(svc_o["slots"], key=lambda s: s["name"]) == sorted(
            svc_b["slots"], key=lambda s: s["name"]
        )


def test_lint_real_list_exits_1(capsys: pytest.CaptureFixture[str], shared_data: Path) -> None:
    code, out, _ = run(capsys, "lint", str(shared_data / "mcp_tools" / "git.json"))
    assert code == 1
    lines = out.splitlines()
    assert (
        "git_checkout: P1 SemanticCompleteness: field description: 2 entities (switches "
        "branches) < 3: does not say what the tool acts on and why; to clear: description "
        "naming at least 3 entities (an action, its object, a qualifier)"
    ) in lines
    assert lines[-2].startswith(
        "tools/list: P3 FailureModes (note): field failure_modes: plain MCP cannot carry"
    )
    assert lines[-1] == (
        "28 findings in 11 of 12 tools (P1 SemanticCompleteness: 23, P2 WriteApproval: 5), 1 note"
    )


def test_lint_clean_list_exits_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    entry = {
        "name": "delete_user",
        "description": "Permanently deletes a user account and its stored bookings",
        "inputSchema": {
            "type": "object",
            "required": ["user_id"],
            "properties": {
                "user_id": {"type": "string", "description": "Account identifier of the user"}
            },
        },
        "_meta": {
            "protomesh/mcp-plus": {
                "side_effects": "delete",
                "requires_approval": True,
                "failure_modes": [{"error": "NotFound", "recovery": {"abort": True}}],
                "dependencies": [],
                "summary": "Deletes a user account.",
            }
        },
    }
    path = tmp_path / "clean.json"
    path.write_text(json.dumps({"tools": [entry]}))
    assert run(capsys, "lint", str(path)) == (0, "clean: 1 tools, no findings\n", "")
    code, out, _ = run(capsys, "lint", str(path), "--min-entities", "9")
    assert code == 1 and "P1 SemanticCompleteness" in out


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"tools": [{"name": "x"}]}', "$.tools[0].inputSchema: missing"),
        ('{"tool": []}', "$: expected a tools/list result"),
        ("not json", "invalid JSON"),
    ],
)
def test_lint_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, words: str
) -> None:
    path = tmp_path / "t.json"
    path.write_text(content)
    code, out, err = run(capsys, "lint", str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}: ") and words in err
    assert run(capsys, "lint", "--json", str(path)) == (2, "", err)  # the same one line
    assert run(capsys, "lint", str(path), "--theta", "2")[0] == 2
