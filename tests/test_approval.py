"""Approval-policy plug-ins (SPEC §12): the built-in rule as the default policy, the example
policy deciding per call in a run, and the located errors of a policy that cannot be used."""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sim.admission import parse_scenario
from sim.approval import (
    ApprovalPolicy,
    ApprovalPolicyError,
    DescriptorRule,
    approval,
    make_policy,
)
from sim.calculus.mcp import (
    ALL_FIELDS,
    PROTOCOL_FIELDS,
    ToolView,
    caller_view,
    tool_plus_from_mapping,
)
from sim.cli import main
from sim.engine import ReplicationError, run_replication
from sim.plugins import APPROVAL_GROUP, load_object
from sim.scenario import ScenarioError
from tests.harness.plugin_commands import EXAMPLE, assert_one_error, sim

SCENARIO = EXAMPLE / "approval.yaml"
GATE = "protomesh_detour.approval:FareClassGate"
POLICY_BLOCK = f'  policy:\n    plugin: "{GATE}"\n    options: {{classes: [business]}}\n'
WRITES = {"book_train", "send_ticket"}


def with_policy(block: str) -> str:
    """The example scenario with its ``policy:`` block replaced by ``block``."""
    text = SCENARIO.read_text(encoding="utf-8")
    assert POLICY_BLOCK in text
    return text.replace(POLICY_BLOCK, block)


# --- the default policy is SPEC §2's rule -----------------------------------------------------

WRITE_TOOL = {"name": "book", "side_effects": "write", "requires_approval": True}
MCP = PROTOCOL_FIELDS["MCP"]
A2A = PROTOCOL_FIELDS["A2A"]
ANP = PROTOCOL_FIELDS["ANP"]
NO_APPROVAL_FLAG = ALL_FIELDS - {"requires_approval"}

#: (descriptor, fields the caller learned, mcp_policy) → (asks, reason), as SPEC §2 says
RULE_TABLE: list[tuple[dict[str, Any], frozenset[str], str, bool, str]] = [
    # requires_approval known: it decides, whatever the side effects and the policy
    (WRITE_TOOL, ALL_FIELDS, "never", True, "requires_approval"),
    ({**WRITE_TOOL, "requires_approval": False}, ALL_FIELDS, "always", False, "requires_approval"),
    (WRITE_TOOL, ANP, "never", True, "requires_approval"),
    # else side_effects: ask for write or delete
    (WRITE_TOOL, NO_APPROVAL_FLAG, "never", True, "side_effects=write"),
    (
        {"name": "rm", "side_effects": "delete"},
        NO_APPROVAL_FLAG,
        "never",
        True,
        "side_effects=delete",
    ),
    (
        {"name": "get", "side_effects": "read"},
        NO_APPROVAL_FLAG,
        "always",
        False,
        "side_effects=read",
    ),
    # else mcp_policy: hints (readOnlyHint, absent = MCP default false), never, always
    (
        {**WRITE_TOOL, "annotations": {"readOnlyHint": True}},
        MCP,
        "hints",
        False,
        "mcp_policy=hints, readOnlyHint=True",
    ),
    (
        {**WRITE_TOOL, "annotations": {"readOnlyHint": False}},
        MCP,
        "hints",
        True,
        "mcp_policy=hints, readOnlyHint=False",
    ),
    (WRITE_TOOL, MCP, "hints", True, "mcp_policy=hints, readOnlyHint=False"),
    (WRITE_TOOL, A2A, "hints", True, "mcp_policy=hints, readOnlyHint=False"),
    (WRITE_TOOL, MCP, "never", False, "mcp_policy=never"),
    (
        {**WRITE_TOOL, "annotations": {"readOnlyHint": True}},
        MCP,
        "always",
        True,
        "mcp_policy=always",
    ),
]


@pytest.mark.parametrize(("tool", "fields", "mcp_policy", "asks", "why"), RULE_TABLE)
def test_the_default_policy_is_the_spec_rule(
    tool: dict[str, Any], fields: frozenset[str], mcp_policy: str, asks: bool, why: str
) -> None:
    truth = tool_plus_from_mapping(tool)
    view = caller_view(truth, fields, mcp_policy)
    policy = DescriptorRule(mcp_policy)
    for arguments in ({}, {"class": "business"}, {"class": "economy"}):  # arguments play no part
        decision = approval(truth, view, policy, arguments)
        assert decision.asks is asks
        assert decision.reason == (why if asks else "")
    # the view's own decision (its list line) is the same rule
    assert (view.approval, view.approval_reason) == (asks, why)


def test_the_default_policy_takes_the_scenario_mcp_policy() -> None:
    text = with_policy("").replace("mcp_policy: hints", "mcp_policy: never")
    scenario, _ = parse_scenario(text, "plug.yaml")
    policy = make_policy(scenario.approval)
    assert type(policy) is DescriptorRule and policy.mcp_policy == "never"
    with pytest.raises(ValueError, match=r"hints\|never\|always, not 'sometimes'"):
        DescriptorRule("sometimes")


# --- the example policy, in a run and a compare ----------------------------------------------


def asked_before_executes(trace: Path) -> dict[tuple[str, str], set[bool]]:
    """(workflow, tool) → for each execute, whether an approve since the invocation's
    previous execute preceded it."""
    owner: dict[int, tuple[str, str]] = {}
    pending: dict[int, bool] = {}
    out: dict[tuple[str, str], set[bool]] = {}
    for line in trace.read_text(encoding="utf-8").splitlines():
        ev = json.loads(line)
        inv = ev.get("inv")
        if ev["label"] in ("call", "invoke"):
            owner[inv] = (ev["wf"], ev["tool"])
        elif ev["label"] == "approve":
            pending[inv] = True
        elif ev["label"] == "execute":
            out.setdefault(owner[inv], set()).add(pending.pop(inv, False))
    return out


def gated_invocations(trace: Path) -> dict[tuple[str, str], int]:
    """(workflow, tool) → how many invocations have an approve or deny line."""
    owner: dict[int, tuple[str, str]] = {}
    gated: set[int] = set()
    for line in trace.read_text(encoding="utf-8").splitlines():
        ev = json.loads(line)
        if ev["label"] in ("call", "invoke"):
            owner[ev["inv"]] = (ev["wf"], ev["tool"])
        elif ev["label"] in ("approve", "deny"):
            gated.add(ev["inv"])
    counts: dict[tuple[str, str], int] = {}
    for inv in gated:
        counts[owner[inv]] = counts.get(owner[inv], 0) + 1
    return counts


def test_the_example_policy_asks_only_for_business_fares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))  # as PYTHONPATH; the compare's pool forks
    builtin = tmp_path / "builtin.yaml"
    builtin.write_text(with_policy(""), encoding="utf-8")
    argv = ["run", str(builtin), "--router", "dijkstra", "--replications", "1", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    out = tmp_path / "p"
    argv = ["compare", str(SCENARIO), "--replications", "1", "--jobs", "2", "--no-plots"]
    assert main([*argv, "--quiet", "--out", str(out)]) == 0
    base_trace = tmp_path / "b" / "dijkstra" / "rep-0" / "trace.jsonl"
    plug_trace = out / "dijkstra" / "rep-0" / "trace.jsonl"
    base, plug = asked_before_executes(base_trace), asked_before_executes(plug_trace)
    keys = {(wf, tool) for wf in ("economy", "business") for tool in WRITES}
    assert keys <= base.keys() and keys <= plug.keys()  # every write executed in both runs
    for (wf, tool), asked in base.items():  # built in: every write asked, no read
        assert asked == {tool in WRITES}, (wf, tool)
    for (wf, tool), asked in plug.items():  # the policy: business bookings only
        assert asked == {(wf, tool) == ("business", "book_train")}, (wf, tool)

    # approve/deny lines: the built-in rule gates every write; the policy one pair only
    assert gated_invocations(base_trace).keys() == keys
    assert gated_invocations(plug_trace).keys() == {("business", "book_train")}
    reasons = {
        json.loads(line)["detail"]["reason"]
        for line in plug_trace.read_text(encoding="utf-8").splitlines()
        if '"label":"approve"' in line
    }
    assert reasons == {"class=business, requires_approval"}
    for router in ("dijkstra", "resilient"):
        metrics = json.loads((out / router / "rep-0" / "metrics.json").read_text())
        assert metrics["approvals"]["asked"] > 0 and metrics["writes_without_approval"] > 0
    base_metrics = json.loads((tmp_path / "b" / "dijkstra" / "rep-0" / "metrics.json").read_text())
    assert base_metrics["writes_without_approval"] == 0

    # the checks hold the trace to the ground truth, whatever the policy decided
    capsys.readouterr()
    assert main(["check", str(base_trace), "--scenario", str(builtin)]) == 0
    assert main(["check", str(plug_trace), "--scenario", str(SCENARIO)]) == 1
    said = capsys.readouterr().out
    assert "write_approval" in said and "a write tool, with no approve" in said


# --- policies that cannot be used ------------------------------------------------------------


class NoAsk(ApprovalPolicy):
    """Not a policy: it does not say when to ask."""


class RaisingGate(ApprovalPolicy):
    """A broken plug-in: asking raises."""

    def ask(self, view: ToolView, arguments: Mapping[str, Any]) -> bool:
        raise ZeroDivisionError("oops")


class NonBoolGate(ApprovalPolicy):
    """A broken plug-in: it answers a string."""

    def ask(self, view: ToolView, arguments: Mapping[str, Any]) -> bool:
        return "yes"  # type: ignore[return-value]


class FailingInit(ApprovalPolicy):
    """A broken plug-in: building it raises."""

    def __init__(self, limit: int = 1) -> None:
        raise RuntimeError(f"no licence for {limit}")

    def ask(self, view: ToolView, arguments: Mapping[str, Any]) -> bool:
        return True


@pytest.mark.parametrize(
    ("block", "where", "words"),
    [
        (
            '  policy: {plugin: "no_such_module:Gate"}\n',
            "approval.policy.plugin",
            ["approval policy plug-in 'no_such_module:Gate'", "cannot import 'no_such_module'"],
        ),
        (
            '  policy: {plugin: "protomesh_detour:Detour"}\n',
            "approval.policy.plugin",
            ["is not an approval policy (a subclass of sim.ApprovalPolicy)"],
        ),
        (
            '  policy: {plugin: "tests.test_approval:NoAsk"}\n',
            "approval.policy.plugin",
            ["does not define ask(view, arguments)"],
        ),
        (
            '  policy: {plugin: "protomesh_detour.approval:NoSuchGate"}\n',
            "approval.policy.plugin",
            ["has no attribute 'NoSuchGate'"],
        ),
        (
            f'  policy: {{plugin: "{GATE}", options: {{clases: [business]}}}}\n',
            "approval.policy.plugin",
            ["options do not fit FareClassGate(clases=)", "clases"],
        ),
        (
            "  policy: fare-clas\n",
            "approval.policy.plugin",
            [
                "unknown approval policy 'fare-clas' (did you mean 'fare-class'?)",
                "protomesh.approval",
            ],
        ),
    ],
)
def test_a_policy_that_cannot_be_used_is_a_located_error(
    block: str, where: str, words: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    registered = {"fare-class": GATE}
    monkeypatch.setattr(
        "sim.plugins.installed", lambda group: registered if group == APPROVAL_GROUP else {}
    )
    with pytest.raises(ScenarioError) as info:
        parse_scenario(with_policy(block), "plug.yaml")
    assert_one_error(info, where, words)


def test_validate_exits_2_on_a_policy_that_cannot_be_imported(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(with_policy('  policy: {plugin: "nowhere:Gate"}\n'), encoding="utf-8")
    done = sim("validate", str(path))
    assert done.returncode == 2
    assert f"{path}:" in done.stderr and "approval.policy.plugin" in done.stderr
    assert "cannot import 'nowhere'" in done.stderr and "Traceback" not in done.stderr


def test_an_installed_name_resolves_to_its_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))
    registered = project["project"]["entry-points"][APPROVAL_GROUP]
    assert registered == {"fare-class": GATE} and load_object(GATE).__name__ == "FareClassGate"
    monkeypatch.setattr(
        "sim.plugins.installed", lambda group: registered if group == APPROVAL_GROUP else {}
    )
    block = "  policy: {plugin: fare-class, options: {classes: [first]}}\n"
    scenario, _ = parse_scenario(with_policy(block), "plug.yaml")
    policy = make_policy(scenario.approval)
    assert type(policy).__name__ == "FareClassGate" and policy.name == "fare-class"
    assert policy.classes == frozenset({"first"})  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("cls", "words"),
    [
        (
            "RaisingGate",
            ["ask('check_balance', {'user_id': 'u1'})", "raised ZeroDivisionError: oops"],
        ),
        ("NonBoolGate", ["ask('check_balance', {'user_id': 'u1'})", "returned 'yes', not a bool"]),
        ("FailingInit", ["building it raised RuntimeError: no licence for 1"]),
    ],
)
def test_a_policy_failing_at_run_time_fails_the_replication_naming_it(
    cls: str, words: list[str], tmp_path: Path
) -> None:
    plugin = f"tests.test_approval:{cls}"
    text = with_policy(f'  policy: "{plugin}"\n')
    scenario, _ = parse_scenario(text, "plug.yaml")
    with pytest.raises(ReplicationError) as info:
        run_replication(scenario, "dijkstra", 0, tmp_path)
    cause = info.value.cause
    assert isinstance(cause, ApprovalPolicyError) and cause.policy == plugin
    message = str(info.value)
    assert f"approval policy '{plugin}'" in message
    for word in words:
        assert word in message, message


def test_a_policy_failing_in_a_run_is_a_recorded_failed_replication(tmp_path: Path) -> None:
    path = tmp_path / "bool.yaml"
    path.write_text(with_policy('  policy: "tests.test_approval:NonBoolGate"\n'), encoding="utf-8")
    env_path = f"{Path(__file__).resolve().parents[1]}{os.pathsep}{EXAMPLE}"
    done = sim(
        "run", str(path), "--replications", "1", "--out", str(tmp_path / "out"), path=env_path
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    error = json.loads((tmp_path / "out" / "dijkstra" / "rep-0" / "error.json").read_text())
    assert "approval policy 'tests.test_approval:NonBoolGate'" in error["error"]
    assert "returned 'yes', not a bool" in error["error"]
