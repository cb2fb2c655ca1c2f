"""The generated mesh of the engine benchmarks (:mod:`benchmarks.bench_engine`).

:func:`scale_scenario`: ``gateways`` gateways speaking MCP, MCP+
and A2A on a connected random graph (a random spanning tree plus random extra links,
average degree about 6); ``callers`` LLM agents speaking MCP+ (or MCP for one in
five), each linked to two gateways; the rest tool servers speaking MCP+ or MCP, each
linked to one gateway and hosting one of ``tools`` tools (so each tool has several
hosts). Every caller runs its own workflow of 4 tasks (two in
parallel, then two in sequence) on random tools, Poisson arrivals sized to give
``instances`` instances in ``duration`` seconds. A quarter of the tools are writes
with ``requires_approval``; tools fail with ServiceDown 1 % of the time and declare
Retry(2).
"""

from __future__ import annotations

import random
from typing import Any

from sim.scenario.model import Scenario


def scale_document(
    agents: int = 10_000,
    *,
    gateways: int = 250,
    callers: int = 1_000,
    tools: int = 2_500,
    instances: int = 100_000,
    duration: float = 1_000.0,
    seed: int = 1,
    trace: str = "protocol",
) -> dict[str, Any]:
    """The scenario document (the YAML's data) of a seeded mesh of ``agents`` agents
    running about ``instances`` instances."""
    rng = random.Random(seed)
    servers = agents - gateways - callers
    if servers < 1:
        raise ValueError("agents must exceed gateways + callers")
    agent_specs: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    gw = [f"gw{i}" for i in range(gateways)]
    for g in gw:
        agent_specs.append(
            {"id": g, "type": "GATEWAY", "protocols": {"MCP": 1.0, "MCP+": 1.0, "A2A": 1.0}}
        )
    seen: set[tuple[int, int]] = set()

    def gw_link(a: int, b: int) -> None:
        key = (min(a, b), max(a, b))
        if a == b or key in seen:
            return
        seen.add(key)
        links.append(
            {
                "between": [gw[a], gw[b]],
                "latency": {
                    "MCP+": rng.uniform(0.002, 0.02),
                    "MCP": rng.uniform(0.002, 0.02),
                    "A2A": rng.uniform(0.002, 0.02),
                },
                "jitter": 0.001,
            }
        )

    for i in range(1, gateways):
        gw_link(i, rng.randrange(i))
    while len(seen) < 3 * gateways:
        gw_link(rng.randrange(gateways), rng.randrange(gateways))
    tool_names = [f"tool{k}" for k in range(tools)]
    tool_specs: list[dict[str, Any]] = []
    for k, name in enumerate(tool_names):
        write = k % 4 == 0
        spec: dict[str, Any] = {
            "name": name,
            "description": f"Generated tool {k}.",
            "side_effects": "write" if write else "read",
            "requires_approval": write,
            "annotations": {"readOnlyHint": not write},
            "failure_modes": [{"error": "ServiceDown", "recovery": {"retry": 2}}],
            "service_time": {"dist": "exponential", "mean": 0.05},
            "errors": {"ServiceDown": 0.01},
        }
        tool_specs.append(spec)
    for s in range(servers):
        sid = f"srv{s}"
        proto = "MCP+" if rng.random() < 0.7 else "MCP"
        agent_specs.append(
            {
                "id": sid,
                "type": "TOOL_SERVER",
                "protocols": {proto: 1.0},
                "tools": [tool_names[s % tools]],
                "concurrency": 4,
            }
        )
        links.append(
            {
                "between": [sid, gw[rng.randrange(gateways)]],
                "latency": {proto: rng.uniform(0.001, 0.01)},
            }
        )
    workflows: list[dict[str, Any]] = []
    rate = instances / callers / duration
    for c in range(callers):
        cid = f"agent{c}"
        proto = "MCP" if c % 5 == 4 else "MCP+"
        agent_specs.append({"id": cid, "type": "LLM_AGENT", "protocols": {proto: 1.0}})
        for pick in rng.sample(range(gateways), 2):
            links.append({"between": [cid, gw[pick]], "latency": {proto: rng.uniform(0.001, 0.01)}})
        picks = rng.sample(tool_names, 4)
        workflows.append(
            {
                "name": f"wf{c}",
                "initiator": cid,
                "protocol": proto,
                "arrivals": {"process": "poisson", "rate": rate},
                "timeout": 20,
                "tasks": [
                    {"id": "a", "tool": picks[0]},
                    {"id": "b", "tool": picks[1]},
                    {"id": "c", "tool": picks[2], "after": ["a", "b"]},
                    {"id": "d", "tool": picks[3], "after": ["c"]},
                ],
            }
        )
    return {
        "name": "generated-mesh",
        "seed": seed,
        "duration": duration,
        "trace": trace,
        "protocols": ["MCP", "MCP+", "A2A"],
        "approval": {
            "latency": {"dist": "exponential", "mean": 1.0},
            "grant_probability": 0.98,
        },
        "agents": agent_specs,
        "links": links,
        "tools": tool_specs,
        "workflows": workflows,
    }


def scale_scenario(agents: int = 10_000, **shape: Any) -> Scenario:
    """:func:`scale_document` validated (the same keywords)."""
    return Scenario.model_validate(scale_document(agents, **shape))


def scale_yaml(agents: int, **shape: Any) -> str:
    """:func:`scale_document` as a scenario file, the way a user runs it (``run FILE``)."""
    import yaml

    return yaml.safe_dump(scale_document(agents, **shape), sort_keys=False)


def scale_mesh(agents: int, instances: int) -> Scenario:
    """The scale benchmark's mesh: the defaults of :func:`scale_scenario` at 10,000 agents,
    in proportion at other sizes (every tool has hosts: a quarter as many tools as agents)."""
    return scale_scenario(
        agents, gateways=agents // 40, callers=agents // 10, tools=agents // 4, instances=instances
    )
