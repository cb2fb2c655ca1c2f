"""The router registry (sim.mesh.registry): a name the scenario or the built-in list
knows is known without listing the installed packages' entry points (a scan of every
installed distribution, at each ``run`` and ``compare``); any other name is looked up
among them, and an unknown one is named with the known ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim import plugins
from sim.mesh.registry import unknown_router
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_a_built_in_or_declared_router_is_known_without_the_installed_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scenario = load_scenario(ROOT / "scenarios" / "gateway_failover.yaml")
    listed: list[str] = []

    def installed(group: str) -> dict[str, str]:
        listed.append(group)
        return {"elsewhere": "some.package:Router"}

    monkeypatch.setattr(plugins, "installed", installed)
    for name in (*plugins.BUILTIN_ROUTERS, *scenario.router_names):
        assert unknown_router(name, scenario) is None
    assert listed == []
    assert unknown_router("elsewhere", scenario) is None and listed == [plugins.ROUTER_GROUP]
    problem = unknown_router("dijkstar", scenario)
    assert problem is not None and "did you mean 'dijkstra'" in problem and "elsewhere" in problem
