"""Hypothesis strategies: scenarios that validate, drawn over every field the loader accepts."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import strategies as st

PROTOCOLS = ["MCP", "MCP+", "A2A", "ANP", "SGD"]


ERRORS = ["ServiceDown", "NotFound", "AuthError"]


_ID = {"id": {"type": "string"}}


#: Good input schemas, and shapes that once validated but crashed every replication.
INPUT_SCHEMAS: list[Any] = [
    {"type": "object", "required": [], "properties": _ID},
    {"type": "object", "required": ["id"], "properties": _ID},
    {"type": "object", "required": ["id"], "properties": _ID},
    {"type": 8},
    {"type": "object", "properties": ["id"]},
    {"type": "object", "required": 300},
    {"type": "object", "required": ["id", 3]},
]


#: Service times, with parameters at and past the loader's bounds.
SERVICE_TIMES: list[Any] = [
    {"dist": "exponential", "mean": 0.1},
    {"dist": "exponential", "mean": 0.1},
    {"dist": "lognormal", "median": 0.1, "sigma": 10},
    {"dist": "lognormal", "median": 0.1, "sigma": 1000},
    {"dist": "exponential", "mean": 1e12},
    {"dist": "uniform", "low": 0, "high": 1e9},
]


# The strategies whose arguments never change, built once (a strategy built in each drawing
# is validated again each time: a third of the drawing's cost); the drawings are the same.
_PROTOCOL_SETS = st.lists(st.sampled_from(PROTOCOLS), min_size=1, max_size=4, unique=True)


_AGENT_TYPES = st.sampled_from(["LLM_AGENT", "COORDINATOR", "GATEWAY"])


_WEIGHTS = st.sampled_from([0.5, 1.0])


_LATENCIES = st.sampled_from([0.0, 0.01, 0.05])


_JITTERS = st.sampled_from([0.0, 0.005])


_EFFECTS = st.sampled_from(["none", "read", "write", "delete"])


_ERROR_SETS = st.lists(st.sampled_from(ERRORS), max_size=2, unique=True)


#: recoveries of the first tool, and of a later one (which may fall back to the first, t0);
#: each drawn as a fresh dict, as when the list was built in the drawing (no YAML aliases)
_RECOVERIES = [{"retry": 2}, {"abort": True}, {"prompt": "again?"}]


_FIRST_RECOVERY = st.sampled_from(_RECOVERIES).map(dict)


_LATER_RECOVERY = st.sampled_from([*_RECOVERIES, {"fallback": "t0"}]).map(dict)


_RELATIONS = st.sampled_from(["Requires", "ProducesInputFor", "ExclusiveWith"])


_SCHEMAS = st.sampled_from(INPUT_SCHEMAS)


_SERVICE_TIMES = st.sampled_from(SERVICE_TIMES)


_ERROR_RATES = st.sampled_from([0.0, 0.2, 0.5])


_GRANTS = st.sampled_from([0.0, 0.5, 1.0])


_POLICIES = st.sampled_from(["hints", "never", "always"])


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    protocols = draw(_PROTOCOL_SETS)
    n = draw(st.integers(3, 6))
    agents: list[dict[str, Any]] = []
    for i in range(n):
        speaks = draw(st.lists(st.sampled_from(protocols), min_size=1, unique=True))
        agents.append(
            {
                "id": f"a{i}",
                "type": draw(_AGENT_TYPES),
                "protocols": {p: draw(_WEIGHTS) for p in speaks},
                "concurrency": draw(st.integers(1, 3)),
            }
        )
    # a1 is a gateway speaking every protocol: every other agent has a link to it, and
    # random extra links join earlier agents, so most drawings have routes to the server
    agents[1]["type"] = "GATEWAY"
    agents[1]["protocols"] = dict.fromkeys(protocols, 1.0)
    links: list[dict[str, Any]] = []
    for i in range(n):
        if i == 1:
            continue
        ends = [(1, i)]
        if i > 2 and draw(st.booleans()):
            ends.append((draw(st.sampled_from([k for k in range(i) if k != 1])), i))
        for j, k in ends:
            common = [p for p in agents[k]["protocols"] if p in agents[j]["protocols"]]
            if not common:
                continue
            carried = draw(st.lists(st.sampled_from(common), min_size=1, unique=True))
            links.append(
                {
                    "between": [f"a{j}", f"a{k}"],
                    "latency": {p: draw(_LATENCIES) for p in carried},
                    "jitter": draw(_JITTERS),
                }
            )
    names = [f"t{k}" for k in range(draw(st.integers(1, 4)))]
    tools: list[dict[str, Any]] = []
    for k, name in enumerate(names):
        effect = draw(_EFFECTS)
        modes = []
        for error in draw(_ERROR_SETS):
            recovery = draw(_LATER_RECOVERY if k > 0 else _FIRST_RECOVERY)
            modes.append({"error": error, "recovery": recovery})
        deps = []
        if k > 0 and draw(st.booleans()):
            relation = draw(_RELATIONS)
            deps.append({"tool": names[draw(st.integers(0, k - 1))], "relation": relation})
        tools.append(
            {
                "name": name,
                "description": f"Tool {name} does something useful with records.",
                "input_schema": draw(_SCHEMAS),
                "side_effects": effect,
                "requires_approval": effect in ("write", "delete") and draw(st.booleans()),
                "failure_modes": modes,
                "dependencies": deps,
                "service_time": draw(_SERVICE_TIMES),
                "errors": {e: draw(_ERROR_RATES) for e in ERRORS[:2]},
            }
        )
    agents[-1]["tools"] = names
    agents[-1]["type"] = "TOOL_SERVER"
    initiator = agents[0]
    tasks = []
    for k in range(draw(st.integers(1, 4))):
        after = (
            draw(st.lists(st.sampled_from([f"k{m}" for m in range(k)]), unique=True)) if k else []
        )
        task: dict[str, Any] = {"id": f"k{k}", "tool": draw(st.sampled_from(names)), "after": after}
        if draw(st.booleans()):
            task["args"] = {"id": "x"}
        tasks.append(task)
    failures: list[dict[str, Any]] = []
    if links and draw(st.booleans()):
        failures.append(
            {"node": draw(st.sampled_from([a["id"] for a in agents])), "at": 5, "for": 10}
        )
    if links and draw(st.booleans()):
        failures.append({"link": draw(st.sampled_from(links))["between"], "at": 2, "for": 20})
    if draw(st.booleans()):
        failures.append({"random": {"nodes": [f"a{n - 1}"], "mtbf": 20, "mttr": 5}})
    return {
        "name": "fuzz",
        "seed": draw(st.integers(0, 1000)),
        "duration": 40,
        "routers": ["dijkstra", "bfs", "resilient", "semantic"],
        "protocols": protocols,
        "approval": {
            "latency": {"dist": "constant", "value": 0.5},
            "grant_probability": draw(_GRANTS),
            "mcp_policy": draw(_POLICIES),
        },
        "agents": agents,
        "links": links,
        "tools": tools,
        "workflows": [
            {
                "name": "w",
                "initiator": initiator["id"],
                "protocol": draw(st.sampled_from(list(initiator["protocols"]))),
                "arrivals": {"process": "poisson", "rate": 0.5},
                "timeout": 3,
                "tasks": tasks,
            }
        ],
        "failures": failures,
    }


def scenario_text(doc: dict[str, Any]) -> str:
    """``doc`` (a :func:`scenarios` drawing) as the YAML ``yaml.safe_dump(doc,
    sort_keys=False)`` writes, through libyaml's emitter where PyYAML has it: the same
    representer, the same text for these documents (200 drawings compared), in a fourth of
    the time of the pure-Python emitter, which cost about a fifth of the soundness test."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(doc, Dumper=dumper, sort_keys=False)
