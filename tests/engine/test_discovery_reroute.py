"""A discovery re-sent around a suspect (dynamic routers): the view is kept for the path
the reply came over, and the waiting task goes on over it (``sim.engine.discovery``).

On ``two_routes.yaml`` (``a0`` reaches ``srv`` through ``gw`` in MCP+ or through ``tr``
in plain MCP, which loses requires_approval) ``gw`` is down for the first 20 s: the
first ``list`` times out, the caller suspects ``gw`` (for 5 s) and re-sends through
``tr``. Once ``gw`` is back, calls go through it again: they must use the view learned
over ``gw`` (approval asked), not the one ``tr`` gave, which the caller used to file
under the ``gw`` path (its writes then went unapproved).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from sim.engine import run_replication
from sim.scenario import parse_scenario


def rerouted_list() -> str:
    """tests/fixtures/scenarios/two_routes.yaml with gw down for the first 20 s, a quick
    t0 and suspicions of 5 s."""
    path = Path(__file__).resolve().parents[1] / "fixtures/scenarios/two_routes.yaml"
    doc = yaml.safe_load(path.read_text())
    doc.update(name="rerouted-list", seed=3, duration=120, routers=["resilient"])
    doc["routing"] = {"suspect_ttl": 5}
    doc["tools"][0]["service_time"] = {"dist": "constant", "value": 0.2}
    doc["workflows"][0]["timeout"] = 2
    doc["failures"] = [{"node": "gw", "at": 0, "for": 20}]
    return yaml.safe_dump(doc)


def test_a_rerouted_discovery_files_its_view_under_the_path_it_took(tmp_path: Path) -> None:
    scenario, _ = parse_scenario(rerouted_list(), "rerouted-list.yaml")
    run_replication(scenario, "resilient", 0, tmp_path, "protocol")
    events = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    lists = [
        (e["detail"]["host"], tuple(e["detail"]["fields"])) for e in events if e["label"] == "list"
    ]
    timeouts = [
        e for e in events if e["label"] == "timeout" and e["detail"].get("action") == "resend"
    ]
    assert timeouts, "the first list no longer times out"
    # learned over tr first (MCP: no requires_approval), then again over gw once it is back
    assert "requires_approval" not in lists[0][1]
    assert "requires_approval" in lists[-1][1]
    executes = [e for e in events if e["label"] == "execute"]
    over_gw = [e for e in executes if e["proto"] == "MCP+"]  # only gw keeps MCP+ to srv
    over_tr = [e for e in executes if e["proto"] == "MCP"]
    assert over_gw and over_tr, "the run no longer uses both routes"
    assert all(e["detail"]["approved"] for e in over_gw)
    assert not any(e["detail"]["approved"] for e in over_tr)  # the view tr gives: no gate
